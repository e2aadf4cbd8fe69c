// The crate both passes compile. The device pass (offload-build runs
// `cargo rustc --lib` with --cfg offload_device) sees only `kernel`; the host pass
// also compiles `host`, which never reaches a device pass: editing it reruns no
// device pass.
#![feature(rustc_attrs)]
#![cfg_attr(not(offload_device), feature(core_intrinsics))]
#![cfg_attr(offload_device, no_std)]
#![allow(internal_features)]

#[cfg(offload_device)]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}

pub mod kernel;

#[cfg(not(offload_device))]
pub mod host;
