// Two kernels that index with run-time values (bounds checks, overflow checks
// in the dev profile), use iterators, assert!, checked/wrapping arithmetic and
// core::cmp, and safe host-side functions that launch them. The device pass
// (offload-build, --cfg offload_device) sees the kernels and the panic handler;
// the host pass sees the declarations and the launchers.
#![feature(rustc_attrs)]
#![cfg_attr(not(offload_device), feature(core_intrinsics))]
#![cfg_attr(offload_device, no_std)]
#![allow(internal_features)]

pub const N: usize = 256;

#[cfg(offload_device)]
mod device;

#[cfg(not(offload_device))]
mod host;
#[cfg(not(offload_device))]
pub use host::*;
