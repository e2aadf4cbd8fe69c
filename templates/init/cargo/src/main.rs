// The program: the kernel and its launch live in the library (src/lib.rs),
// the crate offload-build compiles once more per target for the device.
fn main() {
    if !@CRATE@::run() {
        std::process::exit(1);
    }
}
