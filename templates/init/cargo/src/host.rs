// @NAME@'s host side: the kernel's declaration, its launch and the check of
// its results. Only the host pass compiles this file (lib.rs declares it under
// cfg(not(offload_device))), so editing it reruns no device compile.
use crate::N;

// The kernel as the host sees it: without the launch-environment pointer.
unsafe extern "C" {
    pub fn saxpy(a: *const [f32; 1], x: *const [f32; N], y: *mut [f32; N]);
}

#[inline(never)]
fn launch(a: &[f32; 1], x: &[f32; N], y: &mut [f32; N]) {
    // One block of one thread: the kernel loops over all N elements.
    core::intrinsics::offload(saxpy, [1, 1, 1], [1, 1, 1], (a as *const _, x as *const _, y as *mut _))
}

// Launch the kernel and check its results; true when all are right.
pub fn run() -> bool {
    let a = [2.0f32];
    let x: [f32; N] = core::array::from_fn(|i| i as f32);
    let mut y = [1.0f32; N];
    launch(&a, &x, &mut y);
    let bad = (0..N).filter(|&i| y[i] != 2.0 * i as f32 + 1.0).count();
    println!("@NAME@: n={} y[10]={} mismatches={} {}", N, y[10], bad, if bad == 0 { "OK" } else { "FAIL" });
    bad == 0
}
