// `cargo-offload`: cargo runs `cargo-offload offload ARGS` for `cargo offload ARGS`.
// Options before build|run are offload-build's (--target, -v, --dry-run, -C);
// the rest is cargo's, exactly as `offload-build [OPTIONS] cargo build|run ARGS`.
#include <iostream>
#include <string>
#include <vector>

#include "cargo_args.hpp"
#include "offload_build/cli/app.hpp"
#include "offload_build/util/result.hpp"

namespace ob::cli {

namespace {

constexpr const char* kUsage =
    "cargo offload: build and run a cargo project whose kernels use std::offload\n"
    "(the device pass per offload target, the images packaged, the host pass linked\n"
    "through LLVM's linker wrapper). It is `offload-build cargo`; see docs/RUST.md.\n"
    "\n"
    "Usage: cargo offload [OFFLOAD-BUILD OPTIONS] build [CARGO ARGS]\n"
    "       cargo offload [OFFLOAD-BUILD OPTIONS] run [--verify] [CARGO ARGS] [-- PROGRAM ARGS]\n"
    "\n"
    "Offload-build options (before build|run):\n"
    "  --target T[,T...]   offload targets (host, sm_90, gfx90a...); default: the\n"
    "                      package's [package.metadata.offload] targets, else host\n"
    "  -C DIR              run in DIR\n"
    "  -v, --verbose       print every command\n"
    "  --dry-run           print the commands, run nothing\n"
    "  (`offload-build --help` lists the others)\n"
    "\n"
    "Examples:\n"
    "  cargo offload run --release --verify   # prove a kernel ran on the offload device\n"
    "  cargo offload --target sm_90 build\n";

bool is_subcommand(const std::string& a) { return a == "build" || a == "run"; }

}  // namespace

int cargo_offload_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "offload") args.erase(args.begin());  // cargo passes its name
  size_t sub = 0;
  while (sub < args.size() && !is_subcommand(args[sub])) {
    const std::string& a = args[sub];
    if (a == "--help" || a == "-h" || a == "help") {
      std::cout << kUsage;
      return exit_code::ok;
    }
    sub += cargo_args::takes_value(a) ? 2 : 1;
  }
  if (sub >= args.size()) {
    std::cerr << "cargo offload: say build or run: `cargo offload build [CARGO ARGS]` or `cargo "
                 "offload run [CARGO ARGS] [-- ARGS]` (`cargo offload --help`)\n";
    return exit_code::usage;
  }
  const std::vector<std::string> ours(args.begin(), args.begin() + static_cast<long>(sub));
  if (auto parsed = cargo_args::parse({{"cargo", "offload"}, ours, {}}, {args.begin() + static_cast<long>(sub), args.end()});
      !parsed) {
    std::cerr << "cargo offload: error: " << parsed.error().message << '\n';
    return parsed.error().code;
  }
  std::vector<std::string> forwarded{"offload-build"};
  forwarded.insert(forwarded.end(), args.begin(), args.begin() + static_cast<long>(sub));
  forwarded.push_back("cargo");
  forwarded.insert(forwarded.end(), args.begin() + static_cast<long>(sub), args.end());
  std::vector<char*> cargv;
  for (auto& a : forwarded) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  return main(static_cast<int>(forwarded.size()), cargv.data());
}

}  // namespace ob::cli
