// The device-code checks of Rust offload crates (rust_checks.cpp): std and alloc
// in device code, a static mut used by a kernel, generic kernels, the cfg scope
// of each item, and the warning for a panic handler that only loops.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "offload_build/toolchain/frontends/rust_kernels.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::toolchain::rust;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// A good crate; DEVICE is replaced by device items, KERNEL by the kernel's body.
const char* kCrate = R"(#![feature(rustc_attrs)]
#![cfg_attr(offload_device, no_std)]

#[cfg(offload_device)]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! { unsafe { abort() } }
DEVICE
#[cfg(offload_device)]
#[unsafe(no_mangle)]
#[rustc_offload_kernel]
pub extern "C" fn kernel_1(_dyn_ptr: *mut u8, x: *mut [f64; 4]) {
    KERNEL
}

#[cfg(not(offload_device))]
unsafe extern "C" {
    pub fn kernel_1(x: *mut [f64; 4]);
}

#[cfg(not(offload_device))]
fn main() {
    let mut x = vec![0.0f64; 4];  // host code may use std: println!, Vec, String
    let s: String = format!("{:?}", x);
    std::process::exit(0);
}
)";

std::string crate_with(const std::string& device, const std::string& kernel = "") {
  std::string s = kCrate;
  s.replace(s.find("DEVICE"), 6, device);
  s.replace(s.find("KERNEL"), 6, kernel);
  return s;
}

CrateScan scan_of(const std::string& text) {
  CrateScan scan;
  scan.files.push_back("/p/src/main.rs");
  scan_text(text, "/p/src/main.rs", scan);
  return scan;
}

Result<void> check(const std::string& text, std::string* warnings = nullptr) {
  std::ostringstream w;
  auto r = check_crate(scan_of(text), "offload_device", "/p", w);
  if (warnings) *warnings = w.str();
  return r;
}

void require_error(const std::string& text, const std::string& what) {
  auto r = check(text);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == exit_code::failure);
  CHECK_THAT(r.error().message, Contains(what));
}

void require_ok(const std::string& text) {
  auto r = check(text);
  INFO((r.ok() ? std::string() : r.error().message));
  CHECK(r.ok());
}

}  // namespace

TEST_CASE("cfg scopes: what the device pass compiles", "[rust][checks]") {
  auto scan = scan_of(R"(
#[cfg(offload_device)] fn a() {}
#[cfg(not(offload_device))] fn b() {}
fn c() {}
#[cfg(feature = "x")] fn d() {}
#[cfg(all(offload_device, not(test)))] fn e() {}
#[cfg(any(offload_device, feature = "x"))] fn f() {}
#[cfg(all(not(offload_device), feature = "x"))] fn g() {}
#[cfg(not(offload_device))]
mod host {
    static T: [u8; 2] = [1, 2];
    fn h() {}
}
mod inner {
    #![cfg(offload_device)]
    fn i() {}
}
fn j() {}
)");
  std::map<std::string, Compiled> seen;
  for (const auto& f : scan.functions) seen[f.name] = device_compiles(scan, f.scope, "offload_device");
  CHECK(seen == std::map<std::string, Compiled>{{"a", Compiled::Yes},   {"b", Compiled::No},
                                                {"c", Compiled::Yes},   {"d", Compiled::Maybe},
                                                {"e", Compiled::Maybe}, {"f", Compiled::Yes},
                                                {"g", Compiled::No},    {"h", Compiled::No},
                                                {"i", Compiled::Yes},   {"j", Compiled::Yes}});
  // Another device cfg: `offload_device` is then just an unknown name.
  CHECK(device_compiles(scan, scan.functions[0].scope, "gpu") == Compiled::Maybe);
}

TEST_CASE("device code that uses std is an error that says what to use", "[rust][checks]") {
  require_ok(crate_with(""));
  SECTION("println! in a kernel") {
    require_error(crate_with("", "println!(\"x\");"),
                  "src/main.rs:12: error: device kernel `kernel_1` uses `println!`, which comes from `std`, "
                  "but device code is no_std: only `core` exists on the device; there is no stdout or stderr "
                  "on the device: write the values to an output buffer the host passes in");
  }
  SECTION("Vec in a device function") {
    require_error(crate_with("#[cfg(offload_device)]\nfn helper() -> usize { let v: Vec<u8> = Vec::new(); v.len() }"),
                  "src/main.rs:8: error: device function `helper` uses `Vec`, which comes from `std`, but "
                  "device code is no_std: only `core` exists on the device; there is no heap on the device: "
                  "use fixed-size arrays ([f32; N]) or slices, or a buffer the host allocates and passes in");
  }
  SECTION("vec!, format!, String and Box") {
    require_error(crate_with("", "let v = vec![1.0];"), "device kernel `kernel_1` uses `vec!`");
    require_error(crate_with("", "let s = format!(\"{}\", 1);"), "uses `format!`, which comes from `std`");
    require_error(crate_with("#[cfg(offload_device)]\nstatic S: Option<String> = None;"),
                  "src/main.rs:8: error: device code uses `String`, which comes from `std`");
    require_error(crate_with("", "let b: Box<f64> = unsafe { core::mem::zeroed() };"), "uses `Box`");
  }
  SECTION("a std path with a core counterpart, and one without") {
    require_error(crate_with("", "let m = std::cmp::max(1, 2);"),
                  "uses `std::cmp::max`, which comes from `std`, but device code is no_std: only `core` "
                  "exists on the device; use `core::cmp::max` instead (std re-exports it from core)");
    require_error(crate_with("#[cfg(offload_device)]\nuse std::io::Write;"),
                  "src/main.rs:8: error: device code uses `std::io::Write`, which comes from `std`, but "
                  "device code is no_std: only `core` exists on the device; `std::io` has no counterpart in "
                  "core (the device has no operating system and no heap): do that on the host");
  }
  SECTION("unconditional code is compiled by the device pass too") {
    require_error(crate_with("fn shared() { println!(\"both passes\"); }"), "src/main.rs:7: error: device function "
                                                                           "`shared` uses `println!`");
  }
  SECTION("no false positives") {
    // Comments, strings, core and alloc paths, the crate's own names, other cfgs, host code.
    require_ok(crate_with("// println!(\"x\"); Vec String std::io\n"
                          "#[cfg(offload_device)]\nconst MSG: &str = \"println! Vec std::io\";\n"
                          "#[cfg(offload_device)]\nstruct Vec2 { x: f32 }\n"
                          "#[cfg(feature = \"std\")]\nfn with_std() { println!(\"x\"); }\n"
                          "#[cfg(test)]\nmod tests { fn t() { let v = vec![1]; } }\n"
                          "#[cfg(not(offload_device))]\nmod host { pub fn run() { println!(\"{:?}\", std::env::args()); } }\n"
                          "#[cfg(offload_device)]\nmacro_rules! format { ($($t:tt)*) => { 0 } }\n",
                          "let m = core::cmp::max(1, 2); let _ = format!(\"mine\"); let p = x.len; /* vec!() */"));
    // A crate that is not no_std in the device pass: rustc accepts std there.
    std::string with_std = crate_with("", "println!(\"x\");");
    with_std.replace(with_std.find("#![cfg_attr(offload_device, no_std)]"), 36, "");
    require_ok(with_std);
  }
}

TEST_CASE("alloc without an allocator in the device crate", "[rust][checks]") {
  require_error(crate_with("#[cfg(offload_device)]\nextern crate alloc;"),
                "src/main.rs:8: error: the device crate uses `alloc` (`extern crate alloc`) but has no "
                "#[global_allocator]: there is no allocator on the device");
  require_error(crate_with("extern crate alloc;"), "drop `extern crate alloc` from the device pass (put it "
                                                   "under #[cfg(not(offload_device))])");
  require_ok(crate_with("#[cfg(not(offload_device))]\nextern crate alloc;"));
  require_ok(crate_with("#[cfg(offload_device)]\nextern crate alloc;\n#[cfg(offload_device)]\n#[global_allocator]\n"
                        "static A: Bump = Bump;"));
}

TEST_CASE("a static mut used by a kernel names the static and the kernel", "[rust][checks]") {
  require_error(crate_with("static mut HITS: u32 = 0;", "unsafe { HITS += 1; }"),
                "src/main.rs:12: error: device kernel `kernel_1` uses `static mut HITS` (src/main.rs:7): the "
                "device has its own copy of every static, which the host never sees (the host's `HITS` is not "
                "mapped to the device)");
  require_error(crate_with("static mut HITS: u32 = 0;", "unsafe { HITS += 1; }"),
                "pass a pointer instead: add a parameter such as `out: *mut T` to the kernel");
  require_ok(crate_with("static TABLE: [f64; 2] = [1.0, 2.0];", "unsafe { (*x)[0] = TABLE[1]; }"));
  require_ok(crate_with("#[cfg(not(offload_device))]\nstatic mut HITS: u32 = 0;\n"
                        "#[cfg(not(offload_device))]\nfn count() { unsafe { HITS += 1 } }"));
}

TEST_CASE("a generic kernel is an error with the wrapper to write", "[rust][checks]") {
  std::string generic = crate_with("");
  generic.replace(generic.find("kernel_1(_dyn_ptr"), 8, "kernel_1<T: Copy>");
  require_error(generic,
                "src/main.rs:11: error: device kernel `kernel_1` is generic over `T`: a kernel cannot be "
                "generic, because the host launches it by its unmangled symbol");
  require_error(generic, "Write one non-generic kernel per type that calls a generic helper, e.g. "
                         "`#[unsafe(no_mangle)] pub extern \"C\" fn kernel_1_f32(_dyn_ptr: *mut u8, ...) { "
                         "kernel_1_impl::<f32>(...) }`");
  // Also before the no_mangle check, whose advice would not help.
  std::string mangled = generic;
  mangled.replace(mangled.find("#[unsafe(no_mangle)]\n"), 21, "");
  require_error(mangled, "is generic over `T`");

  std::string konst = crate_with("");
  konst.replace(konst.find("kernel_1(_dyn_ptr"), 8, "kernel_1<'a, const N: usize>");
  require_error(konst, "device kernel `kernel_1` is generic over `const N`");
  std::string lifetime = crate_with("");
  lifetime.replace(lifetime.find("kernel_1(_dyn_ptr"), 8, "kernel_1<'a>");
  require_ok(lifetime);
  // A generic helper the kernel calls is fine.
  require_ok(crate_with("#[cfg(offload_device)]\nfn helper<T: Copy>(v: T) -> T { v }", "let _ = helper(1.0);"));
}

TEST_CASE("a panic handler that only loops gets a warning", "[rust][checks]") {
  std::string looping = crate_with("");
  looping.replace(looping.find("unsafe { abort() }"), 18, "loop {}");
  std::string warnings;
  CHECK(check(looping, &warnings).ok());
  CHECK(warnings ==
        "src/main.rs:6: warning: the device crate's #[panic_handler] `panic` only loops: it never returns or "
        "ends the program, so a kernel that panics hangs the program instead of failing it; make the handler "
        "end the program: on the host device (x86_64) write \"device kernel panicked at FILE:LINE:COL\" to "
        "stderr with libc's `write` and call libc's `abort()`; on a GPU target (#![no_core]) trap. See "
        "docs/RUST.md#panics\n");

  std::string spinning = crate_with("");
  spinning.replace(spinning.find("unsafe { abort() }"), 18, "loop { core::hint::spin_loop(); }");
  CHECK(check(spinning, &warnings).ok());
  CHECK_THAT(warnings, StartsWith("src/main.rs:6: warning: the device crate's #[panic_handler] `panic`"));

  CHECK(check(crate_with(""), &warnings).ok());  // it aborts
  CHECK(warnings.empty());
  std::string loop_with_exit = crate_with("");
  loop_with_exit.replace(loop_with_exit.find("unsafe { abort() }"), 18, "loop { unsafe { abort() } }");
  CHECK(check(loop_with_exit, &warnings).ok());
  CHECK(warnings.empty());
  std::string host_only = looping;
  host_only.replace(host_only.find("#[cfg(offload_device)]\n#[panic_handler]"), 22, "#[cfg(not(offload_device))]");
  CHECK(check(host_only, &warnings).ok());
  CHECK(warnings.empty());
}

TEST_CASE("module files take the cfg scope of their mod declaration", "[rust][checks]") {
  test::TempDir tmp("ob-rust-checks");
  auto write = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((tmp.path() / rel).parent_path());
    std::ofstream(tmp.path() / rel) << text;
  };
  write("src/lib.rs", "#![cfg_attr(offload_device, no_std)]\npub mod kernel;\n#[cfg(not(offload_device))]\npub mod host;\n");
  const std::string kernel = "#[cfg(offload_device)]\n#[unsafe(no_mangle)]\n#[rustc_offload_kernel]\n"
                             "pub extern \"C\" fn k(_p: *mut u8, x: *mut f64) {}\n"
                             "#[cfg(not(offload_device))]\nunsafe extern \"C\" { pub fn k(x: *mut f64); }\n";
  write("src/kernel.rs", kernel);
  write("src/host.rs", "pub fn run() { let v: Vec<f64> = vec![1.0]; println!(\"{:?}\", v); }\n");
  CHECK(check_crate(scan_crate(tmp.path() / "src/lib.rs"), "offload_device", tmp.path()).ok());

  write("src/kernel.rs", kernel + "pub fn shared() { println!(\"x\"); }\n");
  auto r = check_crate(scan_crate(tmp.path() / "src/lib.rs"), "offload_device", tmp.path());
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, StartsWith("src/kernel.rs:7: error: device function `shared` uses `println!`"));
}
