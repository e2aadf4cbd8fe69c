// Rust kernels and launches from what rustc compiled (its MIR and the images'
// symbols), not from reading the source: kernels a macro_rules!, include!, a
// proc macro or build.rs writes are in the image; launches in the turbofish
// form, through paths (`self::`, `crate::`) or declared with constant
// expressions are seen and checked after rustc evaluated them; a launch of a
// kernel no image has, a kernel without the launch-environment pointer, an
// argument of another type and a read-only argument a kernel writes through
// are errors at build time naming the launch's file:line:column.
#include <algorithm>

#include "rust_support.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// One crate, every way of writing a kernel and a launch the reader missed.
const char* kMain = R"(#![feature(rustc_attrs)]
#![cfg_attr(not(offload_device), feature(core_intrinsics))]
#![allow(internal_features)]
#![cfg_attr(offload_device, no_std)]
const N: usize = 64;

#[cfg(offload_device)]
unsafe extern "C" {
    fn abort() -> !;
}

#[cfg(offload_device)]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe { abort() }
}

// A kernel written by a macro.
macro_rules! kernel {
    ($name:ident, $t:ty) => {
        #[cfg(offload_device)]
        #[unsafe(no_mangle)]
        #[rustc_offload_kernel]
        pub extern "C" fn $name(_dyn_ptr: *mut u8, x: *mut [$t; N]) {
            unsafe { for i in 0..N { (*x)[i] += 1 as $t; } }
        }
    };
}
kernel!(bump_u32, u32);

// A kernel in a module, its length a constant expression.
#[cfg(offload_device)]
mod dev {
    #[unsafe(no_mangle)]
    #[rustc_offload_kernel]
    pub extern "C" fn twice(_dyn_ptr: *mut u8, x: *mut [u32; 2 * 32]) {
        unsafe { for i in 0..super::N { (*x)[i] *= 2; } }
    }
}

// A kernel from another file.
#[cfg(offload_device)]
include!("triple.rs");

#[cfg(not(offload_device))]
mod host {
    unsafe extern "C" {
        pub fn bump_u32(x: *mut [u32; crate::N]);
        pub fn twice(x: *mut [u32; 64]);
        pub fn triple(x: *mut [u32; crate::N]);
    }
}

#[cfg(not(offload_device))]
fn main() {
    let mut v = [1u32; N];
    core::intrinsics::offload::<_, _, ()>(host::bump_u32, [1, 1, 1], [1, 1, 1], (&raw mut v,));
    core::intrinsics::offload::<_, _, ()>(self::host::twice, [1, 1, 1], [1, 1, 1], (&raw mut v,));
    core::intrinsics::offload::<_, _, ()>(crate::host::triple, [1, 1, 1], [1, 1, 1], (&raw mut v,));
    println!("v[0]={} v[63]={}", v[0], v[N - 1]);
}
)";

const char* kTriple = R"(#[unsafe(no_mangle)]
#[rustc_offload_kernel]
pub extern "C" fn triple(_dyn_ptr: *mut u8, x: *mut [u32; N]) {
    unsafe { for i in 0..N { (*x)[i] *= 3; } }
}
)";

fs::path make_crate(const fs::path& root) {
  const fs::path dir = root / "truth";
  fs::create_directories(dir / "src");
  write_file(dir / "offload.json", R"({"name": "truth", "language": "rust", "sources": ["src/main.rs"],
  "targets": ["host"], "flags": ["--edition=2024", "-O"]})");
  write_file(dir / "src/main.rs", kMain);
  write_file(dir / "src/triple.rs", kTriple);
  return dir;
}

// "src/main.rs:L:C" of the first `needle` in src/main.rs (C: 1-based, of the needle).
std::string at(const fs::path& dir, const std::string& needle) {
  const std::string text = read_file(dir / "src/main.rs");
  const size_t pos = text.find(needle);
  REQUIRE(pos != std::string::npos);
  const size_t line_start = text.rfind('\n', pos) + 1;
  return "src/main.rs:" + std::to_string(std::count(text.begin(), text.begin() + pos, '\n') + 1) + ":" +
         std::to_string(pos - line_start + 1);
}

const std::string kBumpLaunch = "core::intrinsics::offload::<_, _, ()>(host::bump_u32";
const std::string kTwiceLaunch = "core::intrinsics::offload::<_, _, ()>(self::host::twice";

// The build fails with exactly one error, `says`, and leaves no program.
void require_refused(const fs::path& dir, const std::string& says) {
  auto r = run_ob({"-C", dir.string(), "build"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains(says));
  CHECK(count_occurrences(r.err, ": error: ") == 1);
  CHECK_FALSE(fs::exists(dir / "build/truth"));
}

}  // namespace

TEST_CASE("rust kernels from a macro and include! and launches by turbofish and paths build and run",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = make_crate(tmp.path());
  auto r = run_ob({"-C", dir.string(), "run", "--verify"}, {}, kMandatory);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "v[0]=12 v[63]=12\n");  // (1 + 1) * 2 * 3: each of the three kernels ran
  CHECK_THAT(r.err, Catch::Contains("offload-build: verify: offload: 3 kernel launches on device"));
  // No source-reading refusal: the image has every kernel rustc compiled.
  auto again = run_ob({"-C", dir.string(), "build"});
  CHECK(again.exit_code == 0);

  // With offload disabled the launches would do nothing (no host fallback): refused, not run.
  auto disabled = run_ob({"-C", dir.string(), "run"}, {}, {{"OMP_TARGET_OFFLOAD", "Disabled"}});
  CHECK(disabled.exit_code == 2);
  CHECK(disabled.out.empty());
  CHECK_THAT(disabled.err, Catch::Contains("OMP_TARGET_OFFLOAD=DISABLED is set, so the offload runtime would skip "
                                           "every kernel launch, and a Rust kernel has no host fallback"));
}

TEST_CASE("a launch of a kernel no image defines is an error at build time at the launch", "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = make_crate(tmp.path());
  // Declared on the host, defined nowhere (a typo): before, the build succeeded and
  // the program aborted at run time (`Failed to load kernel bumpp`).
  edit_file(dir / "src/main.rs", "pub fn bump_u32(", "pub fn bumpp(");
  edit_file(dir / "src/main.rs", "(host::bump_u32,", "(host::bumpp,");
  require_refused(dir, at(dir, "core::intrinsics::offload::<_, _, ()>(host::bumpp") +
                           ": error: this launch of `host::bumpp` finds no kernel `bumpp` in the host device image, "
                           "which defines `bump_u32`, `triple`, `twice`");
}

TEST_CASE("a launch that does not fit its kernel is refused at the launch, after rustc evaluated both",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  struct Case {
    std::string what;
    std::vector<std::pair<std::string, std::string>> edits;  // in src/main.rs, or src/triple.rs (the last)
    std::string launch;
    std::string says;
  };
  const std::vector<Case> cases{
      // Before: accepted, and the kernel's results were never copied back (a wrong program).
      {"a read-only argument the kernel writes through",
       {{"pub fn twice(x: *mut [u32; 64]);", "pub fn twice(x: *const [u32; 64]);"},
        {"(self::host::twice, [1, 1, 1], [1, 1, 1], (&raw mut v,))",
         "(self::host::twice, [1, 1, 1], [1, 1, 1], (&raw const v,))"}},
       kTwiceLaunch,
       ": error: argument 1 of this launch of `twice` is `*const [u32; 64]`, read-only, but the kernel (host device "
       "image) takes `*mut [u32; 64]` and may write through it"},
      {"an argument of another type",
       {{"pub fn bump_u32(x: *mut [u32; crate::N]);", "pub fn bump_u32(x: *mut [f32; 64]);"},
        {"let mut v = [1u32; N];", "let mut v = [1u32; N];\n    let mut f = [1f32; N];"},
        {"(host::bump_u32, [1, 1, 1], [1, 1, 1], (&raw mut v,))", "(host::bump_u32, [1, 1, 1], [1, 1, 1], (&raw mut f,))"}},
       kBumpLaunch,
       ": error: argument 1 of this launch of `bump_u32` is `*mut [f32; 64]` where the kernel (host device image) "
       "takes `*mut [u32; 64]`"},
      // In the included file, which the source reader never saw.
      {"a kernel without the launch-environment pointer",
       {{"triple.rs", ""}, {"_dyn_ptr: *mut u8, ", ""}},
       "core::intrinsics::offload::<_, _, ()>(crate::host::triple",
       ": error: kernel `triple` (host device image) takes 1 parameter(s) and this launch passes 1: the offload "
       "runtime passes a launch-environment pointer before the kernel's own arguments"}};
  for (const Case& c : cases) {
    SECTION(c.what) {
      TempDir tmp;
      const fs::path dir = make_crate(tmp.path());
      fs::path file = dir / "src/main.rs";
      for (const auto& [from, to] : c.edits) {
        if (from == "triple.rs") file = dir / "src/triple.rs";
        else edit_file(file, from, to);
      }
      require_refused(dir, at(dir, c.launch) + c.says);
    }
  }
}

TEST_CASE("a host declaration renamed by #[link_name] and a kernel by #[export_name] run, and a renamed symbol no image "
          "defines is refused at the launch",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = make_crate(tmp.path());
  const fs::path main_rs = dir / "src/main.rs";
  // host::double is the kernel `twice`; `triple` is exported as triple_v2 and declared so.
  edit_file(main_rs, "pub fn twice(x: *mut [u32; 64]);", "#[link_name = \"twice\"]\n        pub fn double(x: *mut [u32; 64]);");
  edit_file(main_rs, "(self::host::twice,", "(self::host::double,");
  edit_file(main_rs, "pub fn triple(x:", "#[link_name = \"triple_v2\"]\n        pub fn triple(x:");
  edit_file(dir / "src/triple.rs", "#[unsafe(no_mangle)]", "#[unsafe(export_name = \"triple_v2\")]");
  // Before: refused ("finds no kernel `double`"), though the program runs.
  auto r = run_ob({"-C", dir.string(), "run", "--verify"}, {}, kMandatory);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "v[0]=12 v[63]=12\n");
  CHECK_THAT(r.err, Catch::Contains("offload-build: verify: offload: 3 kernel launches on device"));

  // One renamed declaration whose symbol no image defines (a typo in #[link_name]).
  edit_file(dir / "src/triple.rs", "#[unsafe(export_name = \"triple_v2\")]", "#[unsafe(no_mangle)]");
  edit_file(main_rs, "#[link_name = \"triple_v2\"]\n", "");
  edit_file(main_rs, "#[link_name = \"twice\"]", "#[link_name = \"twicee\"]");
  fs::remove(dir / "build/truth");  // the last good build's: the refused one leaves none
  require_refused(dir, at(dir, "core::intrinsics::offload::<_, _, ()>(self::host::double") +
                           ": error: this launch of `host::double` is of a renamed symbol (the program launches no "
                           "`double`; #[link_name]), and the program launches `twicee`, which the host device image "
                           "does not define");
}

namespace {

// A cargo workspace whose kernels the source reader could not see: `kmacro`, a
// proc macro that makes a function a kernel; `kern`, whose kernels are written
// by it and by build.rs into OUT_DIR; `app`, which declares the kernels and
// launches them itself (the program crate, not the kernel crate).
fs::path hidden_kernels_workspace(const fs::path& dir) {
  fs::create_directories(dir / "kmacro/src");
  fs::create_directories(dir / "kern/src");
  fs::create_directories(dir / "app/src");
  write_file(dir / "Cargo.toml", "[workspace]\nmembers = [\"app\", \"kern\", \"kmacro\"]\nresolver = \"3\"\n\n"
                                 "[profile.dev]\npanic = \"abort\"\n\n[profile.release]\npanic = \"abort\"\n");
  write_file(dir / "kmacro/Cargo.toml", "[package]\nname = \"kmacro\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"
                                        "publish = false\n\n[lib]\nproc-macro = true\n");
  write_file(dir / "kmacro/src/lib.rs", R"(use proc_macro::TokenStream;

/// `#[kernel] fn name(...)`: an exported kernel, as the offload runtime finds it.
#[proc_macro_attribute]
pub fn kernel(_attr: TokenStream, item: TokenStream) -> TokenStream {
    format!("#[unsafe(no_mangle)] #[rustc_offload_kernel] pub extern \"C\" {}", item).parse().unwrap()
}
)");
  write_file(dir / "kern/Cargo.toml",
             "[package]\nname = \"kern\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\nbuild = \"build.rs\"\n\n"
             "[dependencies]\nkmacro = { path = \"../kmacro\" }\n\n"
             "[lints.rust]\nunexpected_cfgs = { level = \"warn\", check-cfg = ['cfg(offload_device)'] }\n");
  write_file(dir / "kern/build.rs", R"(fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    std::fs::write(format!("{out}/gen.rs"),
        "#[unsafe(no_mangle)]\n#[rustc_offload_kernel]\npub extern \"C\" fn offset(_dyn_ptr: *mut u8, x: *mut [u32; 8]) {\n    unsafe { for i in 0..8 { (*x)[i] += 100; } }\n}\n").unwrap();
}
)");
  write_file(dir / "kern/src/lib.rs", R"(#![feature(rustc_attrs)]
#![cfg_attr(offload_device, no_std)]
#![allow(internal_features)]

#[cfg(offload_device)]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    unsafe extern "C" {
        fn abort() -> !;
    }
    unsafe { abort() }
}

#[cfg(offload_device)]
#[kmacro::kernel]
fn square(_dyn_ptr: *mut u8, x: *mut [u32; 8]) {
    unsafe { for i in 0..8 { (*x)[i] *= (*x)[i]; } }
}

#[cfg(offload_device)]
include!(concat!(env!("OUT_DIR"), "/gen.rs"));
)");
  write_file(dir / "app/Cargo.toml", "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"
                                     "publish = false\n\n[dependencies]\nkern = { path = \"../kern\" }\n");
  write_file(dir / "app/src/main.rs", R"(#![feature(core_intrinsics)]
#![allow(internal_features)]
use kern as _;

unsafe extern "C" {
    fn square(x: *mut [u32; 8]);
    fn offset(x: *mut [u32; 8]);
}

fn main() {
    let mut x: [u32; 8] = core::array::from_fn(|i| i as u32);
    core::intrinsics::offload::<_, _, ()>(square, [1, 1, 1], [1, 1, 1], (&raw mut x,));
    core::intrinsics::offload::<_, _, ()>(offset, [1, 1, 1], [1, 1, 1], (&raw mut x,));
    println!("x[3]={} x[7]={}", x[3], x[7]);
}
)");
  return dir;
}

}  // namespace

TEST_CASE("cargo: kernels from a proc macro and build.rs, launched from the program crate, build and run",
          "[integration][rust][cargo]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = hidden_kernels_workspace(tmp.path() / "ws");
  auto r = run_ob({"-C", (dir / "app").string(), "cargo", "run"}, {}, kMandatory);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "x[3]=109 x[7]=149\n");  // 3*3+100, 7*7+100
  auto disabled = run_ob({"-C", (dir / "app").string(), "cargo", "run"}, {}, {{"OMP_TARGET_OFFLOAD", "DISABLED"}});
  CHECK(disabled.exit_code == 2);
  CHECK(disabled.out.empty());
  CHECK_THAT(disabled.err, Catch::Contains("a Rust kernel has no host fallback"));

  // A launch of a kernel no image has (a typo in the program crate): an error
  // at the launch, and no program left to run.
  edit_file(dir / "app/src/main.rs", "fn offset(", "fn offsett(");
  edit_file(dir / "app/src/main.rs", "(offset,", "(offsett,");
  auto bad = run_ob({"-C", (dir / "app").string(), "cargo", "build"});
  INFO(bad.err);
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.err, Catch::Contains("app/src/main.rs:13:5: error: this launch of `offsett` finds no kernel "
                                      "`offsett` in the host device image, which defines `offset`, `square`"));
  CHECK_FALSE(fs::exists(dir / "target/x86_64-unknown-linux-gnu/debug/app"));
}

TEST_CASE("manifest mode: an env! value the kernel reads reruns both passes, and --explain names it",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = make_crate(tmp.path());
  // The bump is 1 + the length of OB_BUMP's value, on both sides.
  edit_file(dir / "src/main.rs", "(*x)[i] += 1 as $t;", "(*x)[i] += (1 + env!(\"OB_BUMP\").len()) as $t;");
  auto first = run_ob({"-C", dir.string(), "run"}, {}, {{"OB_BUMP", "a"}, {"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.out == "v[0]=18 v[63]=18\n");  // (1 + 2) * 6
  // Before: every job up to date, and the program still the old one.
  auto changed = run_ob({"-C", dir.string(), "--explain", "run"}, {},
                        {{"OB_BUMP", "abc"}, {"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  INFO(changed.err);
  REQUIRE(changed.exit_code == 0);
  CHECK(changed.out == "v[0]=30 v[63]=30\n");  // (1 + 4) * 6
  CHECK_THAT(changed.err, Catch::Contains("environment variable changed: OB_BUMP"));
  auto same = run_ob({"-C", dir.string(), "build"}, {}, {{"OB_BUMP", "abc"}});
  CHECK(same.exit_code == 0);
  CHECK_THAT(same.err, Catch::Contains(" 0 run"));  // the values' stamps: current again
}

// A launch inside a generic function whose kernel is its type parameter is
// checked at every call that names the kernel, through generic callers that
// pass it on: before, it was not seen, and a missing kernel built and stopped
// the program at run time (`Failed to load kernel missing_k`).
TEST_CASE("cargo: a launch inside a generic function runs, and one of a kernel no image has is refused at the call naming it",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-cargo", tmp.path());
  const std::string generic = "#[inline(never)]\nfn launch_with<F>(k: F, x: &mut [f64; N]) {\n"
                              "    core::intrinsics::offload(k, [1, 1, 1], [1, 1, 1], (x as *mut [f64; N],))\n}\n\n"
                              "fn outer<K>(k: K, x: &mut [f64; N]) {\n    launch_with(k, x)\n}\n\n";
  edit_file(dir / "src/host.rs", "#[inline(never)]\nfn launch(x: &mut [f64; N]) {\n"
                                 "    core::intrinsics::offload(scale_add, [1, 1, 1], [1, 1, 1], (x as *mut [f64; N],))\n}",
            generic + "fn launch(x: &mut [f64; N]) {\n    outer(scale_add, x)\n}");
  auto ok = run_ob({"-C", dir.string(), "cargo", "run"}, {}, kMandatory);
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "rust-cargo: x[0]=1 x[1]=3 x[255]=511 mismatches=0 OK\n");

  edit_file(dir / "src/host.rs", "fn launch(x: &mut [f64; N]) {\n    outer(scale_add, x)\n}",
            "unsafe extern \"C\" {\n    fn missing_k(x: *mut [f64; N]);\n}\n\n"
            "fn launch(x: &mut [f64; N]) {\n    outer(missing_k, x)\n}");
  auto refused = run_ob({"-C", dir.string(), "cargo", "run"}, {}, kMandatory);
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code != 0);
  CHECK(refused.out.empty());
  CHECK_THAT(refused.err, Catch::Contains("src/host.rs:18:5: error: this launch of `host::missing_k` finds no kernel "
                                          "`missing_k` in the host device image, which defines `scale_add`"));
}
