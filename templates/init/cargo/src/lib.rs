// @NAME@: y = a*x + y with std::offload, through cargo. offload-build compiles
// this library once per offload target with --cfg offload_device (the device
// pass: `cargo rustc --lib`, keeping only the kernel) and once without (the
// host pass: `cargo build`, which launches it through the offload runtime).
// Target "host" is x86_64 as an offload device, so
// `offload-build cargo run --verify` shows the launch on a machine without a GPU.
#![feature(rustc_attrs)]
#![cfg_attr(not(offload_device), feature(core_intrinsics))]
#![cfg_attr(offload_device, no_std)]
#![allow(internal_features)]

pub const N: usize = 1024;

// ---------------- device side ----------------
// A kernel that panics (an index out of bounds, an overflow in a debug build)
// ends the program: "device kernel panicked at FILE:LINE:COL: MESSAGE" on
// stderr, then abort() (docs/RUST.md#panics). A handler that loops would hang it.
#[cfg(offload_device)]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    use core::fmt::Write;
    struct Line([u8; 512], usize);
    impl Write for Line {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            for &b in s.as_bytes() {
                if self.1 < self.0.len() {
                    self.0[self.1] = b;
                    self.1 += 1;
                }
            }
            Ok(())
        }
    }
    unsafe extern "C" {
        fn write(fd: i32, buf: *const u8, len: usize) -> isize;
        fn abort() -> !;
    }
    let mut line = Line([0; 512], 0);
    let _ = write!(line, "device kernel panicked");
    if let Some(at) = info.location() {
        let _ = write!(line, " at {}:{}:{}", at.file(), at.line(), at.column());
    }
    let _ = writeln!(line, ": {}", info.message());
    unsafe {
        write(2, line.0.as_ptr(), line.1);
        abort()
    }
}

// The runtime passes a launch-environment pointer first; the symbol must not be
// mangled so the host's launch finds it in the device image.
#[cfg(offload_device)]
#[unsafe(no_mangle)]
#[inline(never)]
#[rustc_offload_kernel]
pub extern "C" fn saxpy(_dyn_ptr: *mut u8, a: *const [f32; 1], x: *const [f32; N], y: *mut [f32; N]) {
    unsafe {
        let a = (*a)[0];
        let mut i = 0;
        while i < N {
            (*y)[i] = a * (*x)[i] + (*y)[i];
            i += 1;
        }
    }
}

// ---------------- host side ----------------
// In a module of its own, which the device pass never reads (it is under
// cfg(not(offload_device))): editing it reruns no device compile (cargo finds
// the device pass fresh), only the host pass.
#[cfg(not(offload_device))]
mod host;
#[cfg(not(offload_device))]
pub use host::run;
