// SAXPY (y = a*x + y) offloaded with std::offload: one source, two passes.
// The device pass (target "host": x86_64 as an offload device) compiles this file
// with --cfg offload_device; the host pass compiles it without and launches the
// kernel through the offload runtime. `offload-build run --verify` shows the launch.
#![feature(rustc_attrs)]
#![cfg_attr(not(offload_device), feature(core_intrinsics))]
#![allow(internal_features)]
#![cfg_attr(offload_device, no_std)]

const N: usize = 1024;

// ---------------- device side ----------------
#[cfg(offload_device)]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    device_panic::report(info) // "device kernel panicked at ...", then abort()
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
#[cfg(not(offload_device))]
unsafe extern "C" {
    pub fn saxpy(a: *const [f32; 1], x: *const [f32; N], y: *mut [f32; N]);
}

#[cfg(not(offload_device))]
#[inline(never)]
fn launch(a: &[f32; 1], x: &[f32; N], y: &mut [f32; N]) {
    // One block of one thread: the kernel loops over all N elements.
    core::intrinsics::offload(saxpy, [1, 1, 1], [1, 1, 1], (a as *const _, x as *const _, y as *mut _))
}

#[cfg(not(offload_device))]
fn main() {
    let a = [2.0f32];
    let x: [f32; N] = core::array::from_fn(|i| i as f32);
    let mut y = [1.0f32; N];
    launch(&a, &x, &mut y);
    let bad = (0..N).filter(|&i| y[i] != 2.0 * i as f32 + 1.0).count();
    println!("rust-saxpy: n={} y[0]={} y[10]={} y[{}]={} mismatches={} {}", N, y[0], y[10], N - 1, y[N - 1], bad,
             if bad == 0 { "OK" } else { "FAILED" });
    if bad != 0 {
        std::process::exit(1);
    }
}

// A kernel that panics (an index out of bounds, an overflow in a debug build)
// ends the program: "device kernel panicked at FILE:LINE:COL: MESSAGE" on
// stderr, then abort() (docs/RUST.md#panics). A handler that loops would hang it.
#[cfg(offload_device)]
mod device_panic {
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

    pub fn report(info: &core::panic::PanicInfo) -> ! {
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
}
