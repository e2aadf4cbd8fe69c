// Launcher mode: running the plan a launcher path made (launcher_run.cpp),
// the same way for a compile, a link and a one-step build: the cache, stable
// kernel names, the run with the jobserver, its output in clang's order, the
// --report and the pictures.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launcher_setup.hpp"
#include "offload_build/cache/whole_compile.hpp"
#include "offload_build/plan/plan.hpp"

namespace ob::run {

class Session;

// What a launcher path made of a command: its plan, and how to run it.
struct Split {
  plan::Plan plan;
  std::string project;  // the report's and the timeline's title
  // Kernel names from each file's place (relative to the base directory, if
  // any) and the project's namespace (--kernel-namespace).
  bool stable_names = false;
  std::string verbose;  // what -v says of the split
  // The compile's whole entry, stored after it succeeded (cache/whole_compile.hpp).
  std::unique_ptr<cache::WholeCompile> whole;
  // Why the command runs unchanged when a job failed (the compiler then
  // prints exactly its own diagnostics).
  Unchanged failed;
  // The plan's one job is the caller's own compile (launcher_plain.cpp): its
  // failure is the compiler's (what it printed, its exit code), not run again.
  bool failure_is_final = false;
};

// A launcher path's answer: a plan to run, an exit code already known (a
// compile served whole, an interrupt), or neither (`why` says it runs
// unchanged).
struct PathAnswer {
  std::optional<Split> split;
  std::optional<int> done;
};

// A launcher path (a compile, a link, a one-step build, a plain compile):
// what it makes of the command, asked once the session opened the cache
// (local, and remotes whose errors are warnings; not under --dry-run, which
// only reads the probe memo). A path that answers neither a plan nor an exit
// code has said why the command runs unchanged.
using LauncherPath = std::function<PathAnswer(Session&)>;

// Runs the plan `path` makes (set up as `setup`) with the cache and the
// jobserver, then writes the --report of `command` (under --dry-run, prints
// the plan's script and runs nothing); nullopt when the command runs
// unchanged, with `why` when a job failed.
std::optional<int> run_path(const LauncherPath& path, const LaunchSetup& setup, Session& session,
                            const std::vector<std::string>& command, Unchanged& why);

}  // namespace ob::run
