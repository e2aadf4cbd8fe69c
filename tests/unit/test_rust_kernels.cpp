// The pre-compile check of Rust offload crates: tokenizing, scanning items and
// modules, and the errors for kernels the runtime could not launch.
#include <catch2/catch.hpp>
#include <fstream>

#include "offload_build/toolchain/frontends/rust_kernels.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::toolchain::rust;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

const char* kGood = R"(#![cfg_attr(offload_device, no_std)]
#[cfg(offload_device)]
#[unsafe(no_mangle)]
#[rustc_offload_kernel]
pub extern "C" fn kernel_1(_dyn_ptr: *mut u8, x: *mut [f64; 256]) {}

#[cfg(not(offload_device))]
unsafe extern "C" {
    pub fn kernel_1(x: *mut [f64; 256]);
}

#[cfg(not(offload_device))]
fn launch(x: *mut [f64; 256]) {
    core::intrinsics::offload(kernel_1, [1, 1, 1], [1, 1, 1], (x,))
}
)";

CrateScan scan_of(const std::string& text) {
  CrateScan scan;
  scan.files.push_back("/p/src/main.rs");
  scan_text(text, "/p/src/main.rs", scan);
  return scan;
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

void require_error(const std::string& text, const std::string& what, const std::string& cfg = "offload_device") {
  auto r = check_crate(scan_of(text), cfg, "/p");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == exit_code::failure);
  CHECK_THAT(r.error().message, Contains(what));
}

}  // namespace

TEST_CASE("tokenize skips comments and keeps literals whole", "[rust][kernels]") {
  auto t = tokenize("a /* x { /* nested */ } */ b // fn c(\n\"s { \\\" }\" r#\"raw \"fn\" \"# 'c' '\\'' 'life");
  std::vector<std::string> texts;
  for (const auto& tok : t) texts.push_back(tok.text);
  CHECK(texts == std::vector<std::string>{"a", "b", "s { \\\" }", "raw \"fn\" ", "'c'", "'\\''", "'life"});
  CHECK(t[2].kind == Token::Str);
  CHECK(t[2].line == 2);
}

TEST_CASE("scan finds kernels, host declarations, launches and cfg names", "[rust][kernels]") {
  auto scan = scan_of(kGood);
  REQUIRE(scan.functions.size() == 2);
  const FnItem& k = scan.functions[0];
  CHECK(k.name == "kernel_1");
  CHECK(k.line == 5);
  CHECK(k.no_mangle);
  CHECK(k.offload_kernel);
  CHECK(k.params == std::vector<std::string>{"_dyn_ptr : * mut u8", "x : * mut [ f64 ; 256 ]"});
  REQUIRE(scan.foreign.size() == 1);
  CHECK(scan.foreign[0].params.size() == 1);
  REQUIRE(scan.launches.size() == 1);
  CHECK(scan.launches[0].kernel == "kernel_1");
  CHECK(scan.launches[0].line == 14);
  CHECK(scan.cfg_names == std::set<std::string>{"offload_device"});
  CHECK_FALSE(scan.no_core);
  CHECK(check_crate(scan, "offload_device", "/p").ok());
}

TEST_CASE("what rustc compiled decides kernels against launches: the reader refuses none of them",
          "[rust][kernels]") {
  // Each was refused by reading the source (and some wrongly: a macro's kernel,
  // a declaration in another crate, a constant spelt otherwise); rust_mir.hpp
  // checks them after rustc ran (test_rust_mir.cpp, test_rust_truth.cpp).
  for (const std::string& text :
       {replace(kGood, "#[unsafe(no_mangle)]\n", ""), replace(kGood, "_dyn_ptr: *mut u8, ", ""),
        replace(kGood, "pub fn kernel_1(x: *mut [f64; 256]);", "pub fn kernel_1(x: *mut [f32; 256]);"),
        replace(kGood, "pub fn kernel_1(x: *mut [f64; 256]);", ""),
        replace(kGood, "offload(kernel_1", "offload(kernel_2"),
        replace(kGood, "#[cfg(not(offload_device))]\nfn launch",
                "macro_rules! kernel_for {\n    ($name:ident, $t:ty) => {\n        #[unsafe(no_mangle)]\n"
                "        #[rustc_offload_kernel]\n        pub extern \"C\" fn $name(_d: *mut u8, x: *mut $t) {}\n"
                "    };\n}\n#[cfg(not(offload_device))]\nfn launch")}) {
    INFO(text);
    CHECK(check_crate(scan_of(text), "offload_device", "/p").ok());
  }
}

TEST_CASE("kernel errors say what to change", "[rust][kernels]") {
  SECTION("no cfg split, with a near miss") {
    std::string text = kGood;
    for (size_t pos; (pos = text.find("offload_device")) != std::string::npos;) text.replace(pos, 14, "gpu");
    require_error(text, "src/main.rs:5: error: the crate never tests cfg(offload_device), the cfg "
                        "offload-build sets for the device pass only (it tests cfg(gpu) instead: "
                        "rename that to offload_device, or set \"device_cfg\": \"gpu\" in offload.json)");
    CHECK(check_crate(scan_of(text), "gpu", "/p").ok());
  }
  SECTION("a crate without kernels is not checked") {
    CHECK(check_crate(scan_of("fn main() {}"), "offload_device", "/p").ok());
  }
}

TEST_CASE("kernel signatures this rustc cannot launch are refused with what to write", "[rust][kernels]") {
  SECTION("a scalar by value (builds, then the program crashes)") {
    const std::string text = replace(replace(kGood, "x: *mut [f64; 256]) {}", "a: f64, x: *mut [f64; 256]) {}"),
                                     "pub fn kernel_1(x: *mut [f64; 256]);", "pub fn kernel_1(a: f64, x: *mut [f64; 256]);");
    require_error(text, "src/main.rs:5:47: error: device kernel `kernel_1` takes `a: f64` by value: ");
    require_error(text, "take a pointer instead, `a: *const f64` in the kernel and in its host declaration, launch "
                        "it with `&a as *const f64`");
  }
  SECTION("a slice next to other arguments (rustc's internal compiler error)") {
    const std::string text =
        replace(replace(kGood, "x: *mut [f64; 256]) {}", "x: &mut [f64], n: *const usize) {}"),
                "pub fn kernel_1(x: *mut [f64; 256]);", "pub fn kernel_1(x: &mut [f64], n: *const usize);");
    require_error(text, "src/main.rs:5:47: error: device kernel `kernel_1` takes the slice `x: &mut [f64]` next to "
                        "other arguments");
    require_error(text, "\"offload does not support Struct\"");
    require_error(text, "`x: *mut [T; N]` with N a const");
    // Alone it works on this rustc.
    CHECK(check_crate(scan_of(replace(replace(kGood, "x: *mut [f64; 256]) {}", "x: &mut [f64]) {}"),
                                      "pub fn kernel_1(x: *mut [f64; 256]);", "pub fn kernel_1(x: &mut [f64]);")),
                      "offload_device", "/p")
              .ok());
  }
  SECTION("a return value (garbage on the host)") {
    require_error(replace(kGood, "x: *mut [f64; 256]) {}", "x: *mut [f64; 256]) -> f32 { 0.0 }"),
                  "src/main.rs:5:70: error: device kernel `kernel_1` returns `f32`: the launch does not bring a "
                  "kernel's return value back");
  }
  SECTION("pointers and references to arrays and structs are fine") {
    CHECK(check_crate(scan_of(replace(replace(kGood, "x: *mut [f64; 256]) {}", "p: &P, x: &mut [f64; 4]) -> () {}"),
                                      "pub fn kernel_1(x: *mut [f64; 256]);", "pub fn kernel_1(p: &P, x: &mut [f64; 4]);")),
                      "offload_device", "/p")
              .ok());
  }
  SECTION("extern \"gpu-kernel\" where rustc compiles for x86_64 (E0570)") {
    const std::string host_side = replace(kGood, "unsafe extern \"C\" {", "unsafe extern \"gpu-kernel\" {");
    auto r = check_kernel_abi(scan_of(host_side), {*manifest::resolve_target("sm_90")}, "offload_device", "/p");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, StartsWith("src/main.rs:9:12: error: the host declaration of kernel `kernel_1` is in an "
                                             "`extern \"gpu-kernel\"` block") &&
                                      Contains("declare kernels on the host side as `unsafe extern \"C\" { fn kernel_1(...); }`"));
    const std::string device_side = replace(kGood, "pub extern \"C\" fn kernel_1", "pub extern \"gpu-kernel\" fn kernel_1");
    auto host = check_kernel_abi(scan_of(device_side), {*manifest::resolve_target("host")}, "offload_device", "/p");
    REQUIRE_FALSE(host.ok());
    CHECK_THAT(host.error().message, StartsWith("src/main.rs:5:28: error: device kernel `kernel_1` is `extern \"gpu-kernel\"`, "
                                                "which rustc rejects for x86_64"));
    CHECK(check_kernel_abi(scan_of(device_side), {*manifest::resolve_target("sm_90")}, "offload_device", "/p").ok());
  }
}

TEST_CASE("scan_crate follows mod declarations to files", "[rust][kernels]") {
  test::TempDir tmp("ob-rust-scan");
  auto write = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((tmp.path() / rel).parent_path());
    std::ofstream(tmp.path() / rel) << text;
  };
  write("src/main.rs", "mod kernel;\n#[cfg(not(offload_device))]\nmod host;\n#[path = \"odd/place.rs\"]\nmod extra;\nmod gone;\n");
  write("src/kernel.rs", "pub mod inner;\n#[unsafe(no_mangle)]\npub extern \"gpu-kernel\" fn k(_p: *mut u8) {}\n");
  write("src/kernel/inner.rs", "");
  write("src/host/mod.rs", "unsafe extern \"C\" { fn k(); }\n");
  write("src/odd/place.rs", "#![cfg_attr(offload_device, no_core)]\n");
  auto scan = scan_crate(tmp.path() / "src/main.rs");
  CHECK(scan.files.size() == 5);
  CHECK_FALSE(scan.complete);  // mod gone; has no file
  CHECK(scan.no_core);
  REQUIRE(scan.functions.size() == 1);
  CHECK(scan.functions[0].offload_kernel);
  CHECK(scan.functions[0].file == tmp.path() / "src/kernel.rs");
  CHECK(scan.foreign.size() == 1);
  CHECK(check_crate(scan, "offload_device", tmp.path()).ok());
}

TEST_CASE("a GPU device crate needs a core or #![no_core]", "[rust][kernels]") {
  test::TempDir tmp("ob-rust-core");
  auto scan = scan_of(kGood);
  const auto sm90 = manifest::resolve_target("sm_90");
  const auto host = manifest::resolve_target("host");
  REQUIRE((sm90.ok() && host.ok()));
  CHECK(check_device_core(scan, {*host}, tmp.path(), "offload_device").ok());
  auto r = check_device_core(scan, {*host, *sm90}, tmp.path(), "offload_device");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, StartsWith("target sm_90: this rustc has no `core` for nvptx64-nvidia-cuda"));
  CHECK_THAT(r.error().message, Contains("#![cfg_attr(offload_device, no_core)]"));
  fs::create_directories(tmp.path() / "lib/rustlib/nvptx64-nvidia-cuda/lib");
  CHECK(check_device_core(scan, {*sm90}, tmp.path(), "offload_device").ok());
  scan.no_core = true;
  CHECK(check_device_core(scan, {*sm90}, "/nowhere", "offload_device").ok());
}
