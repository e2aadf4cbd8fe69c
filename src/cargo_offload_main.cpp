#include "offload_build/cli/app.hpp"

int main(int argc, char** argv) { return ob::cli::cargo_offload_main(argc, argv); }
