#include "offload_build/report/compiler_output.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "offload_build/util/strings.hpp"

namespace ob::report {

namespace {

// `text` without the lines of clang's driver diagnostics (`clang-22: warning:
// argument unused during compilation: '-L/x'`) already in `said`, which it
// adds its own to. Every driver command of a split compile (host parse, host
// codegen) says them again; the compiler alone says each once.
std::string without_repeated_driver_diagnostics(std::string_view text, const std::string& driver,
                                                std::set<std::string>& said) {
  std::string out;
  const std::string prefix = driver + ": ";
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size() - 1) + 1;
    const std::string line(text.substr(at, end - at));
    at = end;
    const bool diagnostic =
        util::starts_with(line, prefix) &&
        (util::starts_with(line.substr(prefix.size()), "warning: ") ||
         util::starts_with(line.substr(prefix.size()), "error: ") ||
         util::starts_with(line.substr(prefix.size()), "note: "));
    if (!diagnostic || said.insert(line).second) out += line;
  }
  return out;
}

}  // namespace

std::string in_clang_order(const plan::Plan& plan, const std::map<plan::JobId, std::string>& output) {
  std::vector<size_t> units;
  for (const auto& job : plan.jobs)
    if (std::find(units.begin(), units.end(), job.unit) == units.end()) units.push_back(job.unit);
  std::string text;
  std::set<std::string> said;
  auto print = [&](const plan::Job& job) {
    auto it = output.find(job.id);
    if (it != output.end())
      text += without_repeated_driver_diagnostics(it->second, fs::path(job.argv.front()).filename(), said);
  };
  for (size_t unit : units) {
    std::optional<plan::JobId> host;
    for (const auto& job : plan.jobs) {
      if (job.unit != unit) continue;
      if (!host || plan.jobs[*host].kind != plan::JobKind::HostIr) host = job.id;
    }
    print(plan.jobs[*host]);
    for (const auto& job : plan.jobs)
      if (job.unit == unit && job.id != *host) print(job);
  }
  return text;
}

}  // namespace ob::report
