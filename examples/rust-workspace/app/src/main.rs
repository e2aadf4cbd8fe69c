// Host-only: uses the kernels crate's launchers. Editing this crate runs no
// device pass. `app 17` makes block_sums slice past the end: the kernel panics.
use kernels::{N, gather_scaled, sums_of};

fn main() {
    let step: u32 = std::env::args().nth(1).map_or(16, |s| s.parse().expect("a number"));
    let idx: [u32; N] = core::array::from_fn(|i| (N - 1 - i) as u32);
    let x: [f64; N] = core::array::from_fn(|i| i as f64);
    let out = gather_scaled(2.0, &idx, &x);
    let expect: [f64; N] = core::array::from_fn(|i| (N - 1 - i) as f64 * 2.0 + i as f64);
    let gather_ok = out == expect;

    let v: [u32; N] = core::array::from_fn(|i| i as u32);
    let sums = sums_of(&v, step);
    let sums_ok = (0..N / 16).all(|k| sums[k] == (16 * k as u32..16 * k as u32 + 16).sum::<u32>());
    println!("gather: out[0]={} out[{}]={} {}", out[0], N - 1, out[N - 1], if gather_ok { "OK" } else { "WRONG" });
    println!("block_sums: sums[0]={} sums[15]={} {}", sums[0], sums[15], if sums_ok { "OK" } else { "WRONG" });
    std::process::exit(if gather_ok && sums_ok { 0 } else { 1 });
}
