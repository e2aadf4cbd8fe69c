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
#include "offload_build/run/launcher.hpp"
#include "offload_build/run/build_context.hpp"
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

}  // namespace ob::run
