// `offload-build cargo`: cargo metadata and JSON messages, the user's arguments,
// and the exact device and host pass invocations.
#include <unistd.h>

#include <fstream>

#include <catch2/catch.hpp>

#include "support/fake_toolchain.hpp"
#include "offload_build/toolchain/frontends/cargo.hpp"

using namespace ob;
using namespace ob::toolchain::cargo;
using Catch::Matchers::Contains;

namespace {

using Argv = std::vector<std::string>;

const char* kMetadata = R"({"packages":[
 {"name":"rust-cargo","id":"path+file:///w/rc#rust-cargo@0.1.0","manifest_path":"/w/rc/Cargo.toml",
  "targets":[{"kind":["lib"],"crate_types":["lib"],"name":"rust_cargo","src_path":"/w/rc/src/lib.rs"},
             {"kind":["bin"],"crate_types":["bin"],"name":"rust-cargo","src_path":"/w/rc/src/main.rs"}],
  "metadata":{"offload":{"targets":["host","sm_90"],"device_cfg":"gpu"}}},
 {"name":"tool","id":"path+file:///w/tool#0.1.0","manifest_path":"/w/tool/Cargo.toml",
  "targets":[{"kind":["bin"],"name":"tool","src_path":"/w/tool/src/main.rs"}],"metadata":null}],
 "target_directory":"/w/target","workspace_root":"/w"})";


const manifest::Target kHost{"x86_64-unknown-linux-gnu", "generic"};
const manifest::Target kSm90{"nvptx64-nvidia-cuda", "sm_90"};

// The first package select_packages picks (-p `package` when given).
Result<Package> first_of(std::string_view json, const fs::path& dir, const std::optional<std::string>& package) {
  Selection sel;
  if (package) sel.packages = {*package};
  auto all = select_packages(json, dir, sel);
  if (!all) return all.error();
  return all->front();
}

std::string env_of(const Invocation& inv, const std::string& name) {
  for (const auto& [k, v] : inv.env)
    if (k == name) return v.value_or("<unset>");
  return "<absent>";
}

}  // namespace

TEST_CASE("cargo metadata: the package in the directory, its lib and offload settings", "[rust][cargo]") {
  auto p = first_of(kMetadata, "/w/rc", std::nullopt);
  REQUIRE(p.ok());
  CHECK(p->name == "rust-cargo");
  CHECK(p->lib == std::optional<std::string>("rust_cargo"));
  CHECK(p->lib_root == fs::path("/w/rc/src/lib.rs"));
  CHECK(p->bins == std::vector<std::string>{"rust-cargo"});
  CHECK(p->targets == std::vector<std::string>{"host", "sm_90"});
  CHECK(p->device_cfg == "gpu");
  CHECK(p->target_directory == fs::path("/w/target"));

  auto tool = first_of(kMetadata, "/w", std::string("tool"));
  REQUIRE(tool.ok());
  CHECK_FALSE(tool->lib.has_value());
  CHECK(tool->device_cfg == "offload_device");

  // A workspace root without -p: every member (no default-members), programs first, as cargo builds them.
  auto all = select_packages(kMetadata, "/w", {});
  REQUIRE(all.ok());
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].name == "rust-cargo");
  CHECK((*all)[1].name == "tool");
  auto missing = select_packages(kMetadata, "/w", Selection{{"nope"}, false, {}});
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Contains("no package \"nope\" in this workspace; packages: rust-cargo, tool"));
  CHECK_FALSE(first_of("not json", "/w", std::nullopt).ok());
}

TEST_CASE("cargo JSON messages: artifacts and the build result", "[rust][cargo]") {
  auto a = parse_artifact(
      R"({"reason":"compiler-artifact","package_id":"p#1","target":{"kind":["bin"]},)"
      R"("filenames":["/t/rust-cargo"],"executable":"/t/rust-cargo","fresh":true})");
  REQUIRE(a.has_value());
  CHECK(a->package_id == "p#1");
  CHECK(a->kinds == std::vector<std::string>{"bin"});
  CHECK(a->executable == fs::path("/t/rust-cargo"));
  CHECK(a->fresh);
  CHECK_FALSE(parse_artifact(R"({"reason":"compiler-message"})").has_value());
  CHECK_FALSE(parse_artifact("   Compiling rust-cargo").has_value());
  CHECK(parse_build_finished(R"({"reason":"build-finished","success":false})") == std::optional<bool>(false));
}

TEST_CASE("cargo JSON messages: a diagnostic keyed alike from every pass, cargo's summary of a unit's warnings",
          "[rust][cargo]") {
  // The same warning from two passes: rustc adds its "on by default" note to a
  // lint's first warning in a crate only, so the renderings differ.
  auto message = [](const std::string& note) {
    return R"({"reason":"compiler-message","package_id":"path+file:///w/kern#0.1.0","target":{"kind":["lib"],)"
           R"("name":"kern"},"message":{"message":"unused variable: `x`","code":{"code":"unused_variables"},)"
           R"("level":"warning","spans":[{"file_name":"kern/src/lib.rs","line_start":3,"line_end":3,)"
           R"("column_start":9,"column_end":10,"is_primary":true}],"children":[{"spans":[{"suggestion_applicability":)"
           R"("MachineApplicable"}]}],"rendered":"\u001b[1m\u001b[33mwarning\u001b[0m: unused variable: `x`\n)" +
           note + R"(\n"}})";
  };
  const auto first = parse_diagnostic(message("  = note: `#[warn(unused_variables)]` on by default\\n"));
  const auto again = parse_diagnostic(message(""));
  REQUIRE(first);
  REQUIRE(again);
  CHECK(first->level == "warning");
  CHECK(first->plain.rfind("warning: unused variable: `x`\n  = note:", 0) == 0);
  CHECK(first->rendered.rfind("\x1b[1m\x1b[33mwarning", 0) == 0);
  CHECK(first->fixable);
  CHECK(first->key == again->key);
  CHECK(first->plain != again->plain);
  CHECK(first->unit == unit_key("path+file:///w/kern#0.1.0", "kern", {"lib"}));
  CHECK_FALSE(parse_diagnostic(R"({"reason":"compiler-artifact"})"));
  Artifact lib{"path+file:///w/kern#0.1.0", {"lib"}, {}, std::nullopt, false, "kern", false};
  CHECK(warning_summary(lib, {2, 1, 1}) ==
        "`kern` (lib) generated 2 warnings (1 duplicate) (run `cargo fix --lib -p kern` to apply 1 suggestion)");
  CHECK(warning_summary(lib, {1, 1, 0}) == "`kern` (lib) generated 1 warning (1 duplicate)");
  Artifact test{"path+file:///w/dir#app@0.1.0", {"bin"}, {}, std::nullopt, false, "app", true};
  CHECK(warning_summary(test, {3, 0, 2}, true) ==
        "`app` (bin \"app\" test) generated 3 warnings (run `cargo clippy --fix --bin \"app\" -p app --tests` "
        "to apply 2 suggestions)");
  Artifact registry{"registry+https://github.com/rust-lang/crates.io-index#dep@1.0.0", {"lib"}, {}, std::nullopt,
                    false, "dep", false};
  CHECK(warning_summary(registry, {1, 0, 1}) == "`dep` (lib) generated 1 warning");
  CHECK(warning_line("x", false) == "warning: x\n");
  // A build script's warning, as cargo prints it (plain, or coloured after its progress bar).
  CHECK(script_warning("warning: kern@0.1.0: says hi\n") == std::optional<std::string>("warning: kern@0.1.0: says hi"));
  CHECK(script_warning("\r\x1b[K\x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m:\x1b[0m kern@0.1.0: says hi\n") ==
        std::optional<std::string>("warning: kern@0.1.0: says hi"));
  CHECK_FALSE(script_warning("warning: unused variable: `x`\n"));
  CHECK_FALSE(script_warning("warning: `kern` (lib) generated 1 warning\n"));
  CHECK_FALSE(script_warning("warning: build failed, waiting for other jobs to finish...\n"));
  CHECK_FALSE(script_warning("warning: user@example.com: not a version\n"));
}

TEST_CASE("the user's cargo arguments: shared ones reach the device pass", "[rust][cargo]") {
  auto u = split_user_args({"--release", "--bin", "rust-cargo", "--features", "fast", "-p", "rust-cargo", "-v"});
  CHECK(u.profile == "release");
  CHECK(u.selection.packages == Argv{"rust-cargo"});
  CHECK(u.shared == Argv{"--release", "-v"});
  CHECK(u.features == Argv{"--features", "fast"});
  CHECK_FALSE(u.has_target);
  CHECK(split_user_args({"--profile=bench-fast"}).profile == "bench-fast");
  CHECK(profile_lto_var("bench-fast") == "CARGO_PROFILE_BENCH_FAST_LTO");
  CHECK(profile_lto_var("dev") == "CARGO_PROFILE_DEV_LTO");
}

TEST_CASE("device pass: cargo rustc --lib per target in its own target dir", "[rust][cargo]") {
  auto p = first_of(kMetadata, "/w/rc", std::nullopt);
  REQUIRE(p.ok());
  p->device_cfg = "offload_device";
  const auto u = split_user_args({"--release"});
  auto host = device_pass("/rust/bin/cargo", test::fake_rust_toolchain(), *p, u, kHost);
  CHECK(host.argv == Argv{"/rust/bin/cargo", "rustc", "--lib", "-p", "rust-cargo", "--crate-type", "staticlib",
                          "--target", "x86_64-unknown-linux-gnu", "--target-dir",
                          "/w/target/offload-device/host/rust-cargo", "--message-format=json-diagnostic-rendered-ansi",
                          "--offline", "--release", "--", "--cfg", "offload_device", "-Cpanic=abort",
                          "-Ccodegen-units=1", "--check-cfg=cfg(offload_device)",
                          "--emit=mir=/w/target/offload-device/host/rust-cargo/offload/rust_cargo.host.mir",
                          "--emit=obj=/w/target/offload-device/host/rust-cargo/offload/rust_cargo.host.crate.o"});
  // The archive stays where cargo puts it, so its fingerprint finds it next time.
  CHECK(device_archive({R"({"reason":"compiler-artifact","package_id":"path+file:///w/rc#rust-cargo@0.1.0",)"
                        R"("filenames":["/w/target/offload-device/host/rust-cargo/x86_64-unknown-linux-gnu/release/librust_cargo.a"]})"},
                       *p) == fs::path("/w/target/offload-device/host/rust-cargo/x86_64-unknown-linux-gnu/release/librust_cargo.a"));
  CHECK(env_of(host, "RUSTC") == "/rust/bin/rustc");
  CHECK(env_of(host, "CARGO_INCREMENTAL") == "0");
  // Fat LTO in every profile: the archive's object holds the core the kernels call.
  CHECK(env_of(host, "CARGO_PROFILE_RELEASE_LTO") == "fat");
  CHECK(device_image(*p, kHost, "") == fs::path("/w/target/offload-device/host/rust-cargo/offload/rust_cargo.host.o"));

  // No features resolved (the host pass does not build the crate): the user's as they are.
  CHECK(env_of(host, "CARGO_ENCODED_RUSTFLAGS").empty());  // set, to the resolved flags: none here
  const auto featured = split_user_args({"--release", "--features", "sq"});
  const Argv as_given = device_pass("/rust/bin/cargo", test::fake_rust_toolchain(), *p, featured, kHost).argv;
  CHECK(std::count(as_given.begin(), as_given.end(), "sq") == 1);
  // Resolved: exactly the host pass's features, whatever the user wrote.
  auto resolved = device_pass("/rust/bin/cargo", test::fake_rust_toolchain(), *p, featured, kHost,
                              {std::vector<std::string>{"default", "squares"}, {"--cfg", "x y"}});
  CHECK(std::count(resolved.argv.begin(), resolved.argv.end(), "sq") == 0);
  const auto dashdash = std::find(resolved.argv.begin(), resolved.argv.end(), "--");
  CHECK(Argv(dashdash - 4, dashdash) == Argv{"--release", "--no-default-features", "--features", "default,squares"});
  CHECK(env_of(resolved, "CARGO_ENCODED_RUSTFLAGS") == "--cfg\x1fx y");

  auto gpu = device_pass("/rust/bin/cargo", test::fake_rust_toolchain(), *p, u, kSm90);
  CHECK(std::count(gpu.argv.begin(), gpu.argv.end(), "staticlib") == 1);
  CHECK(std::count(gpu.argv.begin(), gpu.argv.end(), "-Clto=fat") == 0);  // from the profile instead
  CHECK(gpu.argv.end()[-2] == "--emit=llvm-bc=/w/target/offload-device/sm_90/rust-cargo/offload/rust_cargo.sm_90.bc");
  CHECK(gpu.argv.back() == "--emit=mir=/w/target/offload-device/sm_90/rust-cargo/offload/rust_cargo.sm_90.mir");
  CHECK(env_of(gpu, "CARGO_PROFILE_RELEASE_LTO") == "fat");
}

TEST_CASE("cargo metadata: the local crates a package depends on, not registry ones", "[rust][cargo]") {
  const char* ws = R"({"packages":[
 {"name":"app","id":"path+file:///w/app#0.1.0","source":null,"manifest_path":"/w/app/Cargo.toml",
  "targets":[{"kind":["bin"],"name":"app","src_path":"/w/app/src/main.rs"}],"metadata":null},
 {"name":"kernels","id":"path+file:///k#0.1.0","source":null,"manifest_path":"/k/Cargo.toml",
  "targets":[{"kind":["lib"],"name":"kernels","src_path":"/k/src/lib.rs"}],"metadata":{"offload":{"device_cfg":"dev"}}},
 {"name":"util","id":"path+file:///u#0.1.0","source":null,"manifest_path":"/u/Cargo.toml",
  "targets":[{"kind":["lib"],"name":"util","src_path":"/u/src/lib.rs"}],"metadata":null},
 {"name":"libm","id":"registry+https://x#libm@0.2.0","source":"registry+https://x","manifest_path":"/r/libm/Cargo.toml",
  "targets":[{"kind":["lib"],"name":"libm","src_path":"/r/libm/src/lib.rs"}],"metadata":null},
 {"name":"other","id":"path+file:///w/other#0.1.0","source":null,"manifest_path":"/w/other/Cargo.toml",
  "targets":[{"kind":["lib"],"name":"other","src_path":"/w/other/src/lib.rs"}],"metadata":null}],
 "workspace_members":["path+file:///w/app#0.1.0","path+file:///w/other#0.1.0"],
 "resolve":{"nodes":[{"id":"path+file:///w/app#0.1.0","dependencies":["path+file:///k#0.1.0"]},
                     {"id":"path+file:///k#0.1.0","dependencies":["path+file:///u#0.1.0","registry+https://x#libm@0.2.0"]}]},
 "target_directory":"/w/target","workspace_root":"/w"})";
  auto app = first_of(ws, "/w/app", std::nullopt);
  REQUIRE(app.ok());
  CHECK(app->name == "app");
  CHECK_FALSE(app->lib.has_value());
  // From the workspace root: its members (only they: not kernels, util, libm), the program first.
  auto root = select_packages(ws, "/w", {});
  REQUIRE(root.ok());
  REQUIRE(root->size() == 2);
  CHECK((*root)[0].name == "app");
  // default-members decide; --workspace takes every member but --exclude; -p as many as given.
  std::string defaults = ws;
  defaults.replace(defaults.find(R"("workspace_members")"), 0, R"("workspace_default_members":["path+file:///w/other#0.1.0"],)");
  auto by_default = select_packages(defaults, "/w", {});
  REQUIRE(by_default.ok());
  REQUIRE(by_default->size() == 1);
  CHECK((*by_default)[0].name == "other");
  auto everything = select_packages(defaults, "/w", Selection{{}, true, {"app"}});
  REQUIRE(everything.ok());
  REQUIRE(everything->size() == 1);
  CHECK((*everything)[0].name == "other");
  auto both = select_packages(defaults, "/w", Selection{{"other", "app"}, false, {}});
  REQUIRE(both.ok());
  REQUIRE(both->size() == 2);
  CHECK((*both)[0].name == "app");
  const auto deps = local_dependencies(ws, *app);
  REQUIRE(deps.size() == 2);  // kernels and util (through kernels); not libm, not other
  CHECK(deps[0].name == "kernels");
  CHECK(deps[0].device_cfg == "dev");
  CHECK(deps[0].target_directory == fs::path("/w/target"));
  CHECK(deps[1].name == "util");
  CHECK_FALSE(deps[0].member);  // a path dependency outside the workspace: no --features for it
  // --bin: only the packages that have it.
  auto with_bin = select_packages(ws, "/w", Selection{{}, true, {}, {"app"}});
  REQUIRE(with_bin.ok());
  REQUIRE(with_bin->size() == 1);
  CHECK((*with_bin)[0].name == "app");
}

TEST_CASE("user args: --locked and --frozen for every cargo call and one group's packages", "[rust][cargo]") {
  const UserArgs u = split_user_args({"--workspace", "--exclude", "x", "--locked", "-p=y", "--release", "--bin", "b"});
  CHECK(lock_flags(u) == std::vector<std::string>{"--locked"});
  CHECK(lock_flags(split_user_args({"--frozen"})) == std::vector<std::string>{"--frozen"});
  CHECK(u.selection.bins == std::vector<std::string>{"b"});
  const UserArgs one = for_packages(u, {"app", "tool"});
  CHECK(one.all == std::vector<std::string>{"--locked", "--release", "--bin", "b", "-p", "app", "-p", "tool"});
  CHECK(one.selection.packages == std::vector<std::string>{"app", "tool"});
  CHECK_FALSE(one.selection.workspace);
}

TEST_CASE("host pass: cargo build told where the images are", "[rust][cargo]") {
  auto p = first_of(kMetadata, "/w/rc", std::nullopt);
  REQUIRE(p.ok());
  auto u = split_user_args({"--bin", "rust-cargo"});
  u.implied_package = "rust-cargo";  // the package in the directory, the user named none
  auto inv = host_pass("/rust/bin/cargo", test::fake_rust_toolchain(), *p, u, {kHost}, fs::path("/w/target/offload/dev/devimg-0123.o"),
                       std::nullopt, {"-Cdebuginfo=1"});
  CHECK(inv.argv == Argv{"/rust/bin/cargo", "build", "--message-format=json-diagnostic-rendered-ansi", "--offline",
                         "--target", "x86_64-unknown-linux-gnu", "-p", "rust-cargo", "--bin", "rust-cargo"});
  CHECK(env_of(inv, "RUSTFLAGS") ==
        "-Cdebuginfo=1 -Clto=fat --check-cfg=cfg(gpu) -Zunstable-options -Zoffload=Test "
        "-Clinker=/llvm/bin/clang -Clink-arg=--offload-link -Clink-arg=/w/target/offload/dev/devimg-0123.o "
        "-Clink-arg=-L/llvm/lib -Clink-arg=-lomptarget -Clink-arg=-Wl,-rpath,/llvm/lib "
        "-Zmir-include-spans=on --emit=mir");
  CHECK(env_of(inv, "CARGO_ENCODED_RUSTFLAGS") == "<unset>");
  CHECK(env_of(inv, "CARGO_PROFILE_DEV_LTO") == "fat");

  auto spaced = host_pass("/rust/bin/cargo", test::fake_rust_toolchain(), *p, u, {kHost}, fs::path("/a b/devimg.o"),
                          std::nullopt, {});
  CHECK_THAT(env_of(spaced, "CARGO_ENCODED_RUSTFLAGS"), Contains("\x1f-Clink-arg=/a b/devimg.o\x1f"));
  CHECK(env_of(spaced, "RUSTFLAGS") == "<unset>");
}

TEST_CASE("rustflags in cargo's precedence, for one triple", "[rust][cargo]") {
  const std::string triple = "x86_64-unknown-linux-gnu";
  const char* config = R"({"build":{"rustflags":["--cfg","b"]},"target":{"x86_64-unknown-linux-gnu":{"rustflags":"-Ca  -Cb"},
                           "nvptx64-nvidia-cuda":{"linker":"x"}}})";
  auto flags = [&](std::string_view cfg, RustflagsEnv env, const std::string& t) {
    auto r = effective_rustflags(cfg, t, env);
    REQUIRE(r.ok());
    return *r;
  };
  CHECK(flags(config, {}, triple).flags == Argv{"-Ca", "-Cb"});
  CHECK(flags(config, {}, triple).origin == "target.x86_64-unknown-linux-gnu.rustflags");
  CHECK(flags(config, {}, "nvptx64-nvidia-cuda").flags == Argv{"--cfg", "b"});  // no rustflags in its table
  CHECK(flags(config, {}, "nvptx64-nvidia-cuda").origin == "build.rustflags");
  // The environment: CARGO_TARGET_<TRIPLE>_RUSTFLAGS and CARGO_BUILD_RUSTFLAGS add to the config's.
  CHECK(flags(config, {std::nullopt, std::nullopt, std::nullopt, "-Cc"}, triple).flags == Argv{"-Ca", "-Cb", "-Cc"});
  CHECK(flags(R"({})", {std::nullopt, std::nullopt, "-Cz", std::nullopt}, triple).flags == Argv{"-Cz"});
  // RUSTFLAGS wins over the config, CARGO_ENCODED_RUSTFLAGS over RUSTFLAGS (even empty).
  CHECK(flags(config, {std::nullopt, " -Cr  --cfg q", std::nullopt, std::nullopt}, triple).flags == Argv{"-Cr", "--cfg", "q"});
  CHECK(flags(config, {"-Ce\x1f" "a b", "-Cr", std::nullopt, std::nullopt}, triple).flags == Argv{"-Ce", "a b"});
  CHECK(flags(config, {"", "-Cr", std::nullopt, std::nullopt}, triple).flags.empty());
  CHECK(flags("", {}, triple).flags.empty());
  // A cfg(...) table: offload-build cannot tell whether it applies.
  auto cfg = effective_rustflags(R"j({"target":{"cfg(unix)":{"rustflags":["-Cx"]}}})j", triple, {});
  REQUIRE_FALSE(cfg.ok());
  CHECK_THAT(cfg.error().message, Contains("target.'cfg(unix)'.rustflags") && Contains("[target.x86_64-unknown-linux-gnu]"));
}

TEST_CASE("cargo's unit graph: each package's features and profile, per platform", "[rust][cargo]") {
  const char* graph = R"({"version":1,"units":[
    {"pkg_id":"path+file:///w/app#0.1.0","target":{"kind":["bin"]},"profile":{"name":"dev","opt_level":"0",
     "debug_assertions":true,"overflow_checks":true},"platform":"x86_64-unknown-linux-gnu","mode":"build","features":[]},
    {"pkg_id":"path+file:///w/kern#0.1.0","target":{"kind":["lib"]},"profile":{"name":"dev","opt_level":"0",
     "debug_assertions":true,"overflow_checks":true},"platform":null,"mode":"build","features":["z"]},
    {"pkg_id":"path+file:///w/kern#0.1.0","target":{"kind":["lib"]},"profile":{"name":"dev","opt_level":"0",
     "debug_assertions":true,"overflow_checks":false},"platform":"x86_64-unknown-linux-gnu","mode":"build",
     "features":["squares","default"]}],"roots":[0]})";
  auto units = parse_unit_graph(graph);
  REQUIRE(units.ok());
  REQUIRE(units->size() == 3);
  const Unit* kern = library_unit(*units, "path+file:///w/kern#0.1.0", "x86_64-unknown-linux-gnu");
  REQUIRE(kern != nullptr);
  CHECK(kern->features == Argv{"default", "squares"});  // sorted
  CHECK_FALSE(kern->overflow_checks);
  CHECK(library_unit(*units, "path+file:///w/app#0.1.0", "x86_64-unknown-linux-gnu") == nullptr);  // a bin
  CHECK_FALSE(parse_unit_graph("error: not json").ok());
}

TEST_CASE("content_hash names embedded objects by content", "[rust][cargo]") {
  CHECK(content_hash("") == "cbf29ce484222325");
  CHECK(content_hash("a") == "af63dc4c8601ec8c");
  CHECK(content_hash("image-1") != content_hash("image-2"));
}

TEST_CASE("device pass configuration: one per feature set, profile, rustflags and workspace", "[rust][cargo]") {
  auto graph = [](const std::string& root, const std::string& features, const std::string& overflow) {
    return R"({"version":1,"units":[{"pkg_id":"path+file://)" + root + R"(/kern#0.1.0","target":{"kind":["lib"],)"
           R"("src_path":")" + root + R"(/kern/src/lib.rs"},"profile":{"name":"dev","opt_level":"0","overflow_checks":)" +
           overflow + R"(},"platform":"x86_64-unknown-linux-gnu","mode":"build","features":[)" + features + "]}]}";
  };
  auto pkg = [](const std::string& root) {
    Package p;
    p.name = "kern";
    p.workspace_root = root;
    p.manifest_path = root + "/kern/Cargo.toml";
    p.target_directory = "/shared/target";
    return p;
  };
  const DeviceConfig plain = device_config(graph("/a", "", "true"), pkg("/a"), {});
  CHECK(plain.place.size() == 16);
  CHECK(device_config(graph("/a", "\"squares\"", "true"), pkg("/a"), {}).place != plain.place);  // features
  CHECK(device_config(graph("/a", "", "false"), pkg("/a"), {}).place != plain.place);  // a profile override
  CHECK(device_config(graph("/a", "", "true"), pkg("/a"), {"--cfg", "x"}).place != plain.place);  // rustflags
  // Another workspace sharing the target dir: its own place, the same cache key.
  const DeviceConfig other = device_config(graph("/b", "", "true"), pkg("/b"), {});
  CHECK(other.place != plain.place);
  CHECK(other.portable == plain.portable);
  CHECK(device_target_dir(pkg("/a"), kHost, plain.place) ==
        fs::path("/shared/target/offload-device/host/kern-" + plain.place));
}

TEST_CASE("device pass depfile: cargo's dep-info, rustc's env-deps and build scripts' rerun-if-env-changed",
          "[rust][cargo]") {
  const fs::path dir = fs::temp_directory_path() / ("ob-depfile-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "deps");
  fs::create_directories(dir / "build/kern-1");
  auto write = [](const fs::path& f, const std::string& text) { std::ofstream(f) << text; };
  write(dir / "libkern.d", dir.string() + "/libkern.a: /w/kern/src/lib.rs /w/extra.txt\n");
  write(dir / "deps/kern-1.d", "x.rmeta: src/lib.rs\n\nsrc/lib.rs:\n\n# env-dep:SCALE=3\n# env-dep:CARGO_PKG_NAME=kern\n"
                               "# env-dep:FROM_SCRIPT=1\n# env-dep:FROM_CONFIG=2\n# env-dep:UNSET_ONE\n");
  write(dir / "build/kern-1/output", "cargo:rerun-if-env-changed=KFOO\ncargo::rustc-env=FROM_SCRIPT=1\n");
  const auto text = device_depfile(dir / "libkern.a", {"FROM_CONFIG"});
  REQUIRE(text);
  CHECK_THAT(*text, Contains("libkern.a: /w/kern/src/lib.rs /w/extra.txt\n"));
  CHECK_THAT(*text, Contains("# env-dep:SCALE\n") && Contains("# env-dep:UNSET_ONE\n") && Contains("# env-dep:KFOO\n"));
  // What cargo sets itself, a build script's rustc-env and cargo's [env] are not the environment's.
  CHECK_THAT(*text, !Contains("CARGO_PKG_NAME") && !Contains("FROM_SCRIPT") && !Contains("FROM_CONFIG"));
  CHECK_FALSE(device_depfile(dir / "missing/libkern.a", {}));
  fs::remove_all(dir);
}

TEST_CASE("cargo --message-format: merged with the JSON offload-build reads, on every pass", "[rust][cargo]") {
  auto p = first_of(kMetadata, "/w/rc", std::nullopt);
  REQUIRE(p.ok());
  auto formats = [&](const std::vector<std::string>& args) {
    const UserArgs u = split_user_args(args);
    const Invocation host = host_pass("/rust/bin/cargo", test::fake_rust_toolchain(), *p, u, {kHost}, std::nullopt,
                                      std::nullopt, {});
    const Invocation device = device_pass("/rust/bin/cargo", test::fake_rust_toolchain(), *p, u, kHost);
    Argv out;
    for (const auto* inv : {&host, &device})
      for (const auto& a : inv->argv)
        if (a.rfind("--message-format", 0) == 0)
          out.push_back(a + (inv->echo_json ? " (echoed)" : "") + (inv->render ? " (rendered)" : ""));
    return out;
  };
  // offload-build prints the diagnostics (once per build): cargo's JSON carries them rendered.
  CHECK(formats({}) == Argv(2, "--message-format=json-diagnostic-rendered-ansi (rendered)"));
  CHECK(formats({"--message-format=human"}) == Argv(2, "--message-format=json-diagnostic-rendered-ansi (rendered)"));
  CHECK(formats({"--message-format", "short", "--release"}) ==
        Argv(2, "--message-format=json-diagnostic-rendered-ansi,json-diagnostic-short (rendered)"));
  CHECK(formats({"--message-format=json"}) == Argv(2, "--message-format=json (echoed)"));
  CHECK(formats({"--message-format=json-diagnostic-short,json-render-diagnostics"}) ==
        Argv(2, "--message-format=json-diagnostic-short,json-diagnostic-rendered-ansi (echoed) (rendered)"));
  CHECK(split_user_args({"--target-dir", "out", "--release"}).target_dir == std::optional<std::string>("out"));
  const UserArgs sel = split_user_args({"-p", "a", "--package=b", "--workspace", "--exclude", "c"});
  CHECK(sel.selection.packages == Argv{"a", "b"});
  CHECK(sel.selection.workspace);
  CHECK(sel.selection.exclude == Argv{"c"});
}
