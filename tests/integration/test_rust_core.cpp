// Rust kernels as people write them: run-time indices, iterators, assert!,
// checked and wrapping arithmetic, core::cmp and core::ptr, in debug and release
// builds (the device image carries the `core` they need), a kernel that panics,
// and kernels in a library crate of a cargo workspace, through `cargo offload`.
#include <cstdlib>

#include "rust_support.hpp"
#include "support/servers.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// Two kernels with run-time indexing, and everything a debug build keeps
// calls for: bounds, overflow and alignment checks, assert!, iterator adapters.
const char* kTwoKernels = R"RS(#![feature(rustc_attrs)]
#![cfg_attr(not(offload_device), feature(core_intrinsics))]
#![cfg_attr(offload_device, no_std)]
#![allow(internal_features)]

#[cfg(offload_device)]
mod device {
    use core::fmt::Write;

    #[unsafe(no_mangle)]
    #[rustc_offload_kernel]
    pub extern "C" fn gather(_dyn_ptr: *mut u8, idx: *const [u32; 64], src: *const [i64; 64], out: *mut [i64; 64]) {
        let (idx, src, out) = unsafe { (&*idx, &*src, &mut *out) };
        for (i, o) in out.iter_mut().enumerate() {
            let j = idx[i] as usize;
            assert!(j < src.len(), "index {j}");
            let v = src[j].checked_mul(3).unwrap() + (i as i64).wrapping_sub(1);
            *o = core::cmp::max(v, core::cmp::min(-v, 0));
        }
    }

    #[unsafe(no_mangle)]
    #[rustc_offload_kernel]
    pub extern "C" fn bump(_dyn_ptr: *mut u8, x: *mut [u32; 4]) {
        let x = unsafe { &mut *x };
        let i = x[0] as usize;
        x[i] += 1;
        unsafe { core::ptr::write(&mut x[3], core::ptr::read(&x[i]) * 10) };
    }

    struct Line { buf: [u8; 256], len: usize }
    impl Write for Line {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            for &b in s.as_bytes() {
                if self.len < self.buf.len() { self.buf[self.len] = b; self.len += 1; }
            }
            Ok(())
        }
    }
    unsafe extern "C" {
        fn write(fd: i32, buf: *const u8, len: usize) -> isize;
        fn abort() -> !;
    }
    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo) -> ! {
        let mut line = Line { buf: [0; 256], len: 0 };
        let _ = write!(line, "device kernel panicked");
        if let Some(at) = info.location() {
            let _ = write!(line, " at {}:{}:{}", at.file(), at.line(), at.column());
        }
        let _ = writeln!(line, ": {}", info.message());
        unsafe { write(2, line.buf.as_ptr(), line.len); abort() }
    }
}

#[cfg(not(offload_device))]
unsafe extern "C" {
    fn gather(idx: *const [u32; 64], src: *const [i64; 64], out: *mut [i64; 64]);
    fn bump(x: *mut [u32; 4]);
}

#[cfg(not(offload_device))]
fn main() {
    let idx: [u32; 64] = core::array::from_fn(|i| (63 - i) as u32);
    let src: [i64; 64] = core::array::from_fn(|i| i as i64);
    let mut out = [0i64; 64];
    core::intrinsics::offload::<_, _, ()>(gather, [1, 1, 1], [1, 1, 1],
        (&idx as *const [u32; 64], &src as *const [i64; 64], &mut out as *mut [i64; 64]));
    let sum: i64 = out.iter().sum();
    let first: u32 = std::env::args().nth(1).map_or(1, |s| s.parse().unwrap());
    let mut x = [first, 5, 7, 0];
    core::intrinsics::offload::<_, _, ()>(bump, [1, 1, 1], [1, 1, 1], (&mut x as *mut [u32; 4],));
    println!("sum={sum} out[0]={} x={:?}", out[0], x);
}
)RS";

fs::path write_two_kernel_crate(const fs::path& dir, const std::string& flags) {
  fs::create_directories(dir / "src");
  write_file(dir / "offload.json", R"({"name": "two-kernels", "language": "rust", "sources": ["src/main.rs"],
 "targets": ["host"], "flags": [)" + flags + "]}\n");
  write_file(dir / "src/main.rs", kTwoKernels);
  return dir;
}

// sum over i of 3 * (63 - i) + i - 1 = 3 * 2016 + 2016 - 64
const char* kExpected = "sum=8000 out[0]=188 x=[1, 6, 7, 60]\n";

}  // namespace

TEST_CASE("rust kernels that use core build and run in debug and release", "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  for (const std::string flags : {R"("--edition=2024")",
                                  R"("--edition=2024", "-O", "-Cdebug-assertions", "-Coverflow-checks")"}) {
    const fs::path dir = write_two_kernel_crate(tmp.path() / (flags.size() > 20 ? "release" : "debug"), flags);
    auto r = run_ob({"-C", dir.string(), "run", "--verify"});
    INFO(flags << '\n' << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == kExpected);
    CHECK_THAT(r.err, Catch::Contains("offload-build: verify: offload: 2 kernel launches on device"));
    CHECK_THAT(r.err, Catch::Contains("kernel launches on device 0 (gather, bump)"));

    // The image holds the crate's kernels and the core they call, nothing of std.
    auto syms = run_tool({std::string(kLlvmBin) + "/llvm-nm", "--defined-only", (dir / "build/obj/src/main.rs.host.o").string()});
    REQUIRE(syms.exit_code == 0);
    CHECK_THAT(syms.out, Catch::Contains(" T gather") && Catch::Contains(" T bump"));
    CHECK_THAT(syms.out, !Catch::Contains("3std"));
  }
}

TEST_CASE("a panicking rust kernel ends the program with a message, not a hang", "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = write_two_kernel_crate(tmp.path() / "p", R"("--edition=2024")");
  auto build = run_ob({"-C", dir.string(), "build"});
  INFO(build.err);
  REQUIRE(build.exit_code == 0);
  // x[0] = 9 indexes past the end of a 4-element array inside the kernel.
  auto r = run_tool({(dir / "build/two-kernels").string(), "9"}, dir, kMandatory);
  CHECK(r.exit_code != 0);
  CHECK(r.out.find("x=") == std::string::npos);  // the program did not go on
  CHECK_THAT(r.err, Catch::Contains("device kernel panicked at src/main.rs:27:9: index out of bounds: "
                                    "the len is 4 but the index is 9"));
}

TEST_CASE("rust-workspace: kernels in a library crate, dev and release, host-only and kernel edits",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-workspace", tmp.path());
  const std::string ok = "gather: out[0]=510 out[255]=255 OK\nblock_sums: sums[0]=120 sums[15]=3960 OK\n";
  const std::vector<std::string> run{"-C", (dir / "app").string(), "cargo", "run"};

  auto dev = run_ob(run);
  INFO(dev.err);
  REQUIRE(dev.exit_code == 0);
  CHECK(dev.out == ok);
  CHECK(device_line(dev.err, "host") == "] device host kernels");
  CHECK(fs::exists(dir / "target/x86_64-unknown-linux-gnu/debug/app"));

  // A kernel that panics ends the program with the handler's message.
  auto panic = run_ob({"-C", (dir / "app").string(), "cargo", "run", "--", "17"});
  CHECK(panic.exit_code != 0);
  CHECK_THAT(panic.err, Catch::Contains("device kernel panicked at kernels/src/device.rs:") &&
                            Catch::Contains("range end index 272 out of range for slice of length 256"));

  // Editing the host-only crate runs no device pass: the image is current
  // (the kernel crate's files are unchanged; the build state).
  edit_file(dir / "app/src/main.rs", "println!(\"gather:", "println!(\"edited gather:");
  auto host_edit = run_ob(run);
  INFO(host_edit.err);
  REQUIRE(host_edit.exit_code == 0);
  CHECK(device_line(host_edit.err, "host") == "] device host kernels (up to date)");
  CHECK_THAT(host_edit.err, !Catch::Contains("Compiling kernels v0.1.0 (" + (dir / "kernels").string() + ")\n    Finished"));
  CHECK_THAT(host_edit.out, Catch::StartsWith("edited gather: out[0]=510"));

  // Editing a kernel does, and the program runs the new kernel.
  edit_file(dir / "kernels/src/device.rs", "*o = x[j] * a + i as f64;", "*o = x[j] * a + 2.0 * i as f64;");
  auto kernel_edit = run_ob(run);
  INFO(kernel_edit.err);
  CHECK(kernel_edit.exit_code == 1);  // the host's check expects the old kernel
  CHECK(device_line(kernel_edit.err, "host") == "] device host kernels");
  CHECK_THAT(kernel_edit.out, Catch::StartsWith("edited gather: out[0]=510 out[255]=510 WRONG"));

  auto release = run_ob({"-C", dir.string(), "cargo", "run", "--release", "-p", "app"});
  INFO(release.err);
  CHECK(release.exit_code == 1);
  CHECK_THAT(release.out, Catch::StartsWith("edited gather: out[0]=510 out[255]=510 WRONG"));
  CHECK(fs::exists(dir / "target/x86_64-unknown-linux-gnu/release/app"));
}

TEST_CASE("cargo offload: the cargo subcommand from an installed prefix", "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path prefix = tmp.path() / "prefix";
  auto install = run_tool({"cmake", "--install", fs::path(OB_BINARY).parent_path().string(), "--prefix",
                           prefix.string()});
  INFO(install.out << install.err);
  REQUIRE(install.exit_code == 0);
  REQUIRE(fs::exists(prefix / "bin/cargo-offload"));
  REQUIRE(fs::exists(prefix / "lib/offload-build/rust-device-stub.ll"));

  auto cargo = toolchain::rust::find_rust_toolchain(std::nullopt);
  REQUIRE(cargo.ok());
  REQUIRE(cargo->cargo.has_value());
  const std::string path = (prefix / "bin").string() + ":" + cargo->cargo->parent_path().string() + ":" +
                           (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  const Env env{{"PATH", path}};

  auto help = run_tool({"cargo", "offload", "--help"}, tmp.path(), env);
  INFO(help.err);
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("Usage: cargo offload [OFFLOAD-BUILD OPTIONS] build [CARGO ARGS]"));

  const fs::path dir = copy_rust_example("rust-workspace", tmp.path());
  auto r = run_tool({"cargo", "offload", "run", "--release"}, dir / "app", env);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "gather: out[0]=510 out[255]=255 OK\nblock_sums: sums[0]=120 sums[15]=3960 OK\n");
  CHECK(device_line(r.err, "host") == "] device host kernels");
}

TEST_CASE("cargo flow: a warm Redis remote serves another checkout's device passes", "[integration][rust][remote]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  RedisServer server(tmp / "redis", {false, ""});
  const std::string url = "redis://127.0.0.1:" + std::to_string(server.port()) + "|allow-unsigned";
  const std::string ok = "gather: out[0]=510 out[255]=255 OK\nblock_sums: sums[0]=120 sums[15]=3960 OK\n";
  auto build = [&](const std::string& machine) {
    const fs::path dir = copy_rust_example("rust-workspace", tmp / machine);
    return run_ob({"-C", (dir / "app").string(), "--cache-dir", (tmp / machine / "cache").string(),
                   "--remote-storage", url, "cargo", "run"});
  };
  auto ci = build("ci");  // fills the remote
  INFO(ci.err);
  REQUIRE(ci.exit_code == 0);
  CHECK(ci.out == ok);
  CHECK(device_line(ci.err, "host") == "] device host kernels");

  auto laptop = build("laptop");  // another path, an empty local cache, no target/
  INFO(laptop.err);
  REQUIRE(laptop.exit_code == 0);
  CHECK(laptop.out == ok);
  CHECK(device_line(laptop.err, "host") == "] device host kernels (cached)");
  CHECK_THAT(laptop.err, !Catch::Contains("warning"));
  // The laptop's own cache now has the image and the manifest of what its pass
  // read (the key's second level), and counted the hit.
  auto stats = run_ob({"--cache-dir", (tmp / "laptop/cache").string(), "cache", "stats"});
  CHECK_THAT(stats.out, Catch::Contains("\nentries                 2\n") &&
                              Catch::Contains("\nhits                    1\n"));
}
