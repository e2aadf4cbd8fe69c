// Run a program and measure it: wall time, and the peak RSS and CPU time of
// it and every descendant it waited for (wait4's rusage), for tests that bound
// what a build costs. stdout and stderr go to files in `dir`, read back.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ob_process.hpp"

extern char** environ;

namespace ob::test {

struct Measured {
  int exit_code = -1;
  std::string out, err;
  double seconds = 0;
  long peak_rss_mb = 0;  // the largest of the process and its waited-for descendants
  double cpu_seconds = 0;
};

// `env`: variables to set (a value) or remove (nullopt), over this process's
// environment, after removing the ones run_tool removes for every test.
inline Measured run_measured(const std::vector<std::string>& argv, const fs::path& dir, Env env = {}) {
  env.insert(env.begin(), {{"LIBOMPTARGET_INFO", std::nullopt},
                           {"OMP_TARGET_OFFLOAD", std::nullopt},
                           {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt},
                           {"OFFLOAD_BUILD_SIGNING_KEY", std::nullopt},
                           {"OFFLOAD_BUILD_SIGNING_KEY_FILE", std::nullopt},
                           {"OFFLOAD_BUILD_CACHE_UMASK", std::nullopt}});
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string v(*e);
    bool replaced = false;
    for (const auto& [name, value] : env) replaced = replaced || v.rfind(name + "=", 0) == 0;
    if (!replaced) vars.push_back(v);
  }
  for (const auto& [name, value] : env)
    if (value) vars.push_back(name + "=" + *value);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  const fs::path out = dir / "measured.out", err = dir / "measured.err";
  int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  Measured m;
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
  int status = 0;
  rusage usage{};
  if (pid > 0 && ::wait4(pid, &status, 0, &usage) == pid) {
    m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    m.peak_rss_mb = usage.ru_maxrss / 1024;
    m.cpu_seconds = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.out = read_file(out);
  m.err = read_file(err);
  return m;
}

}  // namespace ob::test
