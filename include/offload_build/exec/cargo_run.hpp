// Running cargo and the tools around it for `offload-build cargo`'s runner
// (cargo_runner.hpp).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/toolchain/frontends/cargo.hpp"
#include "offload_build/util/result.hpp"

namespace ob::exec::cargo_run {

namespace fs = std::filesystem;

// The processes the cargo flow's jobs start, from several threads at once
// (cargo_runner.cpp): each known while it runs, so that stop_all ends them all.
class Children {
 public:
  Result<pid_t> spawn(const process::Command& cmd, const process::Stdio& stdio = {});
  struct Exit {
    int code = 0;      // 128 + signal when killed
    double cpu_s = 0;  // user + system CPU seconds
  };
  Exit wait(pid_t pid);
  // SIGTERM to every running child; spawn refuses from now on.
  void stop_all();

 private:
  std::mutex mu_;
  std::set<pid_t> running_;
  bool stopping_ = false;
};

// The diagnostics of one build's cargo runs (Invocation::render), which may
// run at once: each printed on stderr whole, and once. One this build printed
// already (the same Diagnostic::key: code that several passes compile, the
// kernel crate and shared dependencies, or a fresh unit's replayed ones) is
// counted, not printed again, as cargo does across its own units. Errors
// always print. cargo's own stderr comes through here too (relay), so that
// the order is cargo's (run_cargo).
class Diagnostics {
 public:
  Diagnostics();
  // Prints `d` unless it is a repeat; false when it was one.
  bool print(const toolchain::cargo::Diagnostic& d, bool colour);
  void print_text(const std::string& text);  // whole, between diagnostics
  void relay(std::string_view bytes);        // cargo's stderr, but a build script's repeated warning
  bool terminal() const { return terminal_; }  // our stderr is one

 private:
  void write_line(std::string_view text);
  const bool terminal_;
  std::mutex mu_;
  std::set<std::string> printed_;  // Diagnostic::key
  bool line_open_ = false;         // the last bytes relayed end mid-line (cargo's progress bar)
};

// What a cargo run printed on stdout: its JSON messages (other lines were passed
// through to our stdout; stderr, with cargo's progress and errors, is the user's,
// relayed through Diagnostics when inv.render).
struct CargoOutput {
  int exit_code = 0;
  double cpu_s = 0;
  std::vector<std::string> messages;
};

// Run cargo (echoed under -v) in `cwd`; its diagnostics, when inv.render,
// through `diagnostics`, with cargo's summary line after each unit's warnings.
Result<CargoOutput> run_cargo(const toolchain::cargo::Invocation& inv, const fs::path& cwd, Children& children,
                              Diagnostics& diagnostics);

// Run a tool to completion: the CPU seconds it used; a non-zero exit is an
// error naming `what`.
Result<double> run_tool(const std::vector<std::string>& argv, const fs::path& cwd, const std::string& what,
                        Children& children);

}  // namespace ob::exec::cargo_run
