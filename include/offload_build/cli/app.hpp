// The command-line front end. main.cpp forwards here; this is the only place
// with a catch-all, turning any escaped exception into a clean error and exit code.
#pragma once

namespace ob::cli {

int main(int argc, char** argv);

// `cargo-offload`, the cargo subcommand (`cargo offload build|run [ARGS]`):
// `offload-build [OPTIONS] cargo build|run [ARGS]` (src/cli/cargo_offload.cpp).
int cargo_offload_main(int argc, char** argv);

}  // namespace ob::cli
