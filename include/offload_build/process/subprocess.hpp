// The one way offload-build starts a child process: posix_spawn with an argv
// vector, no shell. Every other layer (executor, doctor, run) goes through here,
// so `-v` echoes every command from this one place.
#pragma once

#include <sys/types.h>

#include <ostream>
#include <string>

#include "offload_build/process/command.hpp"
#include "offload_build/util/result.hpp"

namespace ob::process {

// Process-wide echo policy, set once by the CLI: with `verbose`, every command
// is printed (Command::display) to `echo_stream` just before it starts.
struct EchoPolicy {
  bool verbose = false;
  std::ostream* stream = nullptr;  // nullptr: std::cerr
};
void set_echo_policy(const EchoPolicy& policy);
void echo_command(const Command& cmd);

// File descriptors for the child's stdio; -1 inherits ours.
struct Stdio {
  int in = -1;
  int out = -1;
  int err = -1;
};

// Start `cmd` (echoed first under -v).
// Errors (program not found, cwd missing) name the program and say what to do.
Result<pid_t> spawn(const Command& cmd, const Stdio& stdio = {});

// Wait for `pid`; returns the exit code, or 128 + signal number if it was killed.
// Retries when a signal interrupts the wait, unless `interruptible`: then it
// returns -2 so the caller can check for Ctrl-C and wait again later.
int wait_exit_code(pid_t pid, bool interruptible = false);

// Wait for a child that runs in this process's place (a command run
// unchanged), handing it a SIGINT or SIGTERM this process gets (with the
// handlers of interrupt.hpp installed), and end as it ended: its exit code,
// or die of the same signal where that is harmless (SIGINT, SIGTERM, SIGHUP,
// SIGPIPE: no core dump of our own); 128 + signal for any other.
int wait_in_place(pid_t pid);

// Convert a waitpid status to an exit code (128 + signal when killed).
int status_to_exit_code(int status);

struct Captured {
  int exit_code = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Run `cmd` to completion with stdout and stderr captured (probes, doctor).
// With a `timeout_ms`, a child still running then is killed and an error
// returned; so is one running when SIGINT/SIGTERM arrives (interrupt.hpp,
// when its handlers are installed), with exit code 130.
Result<Captured> capture(const Command& cmd, int timeout_ms = -1);

}  // namespace ob::process
