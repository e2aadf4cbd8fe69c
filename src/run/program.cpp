// A built program run as `run`, `cargo run` and `verify` run it (program.hpp).
#include "offload_build/run/program.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <iostream>

#include <fmt/core.h>

#include "offload_build/config/config.hpp"
#include "offload_build/report/offload_log.hpp"
#include "offload_build/toolchain/runtime_libs.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::run {

namespace {

// Relay the program's stderr line by line: runtime log lines feed the summary
// (and are shown only if the user asked for them), everything else passes through.
void relay_stderr(int fd, report::OffloadSummary& summary, bool show_runtime_lines) {
  std::string pending;
  char buf[8192];
  auto flush_line = [&](std::string_view line) {
    report::accumulate(summary, line);
    if (show_runtime_lines || !report::is_runtime_info_line(line)) {
      std::cerr << line << '\n';
    }
  };
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t pos;
    while ((pos = pending.find('\n')) != std::string::npos) {
      flush_line(std::string_view(pending).substr(0, pos));
      pending.erase(0, pos + 1);
    }
  }
  if (!pending.empty()) flush_line(pending);
  std::cerr << std::flush;
}

// The program's own exit status is run's; a failure says it was the
// program's, not the build's.
int program_status(int status) {
  if (status == 0) return status;
  // 128+N: killed by signal N, as a shell reports it.
  std::cerr << fmt::format("offload-build: the program exited with status {}; the build succeeded\n", status)
            << std::flush;
  return status;
}

}  // namespace

namespace {

// The offload runtime of the LLVM the program was linked with first on
// LD_LIBRARY_PATH (toolchain/runtime_libs.hpp): the llvm setting's LLVM,
// then every LLVM installed here.
void use_programs_runtime(process::Command& cmd, const Request& o) {
  if (cmd.argv.empty()) return;
  std::vector<fs::path> roots;
  if (auto llvm = o.config.path("llvm")) roots.push_back(*llvm);
  for (auto& root : toolchain::installed_llvms()) roots.push_back(std::move(root));
  fs::path program = cmd.argv.front();
  if (program.is_relative() && !cmd.cwd.empty()) program = cmd.cwd / program;
  const auto dir = toolchain::runtime_library_dir(program, roots);
  if (!dir) return;
  std::string path = dir->string();
  if (const char* given = config::env_or_null("LD_LIBRARY_PATH"); given && *given) path += std::string(":") + given;
  cmd.env.emplace_back("LD_LIBRARY_PATH", std::move(path));
}

// OMP_TARGET_OFFLOAD=DISABLED as libomptarget reads it (any case).
bool disabled(const char* policy) {
  if (!policy) return false;
  std::string p = util::trim(policy);
  for (char& c : p) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return p == "disabled";
}

}  // namespace

Result<int> run_program(process::Command cmd, const Request& o, bool verify, std::string_view no_kernel,
                        bool no_fallback) {
  if (no_fallback && disabled(config::env_or_null("OMP_TARGET_OFFLOAD")))
    return Error::usage(
        "OMP_TARGET_OFFLOAD=DISABLED is set, so the offload runtime would skip every kernel launch, and a Rust "
        "kernel has no host fallback: the program would run on and print its input unchanged. Unset "
        "OMP_TARGET_OFFLOAD (offload-build then sets MANDATORY) or set it to MANDATORY or DEFAULT");
  use_programs_runtime(cmd, o);
  if (!config::env_or_null("OMP_TARGET_OFFLOAD")) cmd.env.emplace_back("OMP_TARGET_OFFLOAD", "MANDATORY");
  const bool user_wants_log = config::env_or_null("LIBOMPTARGET_INFO") != nullptr;
  if (verify && !user_wants_log) cmd.env.emplace_back("LIBOMPTARGET_INFO", "-1");

  if (o.dry_run) {
    std::cout << cmd.display() << '\n' << std::flush;
    return exit_code::ok;
  }
  if (!verify) {
    auto pid = process::spawn(cmd);
    if (!pid) return pid.error();
    return program_status(process::wait_exit_code(*pid));
  }

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Error::failure("cannot create a pipe for --verify");
  auto pid = process::spawn(cmd, process::Stdio{-1, -1, fds[1]});
  close(fds[1]);
  if (!pid) {
    close(fds[0]);
    return pid.error();
  }
  report::OffloadSummary summary;
  relay_stderr(fds[0], summary, user_wants_log);
  close(fds[0]);
  const int status = process::wait_exit_code(*pid);

  std::cerr << "offload-build: verify: " << report::format_summary(summary) << '\n';
  if (status != 0) return program_status(status);
  if (summary.launches.empty()) return Error::failure(std::string(no_kernel));
  return exit_code::ok;
}


}  // namespace ob::run
