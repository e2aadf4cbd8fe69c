// Runs a Plan: up to `parallelism` jobs at once, each writing to temporary
// names that are renamed into place only after the job succeeded and its
// outputs passed their checks. Stops starting jobs after the first failure;
// on Ctrl-C stops the children, removes partial outputs and returns exit 130.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "offload_build/exec/command_runner.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/util/result.hpp"

namespace ob::exec {

// What `serve` did with a ready job.
enum class Served {
  No,        // run the command
  FromCache, // the outputs were written to the temporary paths: commit them
  UpToDate,  // the outputs in place are current: nothing to run or write
};

// Cache lookups in flight at once when ExecOptions::lookups is 0 (at least
// the build's parallelism): enough to hide a remote's latency.
inline constexpr size_t kDefaultLookups = 16;

struct ExecOptions {
  size_t parallelism = 1;
  // Told what happens to every job (report/progress.hpp: the console's status
  // or lines, --report). When unset, `progress` gets plain "[3/7] device sm_90
  // src/k.c" lines (nullptr: nothing). Output a runner buffered (Completion::
  // output) goes to the listener's job_output, else straight to std::cerr.
  report::Progress* observer = nullptr;
  std::ostream* progress = nullptr;
  // Called when a job's command succeeded, with its outputs still at their
  // temporary paths (same order as Job::outputs). An error fails the job.
  std::function<Result<void>(const plan::Job&, const std::vector<fs::path>&)> check_outputs;
  // Called when a job is ready, before anything runs: may write the job's
  // outputs to the temporary paths itself (a cache hit), or find them current.
  // Runs on a lookup thread, up to `lookups` at once (so a remote's latency
  // is paid concurrently): it must be safe to call from several threads and
  // must not use the listener or std::cerr (a whole line in one write(2), as
  // remote storage's warnings, is fine); what it has to say goes out in
  // after_serve.
  std::function<Served(const plan::Job&, const std::vector<fs::path>&)> serve;
  // On the executor's own thread, once `serve` returned for a job, before the
  // job's progress event: say what the lookup found (--explain, warnings a
  // cache hit replays).
  std::function<void(const plan::Job&, Served)> after_serve;
  // Each job's key, as whoever serves computed it (cache::JobCache), handed
  // to the runner with the job (JobView::keys).
  JobKeys* keys = nullptr;
  // Lookups (`serve`) in flight at most; 0: max(parallelism, kDefaultLookups).
  // 1: one at a time, on the executor's own thread (no lookup threads: what a
  // build with only a local cache wants, where a lookup takes microseconds).
  size_t lookups = 0;
  // Called after check_outputs passed, before the outputs are committed;
  // `depfile` is the temporary depfile the command wrote, if the job has one;
  // `output` what it printed, when the runner buffers output (else empty).
  std::function<void(const plan::Job&, const std::vector<fs::path>&, const std::optional<fs::path>& depfile,
                     std::string_view output)>
      after_run;
  // Optional slots shared with other processes (a make jobserver,
  // process/jobserver.hpp). While one of our commands runs, another starts only
  // after try_acquire_slot() returned true; it must not block (the executor
  // waits for its own commands instead). release_slot() gives one back when
  // a command ends. The first running command needs none.
  std::function<bool()> try_acquire_slot;
  std::function<void()> release_slot;
};

struct ExecSummary {
  size_t jobs_total = 0;
  size_t jobs_run = 0;     // commands started (less those that found their outputs current)
  size_t jobs_served = 0;  // outputs produced by `serve` (cache hits)
  size_t jobs_up_to_date = 0;  // outputs already current (recorded state unchanged, or the command said so)
};

Result<ExecSummary> execute(const plan::Plan& plan, CommandRunner& runner, const ExecOptions& options);

// The order execute() reports the jobs of `plan` when every one is up to
// date and lookups are asked on its own thread (ExecOptions::lookups = 1):
// what a no-op build's record replays (cache/noop_record.hpp).
std::vector<plan::JobId> up_to_date_order(const plan::Plan& plan);

// The command a job runs, with its outputs (and depfile) replaced by `temps`
// (outputs in order, then the depfile when the job has one).
process::Command job_command(const plan::Plan& plan, const plan::Job& job, const std::vector<fs::path>& temps);

// Where a job writes an output before it is committed: a hidden name in the
// same directory, so the final rename is atomic.
fs::path temporary_path(const fs::path& final_path, plan::JobId job);

// The whole plan as a re-runnable shell script: cd, mkdir -p, then every job.
std::string dry_run_script(const plan::Plan& plan);

}  // namespace ob::exec
