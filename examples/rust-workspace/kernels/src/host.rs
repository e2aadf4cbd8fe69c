// The host side: the kernels' declarations (without the launch-environment
// pointer) and safe functions that launch them.
use crate::N;

unsafe extern "C" {
    fn gather(a: *const f64, idx: *const [u32; N], x: *const [f64; N], out: *mut [f64; N]);
    fn block_sums(v: *const [u32; N], sums: *mut [u32; N / 16], step: *const u32);
}

/// out[i] = x[idx[i]] * a + i, on the offload device.
pub fn gather_scaled(a: f64, idx: &[u32; N], x: &[f64; N]) -> [f64; N] {
    let mut out = [0.0; N];
    core::intrinsics::offload::<_, _, ()>(
        gather,
        [1, 1, 1],
        [1, 1, 1],
        (&a as *const f64, idx as *const [u32; N], x as *const [f64; N], &mut out as *mut [f64; N]),
    );
    out
}

/// Sums of `step` consecutive values, on the offload device.
pub fn sums_of(v: &[u32; N], step: u32) -> [u32; N / 16] {
    let mut sums = [0; N / 16];
    core::intrinsics::offload::<_, _, ()>(
        block_sums,
        [1, 1, 1],
        [1, 1, 1],
        (v as *const [u32; N], &mut sums as *mut [u32; N / 16], &step as *const u32),
    );
    sums
}
