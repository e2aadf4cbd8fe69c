// Private to src/cli: the words after `offload-build cargo` / `cargo offload`:
// build|run, cargo's arguments, offload-build's `--verify`, the program's
// arguments after `--`, and offload-build's options put there by mistake.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "offload_build/run/cargo_build.hpp"
#include "offload_build/util/result.hpp"

namespace ob::cli::cargo_args {

using CargoArgs = run::CargoArgs;  // run/cargo_build.hpp

// How the user's command line reads, to show where a misplaced option goes:
// head + offload-build's options + mid + build|run ... ({"offload-build"},
// {"-C", "dir"}, {"cargo"}; or {"cargo", "offload"}, {...}, {}).
struct CommandLine {
  std::vector<std::string> head, ours, mid;
};

// `offload-build cargo --help` / `cargo offload --help`: the command's words
// before offload-build's options (`head`) and after them (`mid`: " cargo" or "").
std::string usage(const std::string& head, const std::string& mid);

// build, run, test, check, clippy: the cargo commands offload-build drives.
bool is_command(const std::string& word);

// cargo's options put before the command word (`offload-build --release cargo
// build`, `cargo offload --release build`): the message with the command line
// that puts them after it (`head` + offload-build's options in `before` +
// `mid` + the command word + them + the rest of `after`); nullopt when
// `before` holds only offload-build's options.
std::optional<std::string> misplaced_cargo_option(const std::vector<std::string>& head,
                                                  const std::vector<std::string>& before,
                                                  const std::vector<std::string>& mid,
                                                  const std::vector<std::string>& after);

// Whether `a` is one of offload-build's options that takes its value as the
// next argument (`-C build` names a directory), as the one option table says.
bool takes_value(const std::string& a);

// `args` is build|run and what follows. A usage error when it is neither, when
// --verify follows build, or when one of offload-build's own options (that
// cargo has not: --no-cache, --dry-run, -C, ... or --target with an offload
// target such as sm_90) stands among cargo's arguments: the error names them
// and gives the command line with them moved before `mid` (or build|run).
Result<CargoArgs> parse(const CommandLine& line, const std::vector<std::string>& args);

}  // namespace ob::cli::cargo_args
