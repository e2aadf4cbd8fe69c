#include "offload_build/process/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>

#include <fmt/core.h>

#include "offload_build/process/interrupt.hpp"
#include "offload_build/util/secrets.hpp"

extern char** environ;

namespace ob::process {

namespace {

EchoPolicy g_policy;
std::mutex g_echo_mutex;

// Build the child's environment: ours without the secrets
// (util::hidden_from_children), with the command's changes applied.
std::vector<std::string> child_environment(const Command& cmd) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos || util::hidden_from_children(kv.substr(0, eq))) continue;
    vars[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  for (const auto& [name, value] : cmd.env) {
    if (value) vars[name] = *value;
    else vars.erase(name);
  }
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

}  // namespace

void set_echo_policy(const EchoPolicy& policy) { g_policy = policy; }

void echo_command(const Command& cmd) {
  if (!g_policy.verbose) return;
  std::lock_guard lock(g_echo_mutex);
  std::ostream& os = g_policy.stream ? *g_policy.stream : std::cerr;
  os << cmd.display() << '\n' << std::flush;
}

Result<pid_t> spawn(const Command& cmd, const Stdio& stdio) {
  if (cmd.argv.empty()) return Error::failure("internal error: empty command");
  echo_command(cmd);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdio.in >= 0) posix_spawn_file_actions_adddup2(&actions, stdio.in, 0);
  if (stdio.out >= 0) posix_spawn_file_actions_adddup2(&actions, stdio.out, 1);
  if (stdio.err >= 0) posix_spawn_file_actions_adddup2(&actions, stdio.err, 2);
  if (!cmd.cwd.empty()) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
    posix_spawn_file_actions_addchdir_np(&actions, cmd.cwd.c_str());
#else
#error "posix_spawn_file_actions_addchdir_np is required"
#endif
  }

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Children start with default signal handling and an empty mask.
  sigset_t def, empty;
  sigemptyset(&empty);
  sigemptyset(&def);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGTERM);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> argv;
  for (const auto& a : cmd.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  auto env_strings = child_environment(cmd);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    if (!cmd.cwd.empty() && !std::filesystem::is_directory(cmd.cwd)) {
      return Error::failure(fmt::format("cannot run {}: working directory {} does not exist",
                                        cmd.argv[0], cmd.cwd.string()));
    }
    return Error::failure(fmt::format(
        "cannot run {}: {}; check that it is installed (offload-build doctor lists the tools)",
        cmd.argv[0], std::strerror(rc)));
  }
  return pid;
}

int status_to_exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

int wait_exit_code(pid_t pid, bool interruptible) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 1;
    if (interruptible) return -2;
  }
  return status_to_exit_code(status);
}

int wait_in_place(pid_t pid) {
  int status = 0;
  bool forwarded = false;
  for (;;) {
    // A SIGINT or SIGTERM sent to this process alone (not its group, as
    // Ctrl-C is) reaches the child too, as ccache forwards it.
    if (const int sig = interrupt_signal(); sig && !forwarded) {
      kill(pid, sig);
      forwarded = true;
    }
    if (waitpid(pid, &status, 0) >= 0) break;
    if (errno != EINTR) return 1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (!WIFSIGNALED(status)) return 1;
  const int sig = WTERMSIG(status);
  if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGPIPE) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
  return 128 + sig;
}

Result<Captured> capture(const Command& cmd, int timeout_ms) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Error::failure("cannot create a pipe");
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Error::failure("cannot create a pipe");
  }
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  auto pid = spawn(cmd, Stdio{devnull, out_pipe[1], err_pipe[1]});
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (devnull >= 0) close(devnull);
  if (!pid) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return pid.error();
  }
  Captured result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[65536];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto stop = [&](std::string why, int code) -> Result<Captured> {
    kill(*pid, SIGKILL);
    wait_exit_code(*pid);
    for (auto& fd : fds)
      if (fd.fd >= 0) close(fd.fd);
    return Error{fmt::format("{}: {}", cmd.argv.front(), why), code};
  };
  while (open_fds > 0) {
    if (interrupted()) return stop("interrupted", exit_code::interrupted);
    if (timeout_ms >= 0 && std::chrono::steady_clock::now() > deadline)
      return stop(fmt::format("still running after {} s: stopped", timeout_ms / 1000),
                  exit_code::failure);
    if (poll(fds, 2, 100) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  result.exit_code = wait_exit_code(*pid);
  return result;
}

}  // namespace ob::process
