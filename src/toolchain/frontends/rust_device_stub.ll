; Linked into every Rust host-device image (offload-build's device link, see
; docs/RUST.md). The device pass is built with -Cpanic=abort, but the `core` in
; the rustc sysroot was built to unwind: its functions keep a personality
; reference (DW.ref.rust_eh_personality), which `std` would define. A device
; image holds no `std`, and nothing ever unwinds in it (a panic calls the
; crate's panic handler, which must not return), so this definition is never
; called. Weak and hidden: a crate that defines its own wins, and the image
; exports nothing new.
define weak hidden void @rust_eh_personality() {
  call void @llvm.trap()
  unreachable
}

declare void @llvm.trap()
