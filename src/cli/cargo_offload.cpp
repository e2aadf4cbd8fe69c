// `cargo-offload`: cargo runs `cargo-offload offload ARGS` for `cargo offload ARGS`.
// Options before build|run are offload-build's (--target, -v, --dry-run, -C);
// the rest is cargo's, exactly as `offload-build [OPTIONS] cargo build|run ARGS`.
#include <iostream>
#include <string>
#include <vector>

#include "offload_build/cli/app.hpp"
#include "offload_build/util/result.hpp"
#include "options.hpp"

namespace ob::cli {

namespace {

constexpr const char* kUsage =
    "cargo offload: build and run a cargo project whose kernels use std::offload\n"
    "(the device pass per offload target, the images packaged, the host pass linked\n"
    "through LLVM's linker wrapper). It is `offload-build cargo`; see docs/RUST.md.\n"
    "\n"
    "Usage: cargo offload [OFFLOAD-BUILD OPTIONS] build [CARGO ARGS]\n"
    "       cargo offload [OFFLOAD-BUILD OPTIONS] run [CARGO ARGS] [-- PROGRAM ARGS]\n"
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
    "  cargo offload run --release\n"
    "  cargo offload --target sm_90 build\n";

bool is_subcommand(const std::string& a) { return a == "build" || a == "run"; }

// Whether `a` is one of offload-build's options that takes its value as the
// next argument (`-C build` names a directory), as the one option table says.
bool takes_value(const std::string& a) {
  CLI::App app;
  GlobalOptions options;
  add_global_options(app, options);
  const CLI::Option* opt = app.get_option_no_throw(a);
  return opt && opt->get_type_size() > 0;
}

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
    sub += takes_value(a) ? 2 : 1;
  }
  if (sub >= args.size()) {
    std::cerr << "cargo offload: say build or run: `cargo offload build [CARGO ARGS]` or `cargo "
                 "offload run [CARGO ARGS] [-- ARGS]` (`cargo offload --help`)\n";
    return exit_code::usage;
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
