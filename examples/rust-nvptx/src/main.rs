// x[i] = 2*x[i] + 1 on an NVIDIA GPU (sm_90) with std::offload.
// One source, two passes:
//   device: --cfg offload_device --target nvptx64-nvidia-cuda. No GPU `core` is
//           installed for nvptx64, so the device crate is #![no_core] and brings
//           the few lang items it uses (module minicore).
//   host:   x86_64 with std; launches 2 blocks of 128 threads.
#![feature(rustc_attrs)]
#![cfg_attr(not(offload_device), feature(core_intrinsics))]
#![cfg_attr(offload_device, feature(no_core, lang_items, abi_gpu_kernel, link_llvm_intrinsics))]
#![cfg_attr(offload_device, no_core)]
#![cfg_attr(offload_device, no_main)]
#![allow(internal_features)]
#![cfg_attr(offload_device, allow(dead_code))]

// ---------------- device side: a minimal "core" ----------------
#[cfg(offload_device)]
mod minicore {
    #[lang = "pointee_sized"]
    pub trait PointeeSized {}
    #[lang = "meta_sized"]
    pub trait MetaSized: PointeeSized {}
    #[lang = "sized"]
    pub trait Sized: MetaSized {}
    #[lang = "copy"]
    pub trait Copy {}
    impl<T: PointeeSized> Copy for *mut T {}
    impl Copy for u32 {}
    impl Copy for usize {}
    impl Copy for f64 {}
    #[lang = "add"]
    pub trait Add<Rhs = Self> {
        type Output;
        fn add(self, rhs: Rhs) -> Self::Output;
    }
    #[lang = "mul"]
    pub trait Mul<Rhs = Self> {
        type Output;
        fn mul(self, rhs: Rhs) -> Self::Output;
    }
    impl Add for f64 {
        type Output = f64;
        fn add(self, r: f64) -> f64 { self + r }
    }
    impl Mul for f64 {
        type Output = f64;
        fn mul(self, r: f64) -> f64 { self * r }
    }
    impl Add for u32 {
        type Output = u32;
        fn add(self, r: u32) -> u32 { self + r }
    }
    impl Mul for u32 {
        type Output = u32;
        fn mul(self, r: u32) -> u32 { self * r }
    }
    impl Add for usize {
        type Output = usize;
        fn add(self, r: usize) -> usize { self + r }
    }
    impl Mul for usize {
        type Output = usize;
        fn mul(self, r: usize) -> usize { self * r }
    }
}

#[cfg(offload_device)]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.read.ptx.sreg.tid.x"]
    safe fn tid_x() -> u32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.ctaid.x"]
    safe fn ctaid_x() -> u32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.ntid.x"]
    safe fn ntid_x() -> u32;
}

// The runtime passes a launch-environment pointer first.
#[cfg(offload_device)]
#[unsafe(no_mangle)]
#[inline(never)]
#[rustc_offload_kernel]
pub extern "gpu-kernel" fn twice_plus_one(_dyn_ptr: *mut u8, x: *mut [f64; 256]) {
    // Launched with exactly 256 threads, so no bounds check is needed.
    let i = (ctaid_x() * ntid_x() + tid_x()) as usize;
    let p = (x as usize + i * 8) as *mut f64;
    unsafe { *p = *p * 2.0 + 1.0 };
}

// ---------------- host side ----------------
#[cfg(not(offload_device))]
unsafe extern "C" {
    pub fn twice_plus_one(x: *mut [f64; 256]);
}

#[cfg(not(offload_device))]
#[inline(never)]
fn launch(x: &mut [f64; 256]) {
    core::intrinsics::offload(twice_plus_one, [2, 1, 1], [128, 1, 1], (x as *mut [f64; 256],))
}

#[cfg(not(offload_device))]
fn main() {
    let mut x: [f64; 256] = core::array::from_fn(|i| i as f64);
    launch(&mut x);
    println!("rust-nvptx: x[0]={} x[1]={} x[255]={}", x[0], x[1], x[255]);
}
