// `offload-build cargo ...` (the flow: run/cargo_build.hpp) and `cargo-offload`: cargo runs `cargo-offload offload ARGS` for `cargo offload ARGS`.
// Options before the command word (build|run|test|check|clippy) are offload-build's (--target, -v, --dry-run, -C);
// the rest is cargo's, exactly as `offload-build [OPTIONS] cargo build|run ARGS`.
#include <iostream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cargo_args.hpp"
#include "offload_build/cli/app.hpp"
#include "offload_build/cli/cargo_command.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/run/cargo_build.hpp"
#include "offload_build/util/result.hpp"

namespace ob::cli {

Result<int> cargo(const Request& o, const std::vector<std::string>& args,
                  const std::vector<std::string>& before) {
  // First, before any descriptor of ours is open: make's jobserver.
  run::Session session(o);
  process::set_echo_policy({o.config.flag("verbose"), nullptr});
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << cargo_args::usage("offload-build", " cargo");
    return exit_code::ok;
  }
  if (args[0] == "clean" || args[0] == "doc") return run::cargo_own(o, args);
  auto parsed = cargo_args::parse({{"offload-build"}, before, {"cargo"}}, args);
  if (!parsed) return parsed.error();
  auto built = run::cargo_build(o, *parsed, session);
  if (!built) return built.error();
  if (built->exit_code) return *built->exit_code;  // cargo alone: no kernel crate in this build
  if (o.dry_run || !parsed->run) return exit_code::ok;
  const std::vector<fs::path>& programs = built->programs;
  if (programs.size() != 1)
    return Error::usage(fmt::format("cargo built {} programs; say which to run with --bin NAME", programs.size()));
  return run_program(o, {parsed->verify, parsed->program, /*rust=*/true}, programs.front());
}

int cargo_offload_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "offload") args.erase(args.begin());  // cargo passes its name
  size_t sub = 0;
  while (sub < args.size() && !cargo_args::is_command(args[sub])) {
    const std::string& a = args[sub];
    if (a == "--help" || a == "-h" || a == "help") {
      std::cout << cargo_args::usage("cargo offload", "");
      return exit_code::ok;
    }
    sub += cargo_args::takes_value(a) ? 2 : 1;
  }
  if (sub >= args.size()) {
    std::cerr << "cargo offload: say build, run, test, check or clippy: `cargo offload build [CARGO ARGS]` or "
                 "`cargo offload run [CARGO ARGS] [-- ARGS]` (`cargo offload --help`)\n";
    return exit_code::usage;
  }
  const std::vector<std::string> ours(args.begin(), args.begin() + static_cast<long>(sub));
  if (auto misplaced = cargo_args::misplaced_cargo_option({"cargo", "offload"}, ours, {},
                                                          {args.begin() + static_cast<long>(sub), args.end()})) {
    std::cerr << "cargo offload: error: " << *misplaced << '\n';
    return exit_code::usage;
  }
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
