// Launcher mode: a command run unchanged (through the prefix when it
// compiles no device code), and saying that it did. Each one is counted by
// its kind in the cache's counters (`cache stats`), and -v names the reason
// once per build and kind: a CMake build of 300 plain compiles says "not an
// offload compile" once, not 300 times. An offload compile an option keeps
// whole (miniFE's -v) is said once per build without -v too.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <chrono>
#include <functional>
#include <iostream>
#include <sstream>

#include <fcntl.h>
#include <fmt/core.h>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/report/timeline.hpp"
#include "offload_build/report/trace_json.hpp"
#include "offload_build/run/launcher_prefix.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/run/launcher.hpp"
#include "offload_build/run/session.hpp"
#include "offload_build/report/build_report.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"
#include "launcher_unchanged.hpp"

namespace ob::run {

std::vector<std::pair<std::string, uint64_t>> most_frequent(const std::map<std::string, uint64_t>& counts,
                                                            size_t n) {
  std::vector<std::pair<std::string, uint64_t>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > n) v.resize(n);
  return v;
}

void note_unchanged(const Unchanged& why, const Request& o) {
  // An offload compile an option keeps whole is said without -v too (its
  // device code is neither split nor cached): once per build and option.
  bool say = o.config.flag("verbose") || why.offload;
  std::string most;  // the unsupported options counted most, by name
  if (!o.config.flag("no_cache")) {
    storage::Storage storage = local_cache(o.config);
    storage::Counters delta;
    delta.unchanged_by_reason[why.code] = 1;
    if (!why.option.empty()) delta.unsupported_options[why.option] = 1;
    storage.record(delta);
    // Each unsupported option is named once per build.
    if (say) say = first_in_build(storage.dir(), why.code + why.option + (why.offload ? " offload" : ""));
    if (say && !why.option.empty()) {
      std::vector<std::string> named;
      for (const auto& [option, n] : most_frequent(storage.counters().unsupported_options, 3))
        named.push_back(fmt::format("{} {}", option, n));
      if (!named.empty()) most = "; counted most: " + util::join(named, ", ");
    }
  } else if (!o.config.flag("verbose")) {
    say = false;  // no cache: no record of what this build said
  }
  if (say)
    std::cerr << fmt::format(
        "offload-build: running the compiler unchanged: {} (\"{}\" in `offload-build cache stats`{}; "
        "said once per build{})\n",
        why.reason, why.code, most, why.option.empty() ? "" : " and option");
}

namespace {

// Wait for the pass-through compiler and end the way it ended.
int wait_like(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return exit_code::failure;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (!WIFSIGNALED(status)) return exit_code::failure;
  const int sig = WTERMSIG(status);
  // Die of the same signal where that is harmless (no core dump of our own).
  if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGPIPE) {
    std::signal(sig, SIG_DFL);
    raise(sig);
  }
  return 128 + sig;
}

}  // namespace

int pass_through(const std::vector<std::string>& compile, const Unchanged& why, const Request& o,
                 const Prefix& prefix) {
  auto [command, env, prefixed] = through_prefix(compile, prefix, compile);
  if (o.dry_run) {
    if (o.config.flag("verbose")) std::cerr << "offload-build: running the compiler unchanged: " << why.reason << '\n';
    std::cout << util::shell_join(command) << '\n';
    return exit_code::ok;
  }
  note_unchanged(why, o);
  if (o.config.flag("explain")) {  // what --explain says of every compile: why this one is not cached
    const std::string output = toolchain::frontend::output_arg(compile);
    std::cerr << "offload-build: explain: " << (output.empty() ? compile.front() : output)
              << ": not cached (run unchanged): " << why.reason << " (\"" << why.code << "\")\n";
  }
  // --trace: the compile is one event of the make/ninja run's trace.
  std::optional<report::StepTimeline> timeline;
  std::optional<report::TimedStep> step;
  const auto trace = o.config.path("trace");
  if (trace) {
    const std::string name =
        fs::path(command.front()).filename().string() + " " + toolchain::frontend::output_arg(command);
    timeline.emplace(name, "launcher");
    step.emplace(&*timeline, "unchanged", "", "unchanged (" + why.code + ") " + name);
  }
  // stdin, stdout and stderr are inherited: the output is the compiler's own.
  auto pid = process::spawn(process::Command{command, {}, env});
  if (!pid) {
    std::cerr << "offload-build: error: " << (prefixed ? "prefix_command: " : "") << pid.error().message << '\n';
    return 127;  // as a shell says for a command it cannot run
  }
  const int code = wait_like(*pid);
  if (step) {
    step->done(code == 0 ? "ran" : "failed");
    if (auto added = report::append_trace(*trace, timeline->finish(code == 0 ? report::BuildResult::Ok : report::BuildResult::Failed));
        !added)
      std::cerr << "offload-build: warning: " << added.error().message << '\n';
  }
  write_launcher_report(o, command, why, code);
  return code;
}

void launcher_report_section(nlohmann::json& r, const std::vector<std::string>& command, const Unchanged* why,
                             int exit_code) {
  r["manifest"] = "";
  r["launcher"] = {{"command", command},
                   {"split", why == nullptr},
                   {"reason", why ? nlohmann::json(why->reason) : nlohmann::json(nullptr)},
                   {"reason_code", why ? nlohmann::json(why->code) : nlohmann::json(nullptr)},
                   {"exit_code", exit_code}};
  if (why) r["summary"]["unchanged_by_reason"] = {{why->code, 1}};
}

void write_launcher_report(const Request& o, const std::vector<std::string>& command, const Unchanged& why,
                           int exit_code) {
  if (!o.report) return;
  std::error_code ec;
  report::ReportData d;  // nothing planned: the report of a build without jobs
  d.started = std::chrono::system_clock::now();
  d.result = exit_code == 0 ? report::BuildResult::Ok : report::BuildResult::Failed;
  d.cache_enabled = !o.config.flag("no_cache");
  if (!o.config.flag("no_cache")) d.cache_dir = cache_dir_for(o.config, std::nullopt);
  nlohmann::json r = report::make_report(d);
  r["cwd"] = fs::current_path(ec).string();
  launcher_report_section(r, command, &why, exit_code);
  if (auto written = report::write_report(fs::absolute(*o.report), r); !written)
    std::cerr << "offload-build: warning: " << written.error().message << '\n';
}

}  // namespace ob::run
