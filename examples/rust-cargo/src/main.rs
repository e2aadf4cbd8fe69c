fn main() {
    if !rust_cargo::host::run() {
        std::process::exit(1);
    }
}
