// No switch of features, profile, environment, input or workspace reuses
// another configuration's device image (issue 39 items 1-4): each device pass
// has its own place per configuration (what cargo resolved for it), and its
// cache key covers what cargo and rustc say it read. Each case runs the
// program under OMP_TARGET_OFFLOAD=MANDATORY, and the program checks the
// kernel's value against the host's view of the same configuration.
#include <catch2/catch.hpp>

#include <tuple>

#include <fmt/format.h>

#include "cargo_workspace.hpp"
#include "offload_build/util/strings.hpp"
#include "rust_support.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// A file of the kernel crate that no pass compiles: editing it misses the
// cache (the key holds every file of the crate) while cargo finds the device
// pass fresh, the case where the image of another configuration was reused.
void host_only_edit(const fs::path& ws, const std::string& text) { write_file(ws / "kern/NOTES.md", text); }

// factor() times 5 in a build with debug assertions (dev), as both passes see it.
void factor_by_profile(const fs::path& ws) {
  edit_file(ws / "kern/src/lib.rs", "    if cfg!(tripled) {", "    if cfg!(debug_assertions) {\n        f *= 5.0;\n    }\n"
                                                           "    if cfg!(tripled) {");
}

}  // namespace

TEST_CASE("cargo flow: a switch of features never reuses the other feature set's image",
          "[integration][rust][cargo-configs]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-configs"};
  const fs::path ws = factor_workspace(tmp / "ws", "kern = { path = \"../kern\" }",
                                       "\n[features]\nsq = [\"kern/squares\"]\n");
  SECTION("with the cache, after a host-only edit") {
    check_ok(cargo_run(ws, tmp / "cache", {"--features", "sq"}), "x[7]=14 expect=14 OK");
    check_ok(cargo_run(ws, tmp / "cache"), "x[7]=7 expect=7 OK");
    host_only_edit(ws, "one\n");
    check_ok(cargo_run(ws, tmp / "cache", {"--features", "sq"}), "x[7]=14 expect=14 OK");
  }
  SECTION("with --no-cache, no edit at all") {
    const std::vector<std::string> no_cache{"--no-cache"};
    check_ok(cargo_run(ws, tmp / "cache", {"--features", "sq"}, {}, no_cache), "x[7]=14 expect=14 OK");
    check_ok(cargo_run(ws, tmp / "cache", {}, {}, no_cache), "x[7]=7 expect=7 OK");
    check_ok(cargo_run(ws, tmp / "cache", {"--features", "sq"}, {}, no_cache), "x[7]=14 expect=14 OK");
  }
}

TEST_CASE("cargo flow: dev and release images apart, profile overrides and CARGO_PROFILE_* reach the key",
          "[integration][rust][cargo-configs]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-configs"};
  const fs::path ws = factor_workspace(tmp / "ws");
  factor_by_profile(ws);
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=35 expect=35 OK");
  // The workspace root's profile override of the kernel crate: no file of kern changed.
  const std::string root = read_file(ws / "Cargo.toml");
  write_file(ws / "Cargo.toml", root + "\n[profile.dev.package.kern]\ndebug-assertions = false\n");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=7 expect=7 OK");
  write_file(ws / "Cargo.toml", root);
  check_ok(cargo_run(ws, tmp / "cache", {}, {{"CARGO_PROFILE_DEV_DEBUG_ASSERTIONS", "false"}}), "x[7]=7 expect=7 OK");
  check_ok(cargo_run(ws, tmp / "cache", {"--release"}), "x[7]=7 expect=7 OK");
  host_only_edit(ws, "one\n");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=35 expect=35 OK");  // not the release image
}

TEST_CASE("cargo flow: what the kernels read outside the crate's files keys the image: env!, include!, "
          "rerun-if-env-changed, cargo's [env]",
          "[integration][rust][cargo-configs]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-configs"};
  const fs::path ws = factor_workspace(tmp / "ws");
  // factor() reads KSCALE (option_env!) and ../factor.in (include!, outside the crate);
  // kern's build script sets cfg(tripled) when KTRIPLE is set.
  edit_file(ws / "kern/src/lib.rs", "pub const fn factor() -> f64 {\n    let mut f = 1.0;",
            "pub fn factor() -> f64 {\n    let mut f: f64 = include!(\"../../factor.in\");\n"
            "    if let Some(s) = option_env!(\"KSCALE\") {\n        f *= (s.as_bytes()[0] - b'0') as f64;\n    }");
  write_file(ws / "factor.in", "1.0\n");
  write_file(ws / "kern/build.rs", "fn main() {\n    println!(\"cargo::rerun-if-env-changed=KTRIPLE\");\n"
                                   "    if std::env::var_os(\"KTRIPLE\").is_some() {\n"
                                   "        println!(\"cargo::rustc-cfg=tripled\");\n    }\n}\n");
  const Env none{{"KSCALE", std::nullopt}, {"KTRIPLE", std::nullopt}};
  check_ok(cargo_run(ws, tmp / "cache", {}, none), "x[7]=7 expect=7 OK");
  // --explain names what the pass read outside the crates' files (before: "no input changed").
  auto explain_of = [](const std::string& err) {
    for (const auto& line : util::split(err, '\n'))
      if (util::starts_with(line, "offload-build: explain: ") && line.find("device host kern") != std::string::npos)
        return line;
    return std::string();
  };
  auto scaled = cargo_run(ws, tmp / "cache", {}, {{"KSCALE", "2"}, {"KTRIPLE", std::nullopt}}, {"--explain"});
  check_ok(scaled, "x[7]=14 expect=14 OK");
  CHECK_THAT(explain_of(scaled.err), Catch::EndsWith("miss: environment variable changed: KSCALE"));
  write_file(ws / "factor.in", "5.0\n");
  auto outside = cargo_run(ws, tmp / "cache", {}, none, {"--explain"});
  check_ok(outside, "x[7]=35 expect=35 OK");
  CHECK_THAT(explain_of(outside.err), Catch::Contains("changed: factor.in") &&
                                          Catch::Contains("environment variable changed: KSCALE"));
  check_ok(cargo_run(ws, tmp / "cache", {}, {{"KSCALE", std::nullopt}, {"KTRIPLE", "1"}}), "x[7]=105 expect=105 OK");
  fs::create_directories(ws / ".cargo");
  write_file(ws / ".cargo/config.toml", "[env]\nKSCALE = \"3\"\n");
  check_ok(cargo_run(ws, tmp / "cache", {}, none), "x[7]=105 expect=105 OK");
  // Back to the first configuration: the first image, from the cache.
  fs::remove(ws / ".cargo/config.toml");
  write_file(ws / "factor.in", "1.0\n");
  auto r = cargo_run(ws, tmp / "cache", {}, none, {"--explain"});
  check_ok(r, "x[7]=7 expect=7 OK");
  CHECK(device_line(r.err, "host").find("(cached)") != std::string::npos);
}

TEST_CASE("cargo flow: two workspaces sharing CARGO_TARGET_DIR, each with a kernel crate kern, keep their images",
          "[integration][rust][cargo-configs]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-configs"};
  const fs::path one = factor_workspace(tmp / "one", "kern = { path = \"../kern\", features = [\"squares\"] }");
  const fs::path two = factor_workspace(tmp / "two");
  const Env shared{{"CARGO_TARGET_DIR", (tmp / "target").string()}};
  check_ok(cargo_run(one, tmp / "cache", {}, shared), "x[7]=14 expect=14 OK");
  check_ok(cargo_run(two, tmp / "cache", {}, shared), "x[7]=7 expect=7 OK");
  host_only_edit(one, "one\n");
  check_ok(cargo_run(one, tmp / "cache", {}, shared), "x[7]=14 expect=14 OK");
}

namespace {

// `ws` with a second program app2 whose kernel crate kern2 (kernel scale2)
// has the feature on: app prints 7, app2 14.
void second_program(const fs::path& ws) {
  fs::create_directories(ws / "kern2/src");
  fs::create_directories(ws / "app2/src");
  std::string lib = read_file(ws / "kern/src/lib.rs");
  for (size_t at; (at = lib.find("scale(")) != std::string::npos || (at = lib.find("scale,")) != std::string::npos;)
    lib.replace(at, 5, "scale2");
  write_file(ws / "kern2/src/lib.rs", lib);
  std::string toml = read_file(ws / "kern/Cargo.toml");
  toml.replace(toml.find("name = \"kern\""), 13, "name = \"kern2\"");
  write_file(ws / "kern2/Cargo.toml", toml);
  write_file(ws / "app2/Cargo.toml", "[package]\nname = \"app2\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n"
                                     "[dependencies]\nkern2 = { path = \"../kern2\", features = [\"squares\"] }\n");
  write_file(ws / "app2/src/main.rs", "fn main() {\n    println!(\"{}\", kern2::report());\n}\n");
  edit_file(ws / "Cargo.toml", "members = [\"app\", \"kern\"]", "members = [\"app\", \"kern\", \"app2\", \"kern2\"]");
}

// The program `name` cargo built under `target_dir` prints its line.
void runs_ok(const fs::path& target_dir, const std::string& name, const std::string& line) {
  check_ok(run_tool({(target_dir / "x86_64-unknown-linux-gnu/debug" / name).string()}, {}, kMandatory), line);
}

}  // namespace

TEST_CASE("cargo flow: the workspace's programs as cargo selects them (no -p, --bin, -p twice, test --workspace), --target-dir and "
          "--message-format reach every pass",
          "[integration][rust][cargo-configs]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-select"};
  const fs::path ws = factor_workspace(tmp / "ws");
  second_program(ws);
  auto ob = [&](std::vector<std::string> cargo_args) {
    std::vector<std::string> args{"-C", ws.string(), "--cache-dir", (tmp / "cache").string(), "cargo"};
    args.insert(args.end(), cargo_args.begin(), cargo_args.end());
    return run_ob(args, {}, kMandatory);
  };
  // The workspace root without -p: every member, as cargo builds them.
  auto all = ob({"build"});
  INFO(all.err);
  REQUIRE(all.exit_code == 0);
  runs_ok(ws / "target", "app", "x[7]=7 expect=7 OK");
  runs_ok(ws / "target", "app2", "x[7]=14 expect=14 OK");
  check_ok(ob({"run", "--bin", "app2"}), "x[7]=14 expect=14 OK");
  // -p twice, into another target dir, with cargo's short diagnostics.
  auto two = ob({"build", "-p", "app", "-p", "app2", "--target-dir", "out", "--message-format=short"});
  INFO(two.err);
  REQUIRE(two.exit_code == 0);
  runs_ok(ws / "out", "app", "x[7]=7 expect=7 OK");
  runs_ok(ws / "out", "app2", "x[7]=14 expect=14 OK");
  device_dir(ws / "out", "host", "kern2");  // the device passes wrote there too
  // rust-analyzer's --message-format=json: cargo's JSON on stdout, the build as ever.
  auto json = ob({"build", "-p", "app", "--message-format=json"});
  INFO(json.err);
  CHECK(json.exit_code == 0);
  CHECK_THAT(json.out, Catch::Contains("{\"reason\":\"compiler-artifact\"") &&
                           Catch::Contains("{\"reason\":\"build-finished\",\"success\":true}"));
  // `test --workspace`: each program's tests, each launching its own kernel crate's kernel.
  for (const auto& [app, kern, line] : {std::tuple{"app", "kern", "x[7]=7 expect=7 OK"},
                                        std::tuple{"app2", "kern2", "x[7]=14 expect=14 OK"}})
    write_file(ws / app / "src/main.rs",
               fmt::format("fn main() {{\n    println!(\"{{}}\", {0}::report());\n}}\n\n#[cfg(test)]\nmod tests {{\n"
                           "    #[test]\n    fn {1}_kernel_runs() {{\n        assert_eq!({0}::report(), \"{2}\");\n    }}\n}}\n",
                           kern, app, line));
  auto tests = ob({"test", "--workspace"});
  INFO(tests.out << tests.err);
  CHECK(tests.exit_code == 0);
  CHECK_THAT(tests.out, Catch::Contains("test tests::app_kernel_runs ... ok") &&
                            Catch::Contains("test tests::app2_kernel_runs ... ok"));
}

TEST_CASE("cargo flow: an optional kernel dependency (gpu = [\"dep:kern\"]) is followed when --features enables it, left out without",
          "[integration][rust][cargo-configs]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-optional"};
  const fs::path ws = factor_workspace(tmp / "ws", "kern = { path = \"../kern\", optional = true }",
                                       "\n[features]\ngpu = [\"dep:kern\"]\n");
  write_file(ws / "app/src/main.rs",
             "fn main() {\n    #[cfg(feature = \"gpu\")]\n    println!(\"{}\", kern::report());\n"
             "    #[cfg(not(feature = \"gpu\"))]\n    println!(\"no gpu\");\n}\n");
  check_ok(cargo_run(ws, tmp / "cache", {"--features", "gpu"}), "x[7]=7 expect=7 OK");
  // Without the feature, as cargo does: the program alone, no device pass, said once.
  auto plain = cargo_run(ws, tmp / "cache");
  check_ok(plain, "no gpu");
  CHECK_THAT(plain.err, Catch::Contains("note: no crate of this build defines kernels (kern is optional, left out by "
                                        "the features given: enable it with --features)"));
  CHECK_THAT(plain.err, !Catch::Contains("offload-device") && !Catch::Contains("[1/"));
  check_ok(cargo_run(ws, tmp / "cache", {"--features", "gpu"}), "x[7]=7 expect=7 OK");
}

TEST_CASE("cargo flow: a -fuse-ld= in cargo's rustflags gets a hint when the host pass fails",
          "[integration][rust][cargo-configs]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-fuse-ld"};
  const fs::path ws = factor_workspace(tmp / "ws");
  fs::create_directories(ws / ".cargo");
  write_file(ws / ".cargo/config.toml", "[build]\nrustflags = [\"-Clink-arg=-fuse-ld=no-such-linker\"]\n");
  auto r = cargo_run(ws, tmp / "cache");
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("note: the rustflags (from build.rustflags) give `-Clink-arg=-fuse-ld=no-such-linker`"));
}

TEST_CASE("cargo flow: cargo's aliases b, r, t, c, a typo gets did-you-mean, -q after the command is ours too",
          "[integration][rust][cargo-configs]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-words"};
  const fs::path ws = factor_workspace(tmp / "ws");
  auto typo = run_ob({"-C", (ws / "app").string(), "cargo", "biuld"});
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.err, Catch::Contains("no such command `biuld`: did you mean `build`?"));
  auto alias = run_ob({"-C", (ws / "app").string(), "--dry-run", "cargo", "b", "-q"});
  INFO(alias.err);
  CHECK(alias.exit_code == 0);
  CHECK_THAT(alias.out, Catch::Contains(" build --message-format=json-diagnostic-rendered-ansi") && Catch::Contains(" -q"));
  auto quiet = run_ob({"-C", (ws / "app").string(), "--cache-dir", (tmp / "cache").string(), "cargo", "r", "-q"},
                      {}, kMandatory);
  INFO(quiet.err);
  CHECK(quiet.out == "x[7]=7 expect=7 OK\n");
  CHECK_THAT(quiet.err, !Catch::Contains("[1/") && !Catch::Contains("jobs:"));
}

TEST_CASE("cargo flow: --profile test and --profile bench build the device pass as a library, in their settings",
          "[integration][rust][cargo-configs]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-profiles"};
  const fs::path ws = factor_workspace(tmp / "ws");
  factor_by_profile(ws);
  check_ok(cargo_run(ws, tmp / "cache", {"--profile", "test"}), "x[7]=35 expect=35 OK");  // test inherits dev
  check_ok(cargo_run(ws, tmp / "cache", {"--profile=bench"}), "x[7]=7 expect=7 OK");      // bench, release
}

TEST_CASE("cargo flow: a doc test that launches a kernel links and runs", "[integration][rust][cargo-configs]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-doctest"};
  const fs::path ws = factor_workspace(tmp / "ws");
  edit_file(ws / "kern/src/lib.rs", "#[cfg(not(offload_device))]\npub fn report()",
            "/// ```\n/// assert!(kern::report().ends_with(\"OK\"));\n/// ```\n#[cfg(not(offload_device))]\npub fn report()");
  auto r = run_ob({"-C", (ws / "kern").string(), "--cache-dir", (tmp / "cache").string(), "cargo", "test", "--doc"},
                  {}, kMandatory);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("test result: ok. 1 passed"));
}
