// Rust failure paths: no (nightly) rustc, a crate without the device cfg split,
// a kernel the runtime could not find, device code rustc or the device link would
// reject (std, alloc, a static mut, a generic kernel), a panic handler that hangs.
// Each is a plain message, never a raw compiler panic; the crate checks need no
// rustc at all.
#include <algorithm>

#include "rust_support.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// A "stable" rustc that only answers --version.
fs::path fake_stable_rustc(const fs::path& dir) {
  const fs::path p = dir / "fake-rustc";
  write_file(p, "#!/bin/sh\necho 'rustc 1.95.0 (59807616e 2026-04-14)'\n");
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

// "src/main.rs:N" where N is the line of the first `needle` in the crate root,
// plus `offset`: the examples' line numbers are not the tests' business.
std::string at_line(const fs::path& dir, const std::string& needle, int offset = 0) {
  const std::string text = read_file(dir / "src/main.rs");
  const size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  return "src/main.rs:" + std::to_string(std::count(text.begin(), text.begin() + at, '\n') + 1 + offset);
}

const std::string kSaxpy = "pub extern \"C\" fn saxpy(";

}  // namespace

TEST_CASE("no nightly rustc: a clear error that says what to install", "[integration][rust]") {
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  const fs::path stable = fake_stable_rustc(tmp.path());

  auto via_env = run_ob({"-C", dir.string(), "build"}, {}, {{"RUSTC", stable.string()}});
  CHECK(via_env.exit_code == 2);
  CHECK_THAT(via_env.err, Catch::Contains("offload-build: error: rustc 1.95.0 (59807616e 2026-04-14) at " +
                                          stable.string() + " (from $RUSTC) is not a nightly rustc") &&
                              Catch::Contains("rustup toolchain install nightly") &&
                              Catch::Contains("or unset $RUSTC"));
  CHECK_FALSE(fs::exists(dir / "build/rust-saxpy"));

  auto missing = run_ob({"-C", dir.string(), "build"}, {}, {{"RUSTC", "/nonexistent/rustc"}});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("$RUSTC=/nonexistent/rustc is not an executable file; Rust "
                                          "offload needs a nightly rustc with -Zoffload"));

  if (!fs::exists("/usr/bin/rustc") && !fs::exists("/bin/rustc")) {
    auto none = run_ob({"-C", dir.string(), "build"}, {},
                       {{"RUSTC", std::nullopt}, {"PATH", "/usr/bin:/bin"}, {"HOME", tmp.path().string()},
                        {"RUSTUP_HOME", (tmp.path() / "rustup").string()}});
    CHECK(none.exit_code == 2);
    CHECK_THAT(none.err, Catch::Contains("no rustc found (looked at $RUSTC, the rustup nightly toolchain and "
                                         "PATH); Rust offload needs a nightly rustc with -Zoffload: install "
                                         "a nightly with `rustup toolchain install nightly`"));
  }

  write_file(dir / "offload.json", R"({"name": "rust-saxpy", "sources": ["src/main.rs"], "targets": ["host"],
  "toolchain": {"rustc": ")" + stable.string() + R"("}})");
  auto via_manifest = run_ob({"-C", dir.string(), "build"});
  CHECK(via_manifest.exit_code == 2);
  CHECK_THAT(via_manifest.err, Catch::Contains("(from offload.json) is not a nightly rustc"));

  auto cargo = run_ob({"-C", copy_rust_example("rust-cargo", tmp.path()).string(), "cargo", "build"}, {},
                      {{"RUSTC", stable.string()}});
  CHECK(cargo.exit_code == 2);
  CHECK_THAT(cargo.err, Catch::Contains("is not a nightly rustc"));
}

TEST_CASE("a crate without the device cfg split is explained before rustc runs", "[integration][rust]") {
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  std::string src = read_file(dir / "src/main.rs");
  for (size_t at; (at = src.find("offload_device")) != std::string::npos;) src.replace(at, 14, "gpu_side");
  write_file(dir / "src/main.rs", src);
  auto r = run_ob({"-C", dir.string(), "build"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::StartsWith(at_line(dir, kSaxpy) + ": error: the crate never tests cfg(offload_device), the "
                                      "cfg offload-build sets for the device pass only (it tests "
                                      "cfg(gpu_side) instead: rename that to offload_device, or set "
                                      "\"device_cfg\": \"gpu_side\" in offload.json)"));
  CHECK_FALSE(fs::exists(dir / "build"));

  // Naming the cfg in the manifest is the other fix.
  OB_REQUIRE_NIGHTLY_RUSTC();
  edit_file(dir / "offload.json", "\"language\": \"rust\",", "\"language\": \"rust\", \"device_cfg\": \"gpu_side\",");
  auto fixed = run_ob({"-C", dir.string(), "run"});
  INFO(fixed.err);
  CHECK(fixed.exit_code == 0);
  CHECK_THAT(fixed.out, Catch::EndsWith("mismatches=0 OK\n"));
}

TEST_CASE("a kernel without no_mangle or the launch pointer is explained at its launch", "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  const std::string original = read_file(dir / "src/main.rs");
  const std::string launch = "core::intrinsics::offload(saxpy";

  // What rustc compiled decides (rust_mir.hpp): the image has no `saxpy`.
  edit_file(dir / "src/main.rs", "#[unsafe(no_mangle)]\n", "");
  auto mangled = run_ob({"-C", dir.string(), "build"});
  INFO(mangled.err);
  CHECK(mangled.exit_code == 1);
  CHECK_THAT(mangled.err, Catch::Contains(at_line(dir, launch) + ":5: error: this launch of `saxpy` finds no "
                                          "kernel `saxpy` in the host device image, which defines no kernel") &&
                              Catch::Contains("(without #[unsafe(no_mangle)] its symbol is mangled)"));
  CHECK_FALSE(fs::exists(dir / "build/rust-saxpy"));

  write_file(dir / "src/main.rs", original);
  edit_file(dir / "src/main.rs", "_dyn_ptr: *mut u8, ", "");
  auto no_env = run_ob({"-C", dir.string(), "build"});
  CHECK(no_env.exit_code == 1);
  CHECK_THAT(no_env.err, Catch::Contains(at_line(dir, launch) + ":5: error: kernel `saxpy` (host device image) "
                                         "takes 3 parameter(s) and this launch passes 3: the offload runtime passes a "
                                         "launch-environment pointer before the kernel's own arguments"));
  CHECK_FALSE(fs::exists(dir / "build/rust-saxpy"));
}

// The device-code checks: each a single message naming file:line and what to do,
// before any rustc runs (no build directory; no rustc is needed for them).
namespace {

using Edits = std::vector<std::pair<std::string, std::string>>;

// The crate at `dir` with `edits` applied to src/main.rs: the build stops with one
// error that starts with `starts` and contains `says`, and no build directory.
void require_refused(const fs::path& dir, const Edits& edits, const std::string& starts, const std::string& says) {
  for (const auto& [from, to] : edits) edit_file(dir / "src/main.rs", from, to);
  auto r = run_ob({"-C", dir.string(), "build"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::StartsWith(starts) && Catch::Contains(says));
  CHECK(count_occurrences(r.err, "error:") == 1);
  CHECK_FALSE(fs::exists(dir / "build"));
}

const std::string kLetA = "        let a = (*a)[0];\n";
const std::string kConstN = "const N: usize = 1024;\n";

}  // namespace

TEST_CASE("a kernel that uses std is explained before rustc runs", "[integration][rust]") {
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  require_refused(dir, {{kLetA, kLetA + "        println!(\"a = {}\", a);\n"}},
                  at_line(dir, kLetA, 1) + ": error: device kernel `saxpy` uses `println!`, which comes from "
                  "`std`, but device code is no_std: only `core` exists on the device; ",
                  "there is no stdout or stderr on the device: write the values to an output buffer the host "
                  "passes in (a pointer argument) and print them on the host");

  // The cargo flow checks the library crate the same way.
  OB_REQUIRE_NIGHTLY_RUSTC();
  const fs::path pkg = copy_rust_example("rust-cargo", tmp.path());
  edit_file(pkg / "src/kernel.rs", "let mut i = 0;\n", "let mut i = 0;\n        let v: Vec<f64> = Vec::new();\n");
  auto cargo = run_ob({"-C", pkg.string(), "cargo", "build"});
  CHECK(cargo.exit_code == 1);
  CHECK_THAT(cargo.err, Catch::Matches("src/kernel\\.rs:[0-9]+: error: device kernel `scale_add` uses `Vec`, which "
                                       "comes from `std`, but device code is no_std(.|\n)*"));
  CHECK_FALSE(fs::exists(pkg / "target"));
}

TEST_CASE("alloc in the device crate without an allocator is explained before rustc runs", "[integration][rust]") {
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  require_refused(dir, {{kConstN, kConstN + "#[cfg(offload_device)]\nextern crate alloc;\n"}},
                  at_line(dir, kConstN, 2) + ": error: the device crate uses `alloc` (`extern crate alloc`) but "
                  "has no #[global_allocator]: there is no allocator on the device",
                  "drop `extern crate alloc` from the device pass");
}

TEST_CASE("a static mut used by a kernel is explained before rustc runs", "[integration][rust]") {
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  require_refused(dir, {{kConstN, kConstN + "static mut SCALE: f32 = 1.0;\n"}, {"let a = (*a)[0];", "let a = (*a)[0] * SCALE;"}},
                  at_line(dir, kLetA, 1) + ": error: device kernel `saxpy` uses `static mut SCALE` (" +
                      at_line(dir, kConstN, 1) + "): the device has its own copy of every static, which the host "
                      "never sees (the host's `SCALE` is not mapped to the device)",
                  "pass a pointer instead");
}

TEST_CASE("a generic kernel is explained before rustc runs", "[integration][rust]") {
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  require_refused(dir, {{kSaxpy, "pub extern \"C\" fn saxpy<T: Copy>("}},
                  at_line(dir, kSaxpy) + ": error: device kernel `saxpy` is generic over `T`: a kernel cannot be generic",
                  "Write one non-generic kernel per type that calls a generic helper");
}

TEST_CASE("a panic handler that only loops gets a warning and the build goes on", "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  const std::string handler = "#[cfg(offload_device)]\n#[panic_handler]\nfn hang(_: &core::panic::PanicInfo) -> ! {\n    BODY\n}\n";
  const std::string looping = handler.substr(0, handler.find("BODY")) + "loop {}" + handler.substr(handler.find("BODY") + 4);
  std::string src = read_file(dir / "src/main.rs");
  // The example's own handler gives way to one that loops, right after `const N`.
  const size_t from = src.find("#[cfg(offload_device)]\n#[panic_handler]");
  REQUIRE(from != std::string::npos);
  src.erase(from, src.find("\n}\n", from) + 3 - from);
  src.replace(src.find(kConstN), kConstN.size(), kConstN + looping);
  write_file(dir / "src/main.rs", src);
  auto r = run_ob({"-C", dir.string(), "--dry-run", "build"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::StartsWith(at_line(dir, "fn hang") + ": warning: the device crate's #[panic_handler] "
                                      "`hang` only loops: it never returns or ends the program") &&
                        Catch::Contains("See docs/RUST.md#panics"));
  CHECK_THAT(r.out, Catch::Contains("--cfg offload_device"));  // the device pass still runs

  // A handler that ends the program gets no warning.
  edit_file(dir / "src/main.rs", "    loop {}\n", "    unsafe { abort() }\n");
  auto quiet = run_ob({"-C", dir.string(), "--dry-run", "build"});
  CHECK(quiet.exit_code == 0);
  CHECK_THAT(quiet.err, !Catch::Contains("warning"));
}

TEST_CASE("kernel signatures this rustc cannot launch are refused before rustc runs", "[integration][rust]") {
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  const std::string original = read_file(dir / "src/main.rs");
  // A scalar by value: without the check it builds, then crashes when the kernel runs.
  require_refused(dir,
                  {{"_dyn_ptr: *mut u8, a: *const [f32; 1],", "_dyn_ptr: *mut u8, a: f32,"},
                   {"let a = (*a)[0];", "let a = a;"},
                   {"pub fn saxpy(a: *const [f32; 1],", "pub fn saxpy(a: f32,"},
                   {"(a as *const _, x", "(a[0], x"}},
                  at_line(dir, kSaxpy) + ":44: error: device kernel `saxpy` takes `a: f32` by value",
                  "take a pointer instead, `a: *const f32` in the kernel and in its host declaration");
  // extern "gpu-kernel" on the host side: rustc's E0570, with the hint.
  write_file(dir / "src/main.rs", original);
  require_refused(dir, {{"unsafe extern \"C\" {\n    pub fn saxpy", "unsafe extern \"gpu-kernel\" {\n    pub fn saxpy"}},
                  at_line(dir, "    pub fn saxpy(") + ":12: error: the host declaration of kernel `saxpy` is in an "
                                                      "`extern \"gpu-kernel\"` block",
                  "declare kernels on the host side as `unsafe extern \"C\" { fn saxpy(...); }`");
}
