// One run of a plan, written once for every flow (the manifest build, a
// launcher compile, link or one-step build, the cargo flow): each flow makes
// its plan and its runner, states its policy (RunOptions), and Session runs
// the plan through the build context (run_plan: the job cache serving and
// storing), says the remote jobs under --explain, and keeps what the summary
// line, --report (report_data) and the pictures (timeline) need, however the
// run ends.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/exec/remote_runner.hpp"
#include "offload_build/report/build_report.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/report/timeline.hpp"
#include "offload_build/run/build_context.hpp"
#include "offload_build/toolchain/stable_names.hpp"

namespace ob::run {

// What differs between the flows in running a plan, stated once by each.
struct Policy {
  const char* flow;            // the timeline's kind: "manifest", "launcher", "cargo"
  RemoteErrors remote_errors;  // what a bad remote storage URL does (BuildContext::open_cache)
  // The job cache's build state (up-to-date checks): not for launcher
  // compiles sharing one directory (cargo's own passes are never in it).
  bool keep_build_state;
};

// What one run keeps for the summary line, --report and the pictures.
struct Session {
  explicit Session(const Policy& policy) : policy(policy) {}
  const Policy policy;
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();
  report::BuildRecorder recorder;  // also the run's clock
  std::string project;             // the report's and the timeline's title
  fs::path manifest;               // the report's "manifest" (absolute; none for a launcher call)
  std::optional<plan::Plan> kept;  // the plan, for a report or picture drawn after it is gone
  bool cache_enabled = false;
  std::optional<fs::path> cache_dir;
  std::map<plan::JobId, cache::JobCache::MissNote> misses;
  nlohmann::json tools = nlohmann::json::object();
  std::optional<double> seconds;  // the run's time, taken when its jobs ended
  exec::RemoteNotes remote;       // where each job ran, under remote execution

  // Open the cache (BuildContext::open_cache) as the policy says.
  Result<void> open_cache(BuildContext& context, const ProjectSettings& project = {}) const {
    return context.open_cache(project, policy.remote_errors);
  }
  // Run `plan` on `runner` through `context` (BuildContext::run_plan, the
  // observer the recorder when `run` names none; the build state and
  // --explain as the policy and the settings say), then keep the cache's
  // state, the time, the misses and where each job ran (said under --explain).
  BuildContext::Ran run(BuildContext& context, const plan::Plan& plan, exec::CommandRunner& runner,
                        BuildContext::RunOptions run);

  // --report's data for `plan` (the kept plan when null) ended with `result`.
  report::ReportData report_data(const plan::Plan* plan, report::BuildResult result,
                                 const std::string& error = {}) const;
  // The pictures' timeline of `plan`.
  report::Timeline timeline(const plan::Plan& plan, report::BuildResult result) const;
};

// Ok, Interrupted or Failed, from how a run ended.
template <typename T>
report::BuildResult outcome(const Result<T>& result) {
  return result ? report::BuildResult::Ok
         : result.error().code == exit_code::interrupted ? report::BuildResult::Interrupted
                                                         : report::BuildResult::Failed;
}

// Kernel names from each file's place relative to `plan`'s base_dirs and
// name_anchor (set), by `compiler`'s stable-names library, salted with the
// project's namespace `salt` (docs/CACHE.md); a fault is said through `warn`.
// Flang's source names from the working directory's (plan::name_working_dir).
// Then, unless no_cache, the lookup records the job cache checks on every hit.
void use_stable_names(plan::Plan& plan, const fs::path& compiler, const std::string& salt,
                      const std::optional<fs::path>& probe_memo, const config::Config& c,
                      const std::function<void(const std::string&)>& warn);

// The same with the library's answer for the compiler asked before the plan
// was made (StableNamesQuestion); nullopt: stable names are off or unusable.
void use_stable_names(plan::Plan& plan, std::optional<toolchain::StableNames> names, const std::string& salt,
                      const config::Config& c, const std::function<void(const std::string&)>& warn);

// The stable-names answer for a compiler (toolchain::stable_names_for: a
// one-line compile when it is not remembered), asked on a thread while the
// plan is made, whose driver listings it would otherwise follow. Asked at
// when needed (no thread) when `parallel` is false; not at all unless `wanted`.
class StableNamesQuestion {
 public:
  StableNamesQuestion(const fs::path& compiler, const toolchain::NameRoots& roots,
                      const std::optional<fs::path>& probe_memo, bool wanted, bool parallel);
  std::optional<toolchain::StableNames> answer() { return answer_.get(); }  // once

 private:
  std::future<std::optional<toolchain::StableNames>> answer_;
};

// Write --report `file`; a failure to write is the run's error when it
// succeeded (`ok`), else a warning.
Result<void> save_report(const fs::path& file, const report::ReportData& data, bool ok);

// "offload-build: 13 jobs: 10 from cache, 3 run in 1.42 s" (the prefix colored
// on a terminal, ", N up to date" when some were); nothing under --quiet.
void print_summary(const exec::ExecSummary& s, double seconds, bool quiet);
// Where the jobs ran, after a build with remote_execution.
void print_remote_summary(const exec::RemoteRunner::Counts& c);

// --report's view of the cache's misses (BuildContext::Ran::misses), which it must outlive.
std::function<std::optional<report::MissReason>(const plan::Job&)> miss_reasons(
    const std::map<plan::JobId, cache::JobCache::MissNote>& misses);

}  // namespace ob::run
