#include "offload_build/cli/app.hpp"

int main(int argc, char** argv) { return ob::cli::main(argc, argv); }
