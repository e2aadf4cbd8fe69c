// The kernel: its device definition and the host's declaration of it.
pub const N: usize = 256;

// The runtime passes a launch-environment pointer first; the symbol must not be
// mangled so the host's launch finds it in the device image.
#[cfg(offload_device)]
#[unsafe(no_mangle)]
#[inline(never)]
#[rustc_offload_kernel]
pub extern "C" fn scale_add(_dyn_ptr: *mut u8, x: *mut [f64; N]) {
    unsafe {
        let mut i = 0;
        while i < N {
            (*x)[i] = (*x)[i] * 2.0 + 1.0;
            i += 1;
        }
    }
}

#[cfg(not(offload_device))]
unsafe extern "C" {
    pub fn scale_add(x: *mut [f64; N]);
}
