// The cargo loop a Rust developer expects (issue 31 item 3): `cargo test` and
// `cargo check` with the offload passes they need, a workspace with one
// program built from its root without -p, the toolchain the user pinned
// honoured (or a clear stop), `cargo --help`, and cargo's options put before
// the command word answered with the corrected command line.
#include <catch2/catch.hpp>

#include "cargo_workspace.hpp"
#include "rust_support.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const fs::path kCargoOffload = fs::path(OB_BINARY).parent_path() / "cargo-offload";

}  // namespace

TEST_CASE("offload-build cargo --help and cargo offload --help list what they take", "[integration][rust]") {
  for (const auto& r : {run_ob({"cargo", "--help"}), run_tool({kCargoOffload.string(), "offload", "--help"})}) {
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains(" build [CARGO ARGS]") && Catch::Contains(" run [--verify] [CARGO ARGS]") &&
                          Catch::Contains(" test [CARGO ARGS]") && Catch::Contains(" check|clippy [CARGO ARGS]") &&
                          Catch::Contains("--target T[,T...]") && Catch::Contains("cargo +TOOLCHAIN offload"));
  }
}

TEST_CASE("cargo's options before the command word get the corrected command line", "[integration][rust]") {
  // No rustc needed: the arguments are checked before anything runs.
  TempDir tmp{"ob-cargo-args"};
  const std::string dir = tmp.path().string();
  auto r = run_ob({"-C", dir, "--release", "cargo", "build", "--bin", "app"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("offload-build: error: --release is cargo's, not offload-build's: it goes after "
                                    "`build`:\n  offload-build -C " + dir + " cargo build --release --bin app\n"));
  auto sub = run_tool({kCargoOffload.string(), "offload", "-v", "--release", "--features", "sq", "run", "--verify"});
  CHECK(sub.exit_code == 2);
  CHECK_THAT(sub.err, Catch::Contains("cargo offload: error: --release --features sq are cargo's, not offload-build's: "
                                      "they go after `run`:\n  cargo offload -v run --release --features sq --verify\n"));
}

TEST_CASE("a pinned toolchain is honoured: one that is not there stops the build with the reason",
          "[integration][rust]") {
  TempDir tmp{"ob-cargo-pin"};
  const fs::path ws = factor_workspace(tmp / "ws");
  write_file(ws / "rust-toolchain.toml", "[toolchain]\nchannel = \"nightly-1999-01-01\"\n");
  const Env clean{{"RUSTC", std::nullopt}, {"RUSTUP_TOOLCHAIN", std::nullopt}, {"RUSTUP_TOOLCHAIN_SOURCE", std::nullopt}};
  auto pinned = run_ob({"-C", (ws / "app").string(), "cargo", "build"}, {}, clean);
  INFO(pinned.out << pinned.err);
  CHECK(pinned.exit_code == 2);
  CHECK_THAT(pinned.err, Catch::Contains("toolchain nightly-1999-01-01 (from " + (ws / "rust-toolchain.toml").string() +
                                         ") is not installed: `rustup toolchain install nightly-1999-01-01`"));
  // cargo +TOOLCHAIN offload: rustup names it in the environment, and it wins over the file.
  Env plus = {{"RUSTC", std::nullopt}, {"RUSTUP_TOOLCHAIN", "nope-toolchain"}, {"RUSTUP_TOOLCHAIN_SOURCE", "cli"}};
  auto cli = run_ob({"-C", (ws / "app").string(), "cargo", "build"}, {}, plus);
  CHECK(cli.exit_code == 2);
  CHECK_THAT(cli.err, Catch::Contains("toolchain nope-toolchain (from cargo +nope-toolchain (rustup's +toolchain)) is "
                                      "not installed"));
}

TEST_CASE("cargo test runs the package's tests with the offload passes, cargo check checks both sides",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-test"};
  const fs::path ws = factor_workspace(tmp / "ws");
  write_file(ws / "app/src/main.rs", "fn main() {\n    println!(\"{}\", kern::report());\n}\n\n#[cfg(test)]\nmod tests {\n"
                                     "    #[test]\n    fn kernel_computes_what_the_host_expects() {\n"
                                     "        assert!(kern::report().ends_with(\" OK\"), \"{}\", kern::report());\n    }\n}\n");
  // Run from the workspace root: its one program is the package, no -p needed.
  auto test = run_ob({"-C", ws.string(), "--cache-dir", (tmp / "cache").string(), "cargo", "test"}, {}, kMandatory);
  INFO(test.out << test.err);
  CHECK(test.exit_code == 0);
  CHECK_THAT(test.out, Catch::Contains("test tests::kernel_computes_what_the_host_expects ... ok") &&
                           Catch::Contains("test result: ok. 1 passed"));
  CHECK_THAT(test.err, Catch::Contains("] device host kern"));

  // A mistake only the device side compiles: cargo check alone misses it.
  edit_file(ws / "kern/src/lib.rs", "    let x = unsafe { &mut *x };", "    let x = unsafe { &mut *x };\n    let _wrong: u32 = 1.5;");
  auto check = run_ob({"-C", ws.string(), "cargo", "check"});
  INFO(check.out << check.err);
  CHECK(check.exit_code == 1);
  CHECK_THAT(check.err, Catch::Contains("mismatched types") && Catch::Contains("device host kern"));
  edit_file(ws / "kern/src/lib.rs", "\n    let _wrong: u32 = 1.5;", "");
  auto clean = run_ob({"-C", ws.string(), "cargo", "check"});
  INFO(clean.out << clean.err);
  CHECK(clean.exit_code == 0);
}

TEST_CASE("init --lang cargo: a host-only edit reruns no device compile", "[integration][rust][init]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-init-cargo-host"};
  const fs::path dir = tmp.path() / "edits", cache = tmp.path() / "cache";
  REQUIRE(run_ob({"init", "--lang", "cargo", dir.string()}).exit_code == 0);
  auto first = run_ob({"-C", dir.string(), "--cache-dir", cache.string(), "cargo", "run"}, {}, kMandatory);
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.out == "edits: n=1024 y[10]=21 mismatches=0 OK\n");
  CHECK_FALSE(Catch::Contains("println").match(read_file(dir / "src/lib.rs")));  // the host code is in host.rs
  edit_file(dir / "src/host.rs", "println!(\"edits: n={}", "println!(\"edited: n={}");
  auto again = run_ob({"-C", dir.string(), "--cache-dir", cache.string(), "cargo", "run"}, {}, kMandatory);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out == "edited: n=1024 y[10]=21 mismatches=0 OK\n");
  // cargo found the device pass fresh: no rustc ran for the device.
  CHECK_THAT(device_line(again.err, "host"), Catch::EndsWith(" (fresh)"));
  CHECK_FALSE(Catch::Contains("Compiling edits").match(again.err.substr(0, again.err.find("] device host"))));
}

TEST_CASE("a pinned stable toolchain is honoured: never silently replaced by the nightly", "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-stable"};
  const fs::path ws = factor_workspace(tmp / "ws");
  const Env clean{{"RUSTC", std::nullopt}, {"RUSTUP_TOOLCHAIN", std::nullopt}, {"RUSTUP_TOOLCHAIN_SOURCE", std::nullopt}};
  write_file(ws / "rust-toolchain.toml", "[toolchain]\nchannel = \"stable\"\n");
  auto pinned = run_ob({"-C", (ws / "app").string(), "cargo", "build"}, {}, clean);
  INFO(pinned.out << pinned.err);
  CHECK(pinned.exit_code == 2);
  // Installed: not a nightly; not installed: rustup's own words. Either way no other rustc.
  CHECK_THAT(pinned.err, (Catch::Contains("(from toolchain stable from " + (ws / "rust-toolchain.toml").string() +
                                          ") is not a nightly rustc") &&
                          Catch::Contains("offload-build uses the toolchain you pinned rather than replace it")) ||
                             Catch::Contains("toolchain stable (from " + (ws / "rust-toolchain.toml").string() +
                                             ") is not installed"));
  CHECK_FALSE(fs::exists(ws / "target"));  // nothing built with another rustc
  // cargo +nightly offload wins over the file, as rustup's +toolchain does.
  const Env plus{{"RUSTC", std::nullopt}, {"RUSTUP_TOOLCHAIN", "nightly"}, {"RUSTUP_TOOLCHAIN_SOURCE", "cli"}};
  auto nightly = run_ob({"-C", (ws / "app").string(), "cargo", "run"}, {}, plus);
  INFO(nightly.out << nightly.err);
  CHECK(nightly.exit_code == 0);
  CHECK(nightly.out == "x[7]=7 expect=7 OK\n");
}

TEST_CASE("cargo clippy lints the device side too", "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-clippy"};
  const fs::path ws = factor_workspace(tmp / "ws");
  // A kernel takes raw pointers and dereferences them: clippy's
  // not_unsafe_ptr_arg_deref (deny by default) says so for every kernel, on the
  // device side; arguments after -- reach clippy on both sides.
  const std::vector<std::string> allow{"--", "-A", "clippy::not_unsafe_ptr_arg_deref"};
  auto kernel_lint = run_ob({"-C", ws.string(), "cargo", "clippy"});
  CHECK(kernel_lint.exit_code == 1);
  CHECK_THAT(kernel_lint.err, Catch::Contains("clippy::not_unsafe_ptr_arg_deref") && Catch::Contains("device host kern"));
  std::vector<std::string> argv{"-C", ws.string(), "cargo", "clippy"};
  argv.insert(argv.end(), allow.begin(), allow.end());
  auto clean = run_ob(argv);
  INFO(clean.out << clean.err);
  CHECK(clean.exit_code == 0);
  CHECK_THAT(clean.err, Catch::Contains("] device host kern"));
  // clippy::eq_op (deny by default) in the kernel: code only the device pass compiles.
  edit_file(ws / "kern/src/lib.rs", "    let x = unsafe { &mut *x };", "    let x = unsafe { &mut *x };\n    let n = N;\n    if n != n { return; }");
  auto lint = run_ob(argv);
  INFO(lint.out << lint.err);
  CHECK(lint.exit_code == 1);
  CHECK_THAT(lint.err, Catch::Contains("equal expressions") && Catch::Contains("device host kern"));
}
