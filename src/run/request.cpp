// The settings every flow resolves the same way, and what a make/ninja run
// says once (launcher mode: many offload-build processes are one build).
#include "offload_build/run/request.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <functional>
#include <sstream>
#include <thread>

#include <fmt/core.h>

#include "offload_build/util/files.hpp"
#include "offload_build/util/size_text.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::run {

Result<void> resolve_settings(Request& o) {
  auto loaded = config::load(std::move(o.config));
  if (!loaded) return loaded.error();
  o.config = std::move(*loaded);
  return {};
}

namespace {

// A path setting in force, with the manifest's value in its place.
std::optional<fs::path> path_setting(const config::Config& c, std::string_view key,
                                     const std::optional<fs::path>& manifest) {
  auto v = c.get(key, manifest ? std::optional(manifest->string()) : std::nullopt, "offload.json");
  if (!v || v->text.empty()) return std::nullopt;
  return fs::absolute(v->text);
}

}  // namespace

// The resolved configuration (config::load) holds a value for cache_dir and
// max_size, their defaults written once (the table's "5G", config.cpp's
// computed cache directory), each value checked when it was read: no
// fallback here. A cache_dir set empty names no directory.
fs::path cache_dir_for(const config::Config& c, const std::optional<fs::path>& manifest_cache_dir) {
  return path_setting(c, "cache_dir", manifest_cache_dir).value_or(fs::path());
}

uint64_t max_size_for(const config::Config& c, const std::optional<uint64_t>& manifest_max_size) {
  auto v = c.get("max_size", manifest_max_size ? std::optional(std::to_string(*manifest_max_size)) : std::nullopt,
                 "offload.json");
  auto bytes = util::parse_size(v ? v->text : std::string());
  return bytes ? *bytes : 0;  // as Config::size for a value never set
}

fs::path base_dir_for(const config::Config& c, const std::optional<fs::path>& manifest_base_dir) {
  std::optional<fs::path> dir = path_setting(c, "base_dir", manifest_base_dir);
  if (!dir) return {};
  std::error_code ec;
  fs::path real = fs::canonical(*dir, ec);
  return ec ? fs::path() : real;
}

size_t effective_jobs(const config::Config& c) {
  if (size_t n = c.count("jobs"); n > 0) return n;
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1;
}

size_t probe_jobs(const config::Config& c, const process::JobserverSetup& jobserver) {
  return jobserver.serial || jobserver.jobserver ? 1 : effective_jobs(c);
}


namespace {

constexpr uint64_t kMaxProcFile = 4 << 20;  // a command line is at most a few MiB

// /proc/PID/stat: (parent pid, start time in clock ticks since boot).
std::optional<std::pair<pid_t, unsigned long long>> proc_stat(pid_t pid) {
  const std::string text = util::read_file("/proc/" + std::to_string(pid) + "/stat", kMaxProcFile).value_or("");
  const auto close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  pid_t ppid = 0;
  unsigned long long start = 0;
  for (int i = 3; i <= 22 && rest >> field; ++i) {  // fields 3 (state) .. 22 (starttime)
    if (i == 4) ppid = static_cast<pid_t>(std::stoll(field));
    if (i == 22) start = std::stoull(field);
  }
  if (start == 0) return std::nullopt;
  return std::pair(ppid, start);
}

// Whether `pid` is a shell running a command string (`sh -c '...'`), as make
// and ninja start their commands.
bool is_command_shell(pid_t pid) {
  const std::string text = util::read_file("/proc/" + std::to_string(pid) + "/cmdline", kMaxProcFile).value_or("");
  std::vector<std::string> args;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\0', at);
    args.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  if (args.size() < 2) return false;
  const std::string name = fs::path(args[0]).filename().string();
  const bool shell = name == "sh" || name == "dash" || name == "bash" || name == "zsh" ||
                     name == "ksh" || name == "busybox";
  return shell && std::find(args.begin() + 1, args.end(), "-c") != args.end();
}

// The build this compile belongs to: the nearest ancestor that is not a
// command shell (make, ninja, a test, an interactive shell), as pid and start
// time so that a reused pid is another build.
std::string build_id() {
  pid_t pid = getppid();
  for (int depth = 0; depth < 8 && pid > 1 && is_command_shell(pid); ++depth) {
    auto st = proc_stat(pid);
    if (!st) break;
    pid = st->first;
  }
  auto st = proc_stat(pid);
  return fmt::format("{}-{}", pid, st ? st->second : 0);
}

}  // namespace

// Whether this build said `code` already; marks it said. Markers live in
// <cache>/launcher-notes/ and are removed after a day.
namespace {

fs::path build_marker(const fs::path& cache, const std::string& code) {
  return cache / "launcher-notes" / fmt::format("{}-{:016x}", build_id(), std::hash<std::string>{}(code));
}

}  // namespace

fs::path build_file(const fs::path& cache, const std::string& code) {
  std::error_code ec;
  fs::create_directories(cache / "launcher-notes", ec);
  return build_marker(cache, code);
}

bool said_in_build(const fs::path& cache, const std::string& code) {
  std::error_code ec;
  return fs::exists(build_marker(cache, code), ec);
}

bool first_in_build(const fs::path& cache, const std::string& code) {
  const fs::path dir = cache / "launcher-notes";
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path marker = build_marker(cache, code);
  const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno != EEXIST;  // no directory to remember in: say it every time
  ::close(fd);
  const auto day_ago = fs::file_time_type::clock::now() - std::chrono::hours(24);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (fs::last_write_time(it->path(), ec2) < day_ago && !ec2) fs::remove(it->path(), ec2);
  }
  return true;
}

bool once_in_build(const fs::path& cache, const std::string& code, const std::function<bool()>& act) {
  std::error_code ec;
  fs::create_directories(cache / "launcher-notes", ec);
  const fs::path lock = build_marker(cache, code).string() + ".lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  // The holder's act has its own deadline; a holder killed releases the lock.
  while (fd >= 0 && ::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  bool ok = said_in_build(cache, code) || act();
  if (ok) (void)first_in_build(cache, code);
  if (fd >= 0) ::close(fd);  // releases the lock
  return ok;
}

}  // namespace ob::run
