// Launcher mode: saying that a compile ran unchanged. Each one is counted by
// its kind in the cache's counters (`cache stats`), and -v names the reason
// once per build and kind: a CMake build of 300 plain compiles says "not an
// offload compile" once, not 300 times.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <sstream>

#include <fcntl.h>
#include <fmt/core.h>

#include "offload_build/storage/storage.hpp"
#include "offload_build/cli/cache_command.hpp"
#include "offload_build/cli/build_context.hpp"
#include "offload_build/report/build_report.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"
#include "launcher_unchanged.hpp"
#include "options.hpp"

namespace ob::cli {

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

void note_unchanged(const Unchanged& why, const Request& o) {
  bool say = o.config.flag("verbose");
  std::string most;  // the unsupported options counted most, by name
  if (!o.config.flag("no_cache")) {
    storage::Storage storage = local_cache(o.config);
    storage::Counters delta;
    delta.unchanged_by_reason[why.code] = 1;
    if (!why.option.empty()) delta.unsupported_options[why.option] = 1;
    storage.record(delta);
    // Each unsupported option is named once per build.
    if (say) say = first_in_build(storage.dir(), why.code + why.option);
    if (say && !why.option.empty()) {
      std::vector<std::string> named;
      for (const auto& [option, n] : most_frequent(storage.counters().unsupported_options, 3))
        named.push_back(fmt::format("{} {}", option, n));
      if (!named.empty()) most = "; counted most: " + util::join(named, ", ");
    }
  }
  if (say)
    std::cerr << fmt::format(
        "offload-build: running the compiler unchanged: {} (\"{}\" in `offload-build cache stats`{}; "
        "said once per build{})\n",
        why.reason, why.code, most, why.option.empty() ? "" : " and option");
}

void write_launcher_report(const Request& o, const std::vector<std::string>& command,
                           nlohmann::json r, const Unchanged* why, int exit_code) {
  if (!o.report) return;
  std::error_code ec;
  if (r.is_null()) {  // nothing planned: the report of a build without jobs
    report::ReportData d;
    d.started = std::chrono::system_clock::now();
    d.result = exit_code == 0 ? report::BuildResult::Ok : report::BuildResult::Failed;
    d.cache_enabled = !o.config.flag("no_cache");
    if (!o.config.flag("no_cache")) d.cache_dir = cache_dir_for(o.config, std::nullopt);
    r = report::make_report(d);
    r["cwd"] = fs::current_path(ec).string();
  }
  r["manifest"] = "";
  r["launcher"] = {{"command", command},
                   {"split", why == nullptr},
                   {"reason", why ? nlohmann::json(why->reason) : nlohmann::json(nullptr)},
                   {"reason_code", why ? nlohmann::json(why->code) : nlohmann::json(nullptr)},
                   {"exit_code", exit_code}};
  if (why) r["summary"]["unchanged_by_reason"] = {{why->code, 1}};
  if (auto written = report::write_report(fs::absolute(*o.report), r); !written)
    std::cerr << "offload-build: warning: " << written.error().message << '\n';
}

}  // namespace ob::cli
