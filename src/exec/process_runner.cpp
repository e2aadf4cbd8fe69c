#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <map>

#include "offload_build/exec/command_runner.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/process/output_capture.hpp"
#include "offload_build/process/subprocess.hpp"

namespace ob::exec {

namespace {

double cpu_seconds(const rusage& u) {
  auto s = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}


class ProcessRunner final : public CommandRunner {
 public:
  explicit ProcessRunner(bool buffer_output)
      : buffer_output_(buffer_output), wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    process::install_signal_handlers();
  }
  ~ProcessRunner() override {
    stop_all();
    if (wake_fd_ >= 0) close(wake_fd_);
  }

  Result<void> start(const JobView& view) override {
    const process::Command& cmd = view.command;
    const plan::JobId job = view.job.id;
    std::optional<process::OutputCapture> out;
    if (buffer_output_) out.emplace();
    auto pid = out && out->fd() >= 0 ? process::spawn(cmd, process::Stdio{-1, out->fd(), out->fd()})
                                     : process::spawn(cmd);
    if (!pid) return pid.error();
    children_[*pid] = job;
    if (out && out->fd() >= 0) outputs_.emplace(*pid, std::move(*out));
    return {};
  }

  std::optional<Completion> wait_any() override {
    while (!children_.empty()) {
      if (auto done = reap(WNOHANG)) return done;
      if (process::interrupted() || take_wake()) return std::nullopt;
      pollfd pfd[2] = {{process::wakeup_fd(), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      // The timeout only guards against a lost wake-up; SIGCHLD normally ends the poll.
      poll(pfd, wake_fd_ >= 0 ? 2 : 1, 200);
      process::drain_wakeups();
    }
    return std::nullopt;
  }

  void wake() override {
    const uint64_t one = 1;
    if (wake_fd_ >= 0) {
      ssize_t ignored = write(wake_fd_, &one, sizeof one);  // only fails when the count is full
      (void)ignored;
    }
  }

  void stop_all() override {
    for (const auto& [pid, job] : children_) kill(pid, SIGTERM);
    while (!children_.empty()) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, 0);
      if (pid > 0) children_.erase(pid);
      else if (errno == ECHILD) break;
    }
    children_.clear();
    outputs_.clear();
  }

  size_t running() const override { return children_.size(); }

 private:
  std::optional<Completion> reap(int flags) {
    for (auto it = children_.begin(); it != children_.end(); ++it) {
      int status = 0;
      rusage usage{};
      pid_t pid = wait4(it->first, &status, flags, &usage);
      if (pid == it->first) {
        Completion c{it->second, process::status_to_exit_code(status), take_output(pid),
                     cpu_seconds(usage)};
        children_.erase(it);
        return c;
      }
    }
    return std::nullopt;
  }

  // Everything the child wrote to its memory file ("" when not buffering).
  std::string take_output(pid_t pid) {
    auto it = outputs_.find(pid);
    if (it == outputs_.end()) return {};
    std::string text = it->second.take();
    outputs_.erase(it);
    return text;
  }

  // Whether wake() was called since the last wait_any (and consume it).
  bool take_wake() {
    uint64_t count = 0;
    return wake_fd_ >= 0 && read(wake_fd_, &count, sizeof count) == sizeof count;
  }

  bool buffer_output_ = false;
  int wake_fd_ = -1;  // eventfd: wake() from another thread ends a wait_any
  std::map<pid_t, plan::JobId> children_;
  std::map<pid_t, process::OutputCapture> outputs_;  // buffered output of each running child
};

}  // namespace

std::unique_ptr<CommandRunner> make_process_runner(bool buffer_output) {
  return std::make_unique<ProcessRunner>(buffer_output);
}

}  // namespace ob::exec
