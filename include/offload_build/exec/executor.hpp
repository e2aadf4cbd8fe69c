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
#include "offload_build/util/result.hpp"

namespace ob {

struct ExecOptions {
  size_t parallelism = 1;
  std::ostream* progress = nullptr;  // "[3/7] device sm_90 src/k.c" lines; nullptr: none
  // Called when a job's command succeeded, with its outputs still at their
  // temporary paths (same order as Job::outputs). An error fails the job.
  std::function<Result<void>(const Job&, const std::vector<fs::path>&)> check_outputs;
};

struct ExecSummary {
  size_t jobs_total = 0;
  size_t jobs_run = 0;
};

Result<ExecSummary> execute(const Plan& plan, CommandRunner& runner, const ExecOptions& options);

// The command a job runs, with its outputs replaced by `temps`.
Command job_command(const Plan& plan, const Job& job, const std::vector<fs::path>& temps);

// Where a job writes an output before it is committed: a hidden name in the
// same directory, so the final rename is atomic.
fs::path temporary_path(const fs::path& final_path, JobId job);

// The whole plan as a re-runnable shell script: cd, mkdir -p, then every job.
std::string dry_run_script(const Plan& plan);

}  // namespace ob
