#include "cargo_run.hpp"
#include "offload_build/config/config.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>

#include <fmt/core.h>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cli::cargo_run {

Result<CargoOutput> run_cargo(const cargo::Invocation& inv, const fs::path& cwd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Error::failure("cannot create a pipe for cargo's output");
  Command cmd{inv.argv, cwd, inv.env};
  auto pid = exec::spawn(cmd, exec::Stdio{-1, fds[1], -1});
  close(fds[1]);
  if (!pid) {
    close(fds[0]);
    return pid.error();
  }
  CargoOutput result;
  std::string pending;
  char buf[8192];
  auto line_done = [&](std::string line) {
    if (!line.empty() && line.front() == '{') result.messages.push_back(std::move(line));
    else std::cout << line << '\n';
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
  std::cout << std::flush;
  close(fds[0]);
  result.exit_code = exec::wait_exit_code(*pid);
  return result;
}

Result<void> run_tool(const std::vector<std::string>& argv, const fs::path& cwd, const std::string& what) {
  auto pid = exec::spawn(Command{argv, cwd, {}});
  if (!pid) return pid.error();
  const int code = exec::wait_exit_code(*pid);
  if (code == 0) return {};
  return Error::failure(fmt::format("{} failed with exit code {}\n  command: {}", what, code,
                                    util::shell_join(argv)));
}

std::string display(const cargo::Invocation& inv) {
  std::string out;  // env's options (-u NAME) come before its assignments
  for (const auto& [k, v] : inv.env)
    if (!v) out += "-u " + k + " ";
  for (const auto& [k, v] : inv.env)
    if (v) out += k + "=" + util::shell_quote(*v) + " ";
  if (!out.empty()) out = "env " + out;
  return out + util::shell_join(inv.argv);
}

std::vector<std::string> user_rustflags() {
  if (const char* enc = config::env_or_null("CARGO_ENCODED_RUSTFLAGS"); enc && *enc) return util::split(enc, '\x1f');
  std::vector<std::string> flags;
  if (const char* plain = config::env_or_null("RUSTFLAGS"))
    for (auto& f : util::split(plain, ' '))
      if (!f.empty()) flags.push_back(std::move(f));
  return flags;
}

}  // namespace ob::cli::cargo_run
