#include "offload_build/exec/cargo_run.hpp"
#include "offload_build/config/config.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <mutex>

#include <fmt/core.h>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::exec::cargo_run {

Result<pid_t> Children::spawn(const process::Command& cmd, const process::Stdio& stdio) {
  std::lock_guard lock(mu_);
  if (stopping_) return Error{"interrupted", exit_code::interrupted};
  auto pid = process::spawn(cmd, stdio);
  if (pid) running_.insert(*pid);
  return pid;
}

Children::Exit Children::wait(pid_t pid) {
  // Known until it has ended, reaped only then: stop_all never signals a
  // process id that was given to another process.
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  {
    std::lock_guard lock(mu_);
    running_.erase(pid);
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0)
    if (errno != EINTR) return {1, 0};
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return {process::status_to_exit_code(status), seconds(usage.ru_utime) + seconds(usage.ru_stime)};
}

void Children::stop_all() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  for (pid_t pid : running_) kill(pid, SIGTERM);
}

Result<CargoOutput> run_cargo(const toolchain::cargo::Invocation& inv, const fs::path& cwd, Children& children) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Error::failure("cannot create a pipe for cargo's output");
  process::Command cmd{inv.argv, cwd, inv.env};
  auto pid = children.spawn(cmd, process::Stdio{-1, fds[1], -1});
  close(fds[1]);
  if (!pid) {
    close(fds[0]);
    return pid.error();
  }
  CargoOutput result;
  std::string pending;
  char buf[8192];
  // Several cargos may run at once: each line of theirs goes out whole.
  static std::mutex stdout_mu;
  auto line_done = [&](std::string line) {
    const bool json = !line.empty() && line.front() == '{';
    if (json && !inv.echo_json) {
      result.messages.push_back(std::move(line));
      return;
    }
    std::lock_guard lock(stdout_mu);
    if (json) result.messages.push_back(line);
    std::cout << line << '\n' << std::flush;
  };
  while (true) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    for (size_t pos; (pos = pending.find('\n')) != std::string::npos; pending.erase(0, pos + 1))
      line_done(pending.substr(0, pos));
  }
  if (!pending.empty()) line_done(pending);
  close(fds[0]);
  const auto exit = children.wait(*pid);
  result.exit_code = exit.code;
  result.cpu_s = exit.cpu_s;
  return result;
}

Result<double> run_tool(const std::vector<std::string>& argv, const fs::path& cwd, const std::string& what,
                        Children& children) {
  auto pid = children.spawn(process::Command{argv, cwd, {}});
  if (!pid) return pid.error();
  const auto exit = children.wait(*pid);
  if (exit.code == 0) return exit.cpu_s;
  return Error::failure(fmt::format("{} failed with exit code {}\n  command: {}", what, exit.code,
                                    util::shell_join(argv)));
}

}  // namespace ob::exec::cargo_run
