// The crate both passes compile. The device pass (offload-build runs
// `cargo rustc --lib` with --cfg offload_device) sees only `kernel`; the host pass
// also compiles `host`, which never reaches a device pass: editing it reruns no
// device pass.
#![feature(rustc_attrs)]
#![cfg_attr(not(offload_device), feature(core_intrinsics))]
#![cfg_attr(offload_device, no_std)]
#![allow(internal_features)]

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

pub mod kernel;

#[cfg(not(offload_device))]
pub mod host;
