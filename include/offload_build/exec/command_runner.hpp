// The executor's view of "running processes" (as in ninja's CommandRunner,
// whose StartCommand takes the Edge): start a job, wait for any to finish,
// stop all. The runner sees the whole job (inputs, outputs, tools, kind,
// target, environment), not only its argv, so a runner that does not spawn a
// local process (remote execution, docs/ARCHITECTURE.md) has what it needs.
// Tests use a fake runner (tests/support/fake_runner.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/exec/job_keys.hpp"
#include "offload_build/process/command.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/util/result.hpp"

namespace ob::exec {

class RemoteRunner;  // exec/remote/runner.hpp

// What a runner is asked to run: the job as planned, and the command that
// produces it here. Valid only during start(): a runner copies what it keeps.
struct JobView {
  const plan::Job& job;  // id, kind, target, source, inputs, outputs (final paths), tools, env, depfile
  // job.argv with every output (and the depfile) replaced by its temporary
  // name, run in `command.cwd` (Plan::cwd) with job.env applied.
  const process::Command& command;
  // Where this run must write job.outputs, in order, then the depfile when
  // the job has one: the executor renames them into place after success.
  const std::vector<fs::path>& temps;
  // The job's key as the job cache computed it (ExecOptions::keys), for a
  // runner that needs it (remote execution); nullptr when the build has none.
  // Valid for the whole build.
  JobKeys* keys = nullptr;
};

class CommandRunner {
 public:
  struct Completion {
    plan::JobId job = 0;
    int exit_code = 0;  // 128 + signal when the child was killed
    std::string output;  // what it printed, when the runner buffers output
    double cpu_s = 0;    // user + system CPU seconds of the command and its children
    // The command found its outputs already current (cargo's fingerprint said
    // fresh): counted as up to date, not as run (Progress::job_found_current).
    bool up_to_date = false;
    // A failure's message, when the runner knows better than "failed with exit code N".
    std::string error = {};
  };

  virtual ~CommandRunner() = default;
  virtual Result<void> start(const JobView& job) = 0;
  // Block until a started command finishes. nullopt when nothing is running,
  // when an interrupt (Ctrl-C, SIGTERM) arrived while waiting, or after wake().
  virtual std::optional<Completion> wait_any() = 0;
  // Called from any thread (the executor's cache lookups): make a wait_any()
  // in progress, or the next one, return nullopt soon (a wake-up not yet
  // consumed is kept). A runner whose wait_any never blocks may do nothing.
  virtual void wake() = 0;
  // Stop every running command (SIGTERM) and reap it.
  virtual void stop_all() = 0;
  virtual size_t running() const = 0;
  // The remote runner behind it (remote execution), or nullptr.
  virtual RemoteRunner* remote() { return nullptr; }
  // Whether it wants ahead(): told of each job that will start (its cache
  // lookup missed) while it waits for a slot, so that it may prepare it (the
  // remote runner scans such jobs in batches).
  virtual bool looks_ahead() const { return false; }
  virtual void ahead(const JobView& /*job*/) {}
};

// Real processes, spawned through process::spawn with inherited stdout/stderr,
// so compiler diagnostics (and their colors) reach the user unchanged.
// With `buffer_output`, each child's stdout and stderr go instead to a memory
// file returned in Completion::output when it ends (as ninja does), so they
// cannot tear a terminal status line; the compiler then sees no terminal and
// prints no colors.
std::unique_ptr<CommandRunner> make_process_runner(bool buffer_output = false);

}  // namespace ob::exec
