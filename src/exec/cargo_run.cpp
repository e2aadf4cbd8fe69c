#include "offload_build/exec/cargo_run.hpp"
#include "offload_build/config/config.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <utility>

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

Diagnostics::Diagnostics() : terminal_(isatty(2) == 1) {}

void Diagnostics::write_line(std::string_view text) {
  // A line cargo left open on a terminal is its progress bar: erased, as
  // cargo does before it prints; it draws the bar again.
  if (terminal_ && line_open_) std::cerr << "\r\x1b[K";
  std::cerr << text << std::flush;
  line_open_ = false;
}

bool Diagnostics::print(const toolchain::cargo::Diagnostic& d, bool colour) {
  std::lock_guard lock(mu_);
  const bool always = util::starts_with(d.level, "error") || d.level == "failure-note";
  if (!always && !printed_.insert(d.key).second) return false;
  write_line(colour ? d.rendered : d.plain);
  return true;
}

void Diagnostics::print_text(const std::string& text) {
  std::lock_guard lock(mu_);
  write_line(text);
}

void Diagnostics::relay(std::string_view bytes) {
  std::lock_guard lock(mu_);
  // A build script's warning this build printed (each pass runs the script)
  // left out: whole lines (Lines::give_raw keeps a warning's together).
  std::string out;
  for (size_t end; (end = bytes.find('\n')) != std::string_view::npos; bytes.remove_prefix(end + 1)) {
    const std::string_view line = bytes.substr(0, end + 1);
    const auto script = toolchain::cargo::script_warning(line);
    if (!script || printed_.insert("script " + *script).second) out += line;
  }
  out += bytes;
  std::cerr << out << std::flush;
  if (!out.empty()) line_open_ = out.back() != '\n';
}

namespace {

// One cargo run's diagnostics (Invocation::render): each through the build's
// Diagnostics, and cargo's summary line when its unit's artifact comes.
class Rendered {
 public:
  Rendered(Diagnostics& diagnostics, const toolchain::cargo::Invocation& inv)
      : diagnostics_(diagnostics), inv_(inv), clippy_(inv.argv.size() > 1 && inv.argv[1] == "clippy") {}
  // Whether `line` was a diagnostic (then taken).
  bool take(const std::string& line) {
    if (auto d = toolchain::cargo::parse_diagnostic(line)) {
      const bool printed = diagnostics_.print(*d, inv_.colour);
      if (d->level == "warning") {
        auto& count = warnings_[d->unit];
        ++count.total;
        count.duplicates += printed ? 0 : 1;
        count.fixable += printed && d->fixable ? 1 : 0;
      }
      return true;
    }
    if (auto a = toolchain::cargo::parse_artifact(line)) {
      auto count = warnings_.find(toolchain::cargo::unit_key(a->package_id, a->target_name, a->kinds));
      if (count != warnings_.end()) {
        if (!inv_.quiet)
          diagnostics_.print_text(toolchain::cargo::warning_line(
              toolchain::cargo::warning_summary(*a, count->second, clippy_), inv_.colour));
        warnings_.erase(count);
      }
    }
    return false;
  }

 private:
  Diagnostics& diagnostics_;
  const toolchain::cargo::Invocation& inv_;
  bool clippy_;  // cargo-clippy clippy: its own `--fix` hint
  std::map<std::string, toolchain::cargo::WarningCount> warnings_;  // per unit, until its artifact
};

// A pipe's (or a pseudo-terminal's) read end, cut into lines for `line`, or
// (`raw`) as it comes but for a line that may be a warning (give_raw).
struct Lines {
  int fd = -1;
  std::string pending;
  std::function<void(std::string)> line;
  bool raw = false;

  // One read; at the end (EOF; EIO: the terminal's other side closed) the
  // last line is given and the fd closed (-1).
  void read_some() {
    char buf[8192];
    ssize_t n;
    do n = read(fd, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
      if (!pending.empty()) line(std::exchange(pending, {}));
      close(fd);
      fd = -1;
      return;
    }
    pending.append(buf, static_cast<size_t>(n));
    if (raw) return give_raw();
    for (size_t pos; (pos = pending.find('\n')) != std::string::npos; pending.erase(0, pos + 1))
      line(pending.substr(0, pos));
  }

  // Whole lines, and the start of one at once (cargo's progress bar) unless it
  // may be a warning: then with its end.
  void give_raw() {
    const size_t end = pending.rfind('\n') + 1;  // 0 without one
    std::string_view start = std::string_view(pending).substr(end);
    while (!start.empty() && (start.front() == '\r' || start.front() == '\x1b')) {
      const size_t sgr = start.front() == '\x1b' ? start.find_first_of("mK") : 0;
      start.remove_prefix(sgr == std::string_view::npos ? start.size() : sgr + 1);
    }
    constexpr std::string_view kWarning = "warning";
    const bool warning =
        !start.empty() && (util::starts_with(start, kWarning) || kWarning.substr(0, start.size()) == start);
    const size_t give = warning ? end : pending.size();
    if (give == 0) return;
    line(pending.substr(0, give));
    pending.erase(0, give);
  }
};

// Where cargo's stderr goes when offload-build prints its diagnostics: read
// here (`read`), so that each diagnostic from cargo's JSON stays before cargo's
// next status line ("Finished"), as cargo orders them. A pseudo-terminal when
// ours is a terminal: cargo sees one (its progress bar, colours, the width
// rustc renders to; bytes unchanged, no \n -> \r\n); else a pipe.
// {-1, -1} (stderr inherited) when neither can be made.
struct StderrRelay {
  int read = -1, write = -1;
};

StderrRelay stderr_relay(bool terminal) {
  StderrRelay r;
  if (!terminal) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) == 0) r = {fds[0], fds[1]};
    return r;
  }
  r.read = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  char name[128];
  if (r.read < 0 || grantpt(r.read) != 0 || unlockpt(r.read) != 0 || ptsname_r(r.read, name, sizeof name) != 0 ||
      (r.write = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
    if (r.read >= 0) close(r.read);
    return {};
  }
  winsize size{};
  if (ioctl(2, TIOCGWINSZ, &size) == 0) ioctl(r.write, TIOCSWINSZ, &size);
  termios mode{};
  if (tcgetattr(r.write, &mode) == 0) {
    mode.c_oflag &= ~static_cast<tcflag_t>(OPOST);
    tcsetattr(r.write, TCSANOW, &mode);
  }
  return r;
}

}  // namespace

Result<CargoOutput> run_cargo(const toolchain::cargo::Invocation& inv, const fs::path& cwd, Children& children,
                              Diagnostics& diagnostics) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Error::failure("cannot create a pipe for cargo's output");
  const StderrRelay err = inv.render ? stderr_relay(diagnostics.terminal()) : StderrRelay{};
  process::Command cmd{inv.argv, cwd, inv.env};
  auto pid = children.spawn(cmd, process::Stdio{-1, out[1], err.write});
  for (int fd : {out[1], err.write})
    if (fd >= 0) close(fd);
  if (!pid) {
    for (int fd : {out[0], err.read})
      if (fd >= 0) close(fd);
    return pid.error();
  }
  CargoOutput result;
  // Several cargos may run at once: each line of theirs goes out whole.
  static std::mutex stdout_mu;
  Rendered rendered(diagnostics, inv);
  Lines stdout_lines{out[0], {}, [&](std::string line) {
                       const bool json = !line.empty() && line.front() == '{';
                       if (json && inv.render && rendered.take(line)) return;
                       if (json && !inv.echo_json) {
                         result.messages.push_back(std::move(line));
                         return;
                       }
                       std::lock_guard lock(stdout_mu);
                       if (json) result.messages.push_back(line);
                       std::cout << line << '\n' << std::flush;
                     }};
  Lines stderr_lines{err.read, {}, [&](std::string bytes) { diagnostics.relay(bytes); }, true};
  // What cargo wrote to stdout first is read first: it wrote its lines in order.
  while (stdout_lines.fd >= 0 || stderr_lines.fd >= 0) {
    pollfd ready[2] = {{stdout_lines.fd, POLLIN, 0}, {stderr_lines.fd, POLLIN, 0}};
    if (poll(ready, 2, -1) < 0) {
      if (errno == EINTR) continue;
      for (Lines* l : {&stdout_lines, &stderr_lines})
        if (l->fd >= 0) close(std::exchange(l->fd, -1));
      break;
    }
    if (ready[0].revents != 0) stdout_lines.read_some();
    else if (ready[1].revents != 0) stderr_lines.read_some();
  }
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
