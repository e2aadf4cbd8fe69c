// How a build shows itself while it runs. The executor tells a Progress what
// happens to each job; ConsoleProgress prints it (a ninja-style status line on
// a terminal, one line per job otherwise, nothing under --quiet) and
// BuildRecorder (build_report.hpp) remembers it for --report.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/plan/plan.hpp"

namespace ob::report {

// Where the outputs of a job that ran no command came from.
enum class ServedFrom {
  Cache,     // written from the kernel cache
  UpToDate,  // already in place and current
};

enum class BuildResult { Ok, Failed, Interrupted };

std::string_view build_result_name(BuildResult result);  // "ok", "failed", "interrupted"

// The executor's events, per job in this order: started (its command runs) or
// served (no command); output (what a command printed, when the runner buffers
// it); then finished or failed. `seconds` is the job's wall time.
class Progress {
 public:
  virtual ~Progress() = default;
  virtual void build_started(const plan::Plan& /*plan*/) {}
  virtual void job_started(const plan::Job& /*job*/) {}
  virtual void job_served(const plan::Job& /*job*/, ServedFrom /*from*/, double /*seconds*/) {}
  virtual void job_output(const plan::Job& /*job*/, std::string_view /*text*/) {}
  virtual void job_finished(const plan::Job& /*job*/, double /*seconds*/) {}
  // Just before job_finished: the command found its outputs already current
  // (CommandRunner::Completion::up_to_date), so the job counts as up to date.
  virtual void job_found_current(const plan::Job& /*job*/) {}
  // The CPU time (user + system) a job's command used, just before job_finished.
  virtual void job_cpu(const plan::Job& /*job*/, double /*cpu_seconds*/) {}
  // A command that failed (exit_code != 0), or one whose outputs failed their
  // checks or could not be committed (exit_code 0, or -1 when it never started).
  virtual void job_failed(const plan::Job& /*job*/, int /*exit_code*/, double /*seconds*/,
                          const std::string& /*error*/) {}
  virtual void build_finished(BuildResult /*result*/) {}
};

// Passes every event on to several listeners, in order.
class ProgressTee final : public Progress {
 public:
  explicit ProgressTee(std::vector<Progress*> sinks) : sinks_(std::move(sinks)) {}
  void build_started(const plan::Plan& plan) override;
  void job_started(const plan::Job& job) override;
  void job_served(const plan::Job& job, ServedFrom from, double seconds) override;
  void job_output(const plan::Job& job, std::string_view text) override;
  void job_finished(const plan::Job& job, double seconds) override;
  void job_found_current(const plan::Job& job) override;
  void job_cpu(const plan::Job& job, double cpu_seconds) override;
  void job_failed(const plan::Job& job, int exit_code, double seconds, const std::string& error) override;
  void build_finished(BuildResult result) override;

 private:
  std::vector<Progress*> sinks_;
};


enum class ProgressMode {
  Status,  // a terminal: one status line, rewritten in place ("\r" + clear to end of line)
  Plain,   // "[3/7] device sm_90 src/k.c" lines (a pipe, a file, CI)
  Quiet,   // nothing
};

// Status when `fd` is a terminal, $CI is unset or empty and $TERM is not
// "dumb"; Plain otherwise; Quiet when asked.
ProgressMode choose_progress_mode(bool quiet, int fd = 2);

// The terminal's width in columns: TIOCGWINSZ on `fd`, else $COLUMNS, else 80.
int terminal_width(int fd = 2);

// `text` cut in the middle with "..." to at most `width` characters (UTF-8 aware).
std::string elide_middle(std::string_view text, size_t width);

struct ConsoleOptions {
  ProgressMode mode = ProgressMode::Plain;
  int width = 0;  // Status mode: columns; 0 asks the terminal (terminal_width)
};

// Prints the progress of a build to `out` (normally std::cerr).
//
// In Status mode the status line has no newline, so anything else written to
// the same terminal would land in the middle of it. Two things prevent that:
// - `guard` (normally &std::cerr) is rerouted while this object lives: the
//   first write to it erases the status line (explain lines, -v echoes,
//   warnings and errors print whole), and the line is redrawn with the next
//   event;
// - the commands must not write to the terminal themselves: the caller runs
//   them with their output buffered (captures_output()), and the executor
//   hands the output to job_output, which prints it whole between status lines.
class ConsoleProgress final : public Progress {
 public:
  ConsoleProgress(std::ostream& out, ConsoleOptions options, std::ostream* guard = nullptr);
  ~ConsoleProgress() override;
  ConsoleProgress(const ConsoleProgress&) = delete;
  ConsoleProgress& operator=(const ConsoleProgress&) = delete;

  ProgressMode mode() const { return options_.mode; }
  // Whether commands must run with their output buffered (Status mode).
  bool captures_output() const { return options_.mode == ProgressMode::Status; }

  void build_started(const plan::Plan& plan) override;
  void job_started(const plan::Job& job) override;
  void job_served(const plan::Job& job, ServedFrom from, double seconds) override;
  void job_output(const plan::Job& job, std::string_view text) override;
  void job_failed(const plan::Job& job, int exit_code, double seconds, const std::string& error) override;
  void build_finished(BuildResult result) override;

  // The same lines without a plan (a build its no-op record shows up to date,
  // cache/noop_record.hpp): begin(jobs), then served(Job::describe, from) per
  // job, then build_finished. build_started and job_served call these.
  void begin(size_t total);
  void served(std::string_view description, ServedFrom from);

  // Erase the status line now, if one is shown (the guard does this itself).
  void erase_status();

 private:
  class GuardBuf;
  void announce(std::string_view description, std::string_view note);
  void draw(const std::string& line);
  void write(std::string_view text);

  ConsoleOptions options_;
  std::streambuf* sink_;  // where our own text goes (the unguarded buffer)
  std::ostream* guard_ = nullptr;
  std::unique_ptr<GuardBuf> guard_buf_;
  fs::path cwd_;
  size_t total_ = 0;
  size_t counted_ = 0;       // jobs started or served
  std::string last_status_;  // Status mode: the line to redraw
  bool status_shown_ = false;
  bool others_mid_line_ = false;  // someone wrote to the guard without ending the line
};

}  // namespace ob::report
