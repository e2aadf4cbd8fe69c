#include <poll.h>
#include <sys/wait.h>

#include <csignal>
#include <map>

#include "offload_build/exec/command_runner.hpp"
#include "offload_build/exec/interrupt.hpp"
#include "offload_build/exec/subprocess.hpp"

namespace ob {

namespace {

class ProcessRunner final : public CommandRunner {
 public:
  ProcessRunner() { exec::install_signal_handlers(); }
  ~ProcessRunner() override { stop_all(); }

  Result<void> start(JobId job, const Command& cmd) override {
    auto pid = exec::spawn(cmd);
    if (!pid) return pid.error();
    children_[*pid] = job;
    return {};
  }

  std::optional<Completion> wait_any() override {
    while (!children_.empty()) {
      if (auto done = reap(WNOHANG)) return done;
      if (exec::interrupted()) return std::nullopt;
      pollfd pfd{exec::wakeup_fd(), POLLIN, 0};
      // The timeout only guards against a lost wake-up; SIGCHLD normally ends the poll.
      poll(&pfd, 1, 200);
      exec::drain_wakeups();
    }
    return std::nullopt;
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
  }

  size_t running() const override { return children_.size(); }

 private:
  std::optional<Completion> reap(int flags) {
    for (auto it = children_.begin(); it != children_.end(); ++it) {
      int status = 0;
      pid_t pid = waitpid(it->first, &status, flags);
      if (pid == it->first) {
        Completion c{it->second, exec::status_to_exit_code(status)};
        children_.erase(it);
        return c;
      }
    }
    return std::nullopt;
  }

  std::map<pid_t, JobId> children_;
};

}  // namespace

std::unique_ptr<CommandRunner> make_process_runner() { return std::make_unique<ProcessRunner>(); }

}  // namespace ob
