// The device side: kernels (no_mangle, the launch-environment pointer first)
// and a panic handler that ends the program with a message.
use crate::N;
use core::fmt::Write;

/// out[i] = x[idx[i]] * a + i: a gather with run-time indices.
#[unsafe(no_mangle)]
#[rustc_offload_kernel]
pub extern "C" fn gather(_dyn_ptr: *mut u8, a: *const f64, idx: *const [u32; N], x: *const [f64; N],
                         out: *mut [f64; N]) {
    let (a, idx, x, out) = unsafe { (*a, &*idx, &*x, &mut *out) };
    for (i, o) in out.iter_mut().enumerate() {
        let j = idx[i] as usize;
        assert!(j < N, "index {j} out of range");
        *o = x[j] * a + i as f64;
    }
}

/// sums[k] = the sum of v[k * step ..][..step], with checked arithmetic; a step
/// past N / 16 slices past the end of `v`: the kernel panics.
#[unsafe(no_mangle)]
#[rustc_offload_kernel]
pub extern "C" fn block_sums(_dyn_ptr: *mut u8, v: *const [u32; N], sums: *mut [u32; N / 16],
                             step: *const u32) {
    let (v, sums, step) = unsafe { (&*v, &mut *sums, *step as usize) };
    for (k, sum) in sums.iter_mut().enumerate() {
        let block = &v[k * step..(k + 1) * step];
        *sum = block.iter().fold(0u32, |acc, &e| acc.checked_add(e).expect("sum overflows u32"));
    }
}

// A panicking kernel ends the program: "device kernel panicked at FILE:LINE:COL:
// MESSAGE" on stderr, then abort() (docs/RUST.md#panics). A handler that loops
// would hang the program instead.
struct Line {
    buf: [u8; 512],
    len: usize,
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            if self.len < self.buf.len() {
                self.buf[self.len] = b;
                self.len += 1;
            }
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
    let mut line = Line { buf: [0; 512], len: 0 };
    let _ = write!(line, "device kernel panicked");
    if let Some(at) = info.location() {
        let _ = write!(line, " at {}:{}:{}", at.file(), at.line(), at.column());
    }
    let _ = writeln!(line, ": {}", info.message());
    unsafe {
        write(2, line.buf.as_ptr(), line.len);
        abort()
    }
}
