// Asking the clang driver which commands it would run (`clang -### ...`).
// The planner splits device passes with the answer (single_parse.hpp). An
// interface, so plan tests can answer with canned listings.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/toolchain/frontends/driver_listing.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain {

namespace fs = std::filesystem;

class DriverProbe {
 public:
  virtual ~DriverProbe() = default;
  // The commands `argv` (a clang driver command) would run in `cwd`.
  // Must be safe to call from several threads at once.
  virtual Result<std::vector<driver_listing::Argv>> list(const driver_listing::Argv& argv,
                                                         const fs::path& cwd) = 0;
  // The same, where `names` are the paths of the translation unit in argv
  // (source first, then its outputs): a probe that remembers may answer
  // from another unit's listing of the same command shape.
  virtual Result<std::vector<driver_listing::Argv>> list_named(const driver_listing::Argv& argv, const fs::path& cwd,
                                                               const std::vector<std::string>& /*names*/) {
    return list(argv, cwd);
  }
};

// The listings of several driver commands, in order, at most `parallel`
// probes at once (they are compiler processes too). `started`, when set, is
// called once the threads that probe are running: a thread started while a
// module loads waits for the whole load (glibc holds its TLS lock through
// dlopen), so what loads one (the engine's client) starts from there.
// `names[k]`, when given, are commands[k]'s unit's paths (list_named).
std::vector<Result<std::vector<driver_listing::Argv>>> list_all(
    DriverProbe& probe, const std::vector<driver_listing::Argv>& commands, const fs::path& cwd,
    size_t parallel, const std::function<void()>& started = {},
    const std::vector<std::vector<std::string>>& names = {});

// The GPUs on this machine, as clang's `native` finds them: the lines
// `tc`'s offload-arch prints (sm_90, gfx90a...; empty when there is none).
// Remembered in `memo_dir` per offload-arch binary, host and boot. nullopt
// when offload-arch cannot run.
std::optional<std::vector<std::string>> system_gpu_archs(const Toolchain& tc,
                                                         std::optional<fs::path> memo_dir);

// Runs `argv -###`. With a `memo_dir`, answers are remembered there across
// processes (a probe costs ~40 ms), keyed by the driver binary's identity, the
// argv, the environment the driver reads and the identity of `tc`'s ptxas
// (whose path the driver writes into an nvptx listing); the working directory
// is remembered as a placeholder, so a checkout elsewhere is served too; and
// with the unit's names (list_named) so are the other units whose command
// differs only in them (one probe a build: a flang driver costs ~100 ms),
// unless a name is in the listing other than as a whole argument or the
// source's -main-file-name (a -dwarf-debug-flags naming the command).
std::unique_ptr<DriverProbe> make_driver_probe(const Toolchain& tc, std::optional<fs::path> memo_dir);

}  // namespace ob::toolchain
