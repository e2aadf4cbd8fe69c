// Cargo's own rules kept by the cargo flow (issue 53): every configuration
// packages its images into its own place (two builds at once never swap
// kernels), each program links only the kernel crates of its own dependency
// graph, --locked/--frozen reach every cargo call, a kernel crate outside the
// workspace builds, two kernel crates' features of one crate are unified
// (also one below a dependency, by cargo's workspace unification).
// Each program runs under OMP_TARGET_OFFLOAD=MANDATORY and checks its
// kernel's value against the host's view of the same code.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <sstream>

#include "cargo_workspace.hpp"
#include "rust_support.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// Every regular file under `dir` with its content.
std::map<fs::path, std::string> files_under(const fs::path& dir) {
  std::map<fs::path, std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file()) out[it->path()] = read_file(it->path());
  return out;
}

// The files under `dir` whose name ends in `suffix`.
std::vector<fs::path> ending_in(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> out;
  for (const auto& [p, text] : files_under(dir)) {
    const std::string name = p.filename().string();
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(p);
  }
  return out;
}

// The program `name` that a build's "offload-build: built PATH" lines name, run as the user would.
process::Captured run_built(const process::Captured& build, const std::string& name) {
  std::istringstream lines(build.err);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("offload-build: built ", 0) == 0 && fs::path(line.substr(21)).filename() == name)
      return run_tool({line.substr(21)}, {}, kMandatory);
  FAIL("no program " << name << " built:\n" << build.err);
  return {};
}

// factor_workspace plus `kern2` (the same kernel `scale`, factor times 4) and
// `app2`, which prints its check: two programs whose kernels share a name.
fs::path two_programs(const fs::path& dir) {
  const fs::path ws = factor_workspace(dir);
  fs::copy(ws / "kern", ws / "kern2", fs::copy_options::recursive);
  fs::copy(ws / "app", ws / "app2", fs::copy_options::recursive);
  edit_file(ws / "kern2/Cargo.toml", "name = \"kern\"", "name = \"kern2\"");
  edit_file(ws / "kern2/src/lib.rs", "let mut f = 1.0;", "let mut f = 4.0;");
  edit_file(ws / "app2/Cargo.toml", "name = \"app\"", "name = \"app2\"");
  edit_file(ws / "app2/Cargo.toml", "kern = { path = \"../kern\" }", "kern2 = { path = \"../kern2\" }");
  edit_file(ws / "app2/src/main.rs", "kern::report()", "kern2::report()");
  edit_file(ws / "Cargo.toml", "members = [\"app\", \"kern\"]", "members = [\"app\", \"kern\", \"app2\", \"kern2\"]");
  return ws;
}

}  // namespace

TEST_CASE("cargo flow: each feature set packages its images into its own place and never over another's",
          "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  const fs::path ws = factor_workspace(tmp / "ws", "kern = { path = \"../kern\" }",
                                       "\n[features]\nsq = [\"kern/squares\"]\n");
  const fs::path off = ws / "target/offload/dev";
  check_ok(cargo_run(ws, tmp / "cache", {"--features", "sq"}), "x[7]=14 expect=14 OK");
  const auto first = files_under(off);
  REQUIRE(ending_in(off, ".offload").size() == 1);
  // A second build of other features, as another terminal would run it beside the first.
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=7 expect=7 OK");
  const std::vector<fs::path> packages = ending_in(off, ".offload");
  REQUIRE(packages.size() == 2);
  CHECK(packages[0].parent_path() != packages[1].parent_path());
  for (const auto& [path, text] : first) {
    if (path.string().find("/explain/") != std::string::npos) continue;  // --explain's records, not artifacts
    INFO(path);
    REQUIRE(fs::exists(path));
    CHECK(read_file(path) == text);
  }
  // Alternately again: each still its own kernel.
  check_ok(cargo_run(ws, tmp / "cache", {"--features", "sq"}), "x[7]=14 expect=14 OK");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=7 expect=7 OK");
}

TEST_CASE("cargo flow: each program of a workspace links only its own kernel crates' images",
          "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  const fs::path ws = two_programs(tmp / "ws");
  SECTION("--workspace") {
    auto r = cargo_in(ws, tmp / "cache", {"build", "--workspace"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("multiple definition") == std::string::npos);
    check_ok(run_built(r, "app"), "x[7]=7 expect=7 OK");
    check_ok(run_built(r, "app2"), "x[7]=28 expect=28 OK");
  }
  SECTION("a plain build at the virtual workspace's root, then run --bin") {
    auto r = cargo_in(ws, tmp / "cache", {"build"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    check_ok(run_built(r, "app2"), "x[7]=28 expect=28 OK");
    check_ok(cargo_in(ws, tmp / "cache", {"run", "-q", "--bin", "app2"}), "x[7]=28 expect=28 OK");
    check_ok(cargo_in(ws, tmp / "cache", {"run", "-q", "--bin", "app"}), "x[7]=7 expect=7 OK");
  }
}

TEST_CASE("cargo flow: --locked and --frozen with an out-of-date Cargo.lock fail as cargo's and leave it",
          "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  const fs::path ws = factor_workspace(tmp / "ws");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=7 expect=7 OK");
  // A new local dependency: the lock no longer matches the manifests.
  fs::create_directories(ws / "extra/src");
  write_file(ws / "extra/Cargo.toml", "[package]\nname = \"extra\"\nversion = \"0.1.0\"\nedition = \"2024\"\n");
  write_file(ws / "extra/src/lib.rs", "");
  edit_file(ws / "app/Cargo.toml", "[dependencies]\n", "[dependencies]\nextra = { path = \"../extra\" }\n");
  const std::string lock = read_file(ws / "Cargo.lock");
  const std::string flag = GENERATE(as<std::string>{}, "--locked", "--frozen");
  auto r = cargo_run(ws, tmp / "cache", {flag});
  INFO(r.out << r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("cannot update the lock file " + (ws / "Cargo.lock").string() + " because " + flag +
                   " was passed to prevent this") != std::string::npos);
  CHECK(r.err.find("run `cargo fetch`") == std::string::npos);  // not a matter of fetching
  CHECK(read_file(ws / "Cargo.lock") == lock);
}

TEST_CASE("cargo flow: a kernel crate that is a path dependency outside the workspace builds",
          "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  const fs::path ws = factor_workspace(tmp / "ws", "kern = { path = \"../../outside/kern\", features = [\"squares\"] }");
  fs::create_directories(tmp / "outside");
  fs::rename(ws / "kern", tmp / "outside/kern");
  edit_file(ws / "Cargo.toml", "members = [\"app\", \"kern\"]", "members = [\"app\"]");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=14 expect=14 OK");
  check_ok(cargo_run(ws, tmp / "cache", {"--release"}), "x[7]=14 expect=14 OK");
  // A feature only the command line turns on (forwarded to it): cargo takes no --features for such a crate.
  edit_file(ws / "app/Cargo.toml", ", features = [\"squares\"] }", " }\n\n[features]\nsq = [\"kern/squares\"]");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=7 expect=7 OK");
  auto r = cargo_run(ws, tmp / "cache", {"--features", "sq"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("kern is outside the workspace, for which cargo takes no --features: enable "
                                    "features [squares] in the dependency on it"));
}

namespace {

// factor_workspace plus `kern2` and `common` (factor 2 with `two`, 3 with
// `three`): kern enables two (through `mid` when `below`), kern2 three; app
// prints both kernels' checks. cargo builds common once, with both.
fs::path shared_feature_workspace(const fs::path& dir, bool below) {
  const fs::path ws = factor_workspace(dir);
  fs::create_directories(ws / "common/src");
  write_file(ws / "common/Cargo.toml", "[package]\nname = \"common\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"
                                       "publish = false\n\n[features]\ntwo = []\nthree = []\n");
  write_file(ws / "common/src/lib.rs", "#![no_std]\npub const fn factor() -> f64 {\n    let mut f = 1.0;\n"
                                       "    if cfg!(feature = \"two\") {\n        f *= 2.0;\n    }\n"
                                       "    if cfg!(feature = \"three\") {\n        f *= 3.0;\n    }\n    f\n}\n");
  fs::copy(ws / "kern", ws / "kern2", fs::copy_options::recursive);
  edit_file(ws / "kern2/Cargo.toml", "name = \"kern\"", "name = \"kern2\"");
  for (const char* file : {"kern2/src/lib.rs"}) {
    const std::regex symbols(R"(\b(scale|report)\b)");
    write_file(ws / file, std::regex_replace(read_file(ws / file), symbols, "$1_2"));
  }
  for (const auto& [crate, feature] : std::vector<std::pair<std::string, std::string>>{{"kern", "two"},
                                                                                      {"kern2", "three"}}) {
    const std::string dep = below && crate == "kern" ? "mid" : "common";
    const std::string features = below && crate == "kern" ? "" : ", features = [\"" + feature + "\"]";
    edit_file(ws / crate / "Cargo.toml", "[features]",
              "[dependencies]\n" + dep + " = { path = \"../" + dep + "\"" + features + " }\n\n[features]");
    edit_file(ws / crate / "src/lib.rs", "let mut f = 1.0;", "let mut f = " + dep + "::factor();");
  }
  std::string members = "\"app\", \"kern\", \"kern2\", \"common\"";
  if (below) {  // mid: common with `two`, its factor passed on
    fs::create_directories(ws / "mid/src");
    write_file(ws / "mid/Cargo.toml", "[package]\nname = \"mid\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"
                                      "publish = false\n\n[dependencies]\ncommon = { path = \"../common\", features = "
                                      "[\"two\"] }\n");
    write_file(ws / "mid/src/lib.rs", "#![no_std]\npub const fn factor() -> f64 {\n    common::factor()\n}\n");
    members += ", \"mid\"";
  }
  edit_file(ws / "Cargo.toml", "members = [\"app\", \"kern\"]", "members = [" + members + "]");
  edit_file(ws / "app/Cargo.toml", "kern = { path = \"../kern\" }",
            "kern = { path = \"../kern\" }\nkern2 = { path = \"../kern2\" }");
  write_file(ws / "app/src/main.rs", "fn main() {\n    println!(\"{}\", kern::report());\n"
                                     "    println!(\"{}\", kern2::report_2());\n}\n");
  return ws;
}

}  // namespace

TEST_CASE("cargo flow: two kernel crates enabling different features of one local crate get cargo's union",
          "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  const fs::path ws = shared_feature_workspace(tmp / "ws", false);
  auto r = cargo_run(ws, tmp / "cache");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "x[7]=42 expect=42 OK\nx[7]=42 expect=42 OK\n");
}

TEST_CASE("cargo flow: a crate below a kernel crate's dependency gets cargo's union too",
          "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  // kern -> mid -> common [two]; kern2 -> common [three]: cargo builds common with both (factor 6).
  // Before: refused, as no --features of kern's device pass can name common.
  const fs::path ws = shared_feature_workspace(tmp / "ws", true);
  auto r = cargo_run(ws, tmp / "cache");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "x[7]=42 expect=42 OK\nx[7]=42 expect=42 OK\n");  // kern's kernel: common with both
}

TEST_CASE("cargo flow: test --no-run prints cargo's Executable lines", "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  const fs::path ws = factor_workspace(tmp / "ws");
  fs::create_directories(ws / "app/tests");
  write_file(ws / "app/tests/it.rs", "#[test]\nfn runs() {\n    assert!(kern::report().ends_with(\"OK\"));\n}\n");
  auto r = cargo_in(ws, tmp / "cache", {"test", "--no-run", "--workspace"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // cargo's order and form: the package's unit tests, then its integration tests; paths from the workspace root.
  const std::regex line(R"(\n  Executable (unittests src/main\.rs|tests/it\.rs|unittests src/lib\.rs) \((target/\S+/deps/(app|it|kern)-[0-9a-f]+)\))");
  std::vector<std::string> seen;
  for (std::sregex_iterator it(r.err.begin(), r.err.end(), line), end; it != end; ++it) {
    seen.push_back((*it)[1].str());
    CHECK(fs::exists(ws / (*it)[2].str()));
  }
  CHECK(seen == std::vector<std::string>{"unittests src/main.rs", "tests/it.rs", "unittests src/lib.rs"});
}

TEST_CASE("cargo flow: clean --release and clean -p remove offload-build's outputs of that profile and crate",
          "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  const fs::path ws = factor_workspace(tmp / "ws");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=7 expect=7 OK");
  check_ok(cargo_run(ws, tmp / "cache", {"--release"}), "x[7]=7 expect=7 OK");
  auto kern_dirs = [&] {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(ws / "target/offload-device/host"))
      n += e.path().filename().string().rfind("kern-", 0) == 0;
    return n;
  };
  REQUIRE(kern_dirs() == 2);
  auto r = cargo_in(ws / "app", tmp / "cache", {"clean", "--release"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(!fs::exists(ws / "target/offload/release"));
  CHECK(fs::exists(ws / "target/offload/dev"));
  const fs::path dev = device_dir(ws / "target", "host", "kern");  // the dev pass's, alone
  CHECK(fs::exists(dev / "x86_64-unknown-linux-gnu/debug"));
  r = cargo_in(ws / "app", tmp / "cache", {"clean", "-p", "kern"});
  REQUIRE(r.exit_code == 0);
  CHECK(!fs::exists(dev));
  CHECK(!fs::exists(ws / "target/offload/dev"));
  check_ok(cargo_run(ws, tmp / "cache", {}, {}, {"--no-cache"}), "x[7]=7 expect=7 OK");
}

TEST_CASE("cargo flow: -C link-arg=-fuse-ld=lld links from RUSTFLAGS and from cargo's config",
          "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  const fs::path ws = factor_workspace(tmp / "ws");
  check_ok(cargo_run(ws, tmp / "cache", {}, {{"RUSTFLAGS", "-C link-arg=-fuse-ld=lld"}}), "x[7]=7 expect=7 OK");
  fs::create_directories(ws / ".cargo");
  write_file(ws / ".cargo/config.toml", "[build]\nrustflags = [\"-Clink-arg=-fuse-ld=lld\", \"--cfg\", \"tripled\"]\n");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=21 expect=21 OK");
}

// A launch is checked against the images its own program links: before, a
// kernel only another program's kernel crate defines passed the check (it is
// in an image of the same target), and the program stopped at run time
// (`Failed to load kernel scale2`).
TEST_CASE("cargo flow: a launch of a kernel only another program's kernel crate defines is refused at the launch",
          "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  const fs::path ws = two_programs(tmp / "ws");
  // kern2's kernel is scale2; app (kern's) declares and launches it itself.
  edit_file(ws / "kern2/src/lib.rs", "pub extern \"C\" fn scale(", "pub extern \"C\" fn scale2(");
  edit_file(ws / "kern2/src/lib.rs", "    fn scale(x: *mut [f64; N]);", "    fn scale2(x: *mut [f64; N]);");
  edit_file(ws / "kern2/src/lib.rs", "offload::<_, _, ()>(scale,", "offload::<_, _, ()>(scale2,");
  write_file(ws / "app/src/main.rs", "#![feature(core_intrinsics)]\n#![allow(internal_features)]\n\n"
                                     "unsafe extern \"C\" {\n    fn scale2(x: *mut [f64; 8]);\n}\n\n"
                                     "fn main() {\n    println!(\"{}\", kern::report());\n"
                                     "    let mut x = [0.0f64; 8];\n"
                                     "    core::intrinsics::offload::<_, _, ()>(scale2, [1, 1, 1], [1, 1, 1], (&mut x as *mut [f64; 8],));\n"
                                     "}\n");
  auto r = cargo_in(ws, tmp / "cache", {"build", "--workspace"});
  INFO(r.out << r.err);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("app/src/main.rs:11:") &&
                        Catch::Contains("this launch of `scale2` finds no kernel `scale2` in the host device image, "
                                        "which defines `scale`"));
  // app2 launches its own kernel crate's: that check passes (a build of app2 alone runs).
  auto two = cargo_in(ws, tmp / "cache", {"run", "-q", "--bin", "app2"});
  check_ok(two, "x[7]=28 expect=28 OK");
}

TEST_CASE("cargo flow: a kernel exported under another symbol and declared with #[link_name] runs",
          "[integration][rust][cargo-rules]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-rules"};
  const fs::path ws = factor_workspace(tmp / "ws");
  edit_file(ws / "kern/src/lib.rs", "#[unsafe(no_mangle)]", "#[unsafe(export_name = \"scale_v2\")]");
  edit_file(ws / "kern/src/lib.rs", "    fn scale(x: *mut [f64; N]);", "    #[link_name = \"scale_v2\"]\n    fn scale(x: *mut [f64; N]);");
  // Before: refused ("finds no kernel `scale`"), though the program runs.
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=7 expect=7 OK");
  // The symbol misspelt on the host side: refused at the launch, naming it.
  edit_file(ws / "kern/src/lib.rs", "#[link_name = \"scale_v2\"]", "#[link_name = \"scale_v3\"]");
  auto r = cargo_in(ws, tmp / "cache", {"build"});
  INFO(r.out << r.err);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("kern/src/lib.rs:") &&
                        Catch::Contains("this launch of `scale` is of a renamed symbol (the program launches no "
                                        "`scale`; #[link_name]), and the program launches `scale_v3`, which the host "
                                        "device image does not define"));
}
