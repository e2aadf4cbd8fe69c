// The executor's view of "running processes" (as in ninja): start a command
// for a job, wait for any to finish, stop all. Tests use a fake runner.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "offload_build/process/command.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/util/result.hpp"

namespace ob {

class CommandRunner {
 public:
  struct Completion {
    JobId job = 0;
    int exit_code = 0;  // 128 + signal when the child was killed
    std::string output;  // what it printed, when the runner buffers output
  };

  virtual ~CommandRunner() = default;
  virtual Result<void> start(JobId job, const Command& cmd) = 0;
  // Block until a started command finishes. nullopt when nothing is running,
  // or when an interrupt (Ctrl-C, SIGTERM) arrived while waiting.
  virtual std::optional<Completion> wait_any() = 0;
  // Stop every running command (SIGTERM) and reap it.
  virtual void stop_all() = 0;
  virtual size_t running() const = 0;
};

// Real processes, spawned through exec::spawn with inherited stdout/stderr,
// so compiler diagnostics (and their colors) reach the user unchanged.
// With `buffer_output`, each child's stdout and stderr go instead to a memory
// file returned in Completion::output when it ends (as ninja does), so they
// cannot tear a terminal status line; the compiler then sees no terminal and
// prints no colors.
std::unique_ptr<CommandRunner> make_process_runner(bool buffer_output = false);

}  // namespace ob
