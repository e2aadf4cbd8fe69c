// Host-only code: the launch and the check of the results.
use crate::kernel::{N, scale_add};

#[inline(never)]
fn launch(x: &mut [f64; N]) {
    core::intrinsics::offload(scale_add, [1, 1, 1], [1, 1, 1], (x as *mut [f64; N],))
}

pub fn run() -> bool {
    let mut x: [f64; N] = core::array::from_fn(|i| i as f64);
    launch(&mut x);
    let bad = (0..N).filter(|&i| x[i] != 2.0 * i as f64 + 1.0).count();
    println!("rust-cargo: x[0]={} x[1]={} x[{}]={} mismatches={} {}", x[0], x[1], N - 1, x[N - 1], bad,
             if bad == 0 { "OK" } else { "FAILED" });
    bad == 0
}
