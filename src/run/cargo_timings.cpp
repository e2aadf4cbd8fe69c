// The cargo flow's host pass on the timings page (see cargo_timings.hpp).
#include "cargo_timings.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "offload_build/util/strings.hpp"

namespace ob::run::cargo_timings {

namespace {

// cargo's target text, ` app "bin"` or `` (a library) or ` build-script-build`, as "bin app", "lib", ...
std::string target_words(std::string text) {
  text = util::trim(text);
  if (text.empty()) return "lib";
  std::string out;
  for (const auto& word : util::split(text, ' ')) {
    std::string w = word;
    w.erase(std::remove(w.begin(), w.end(), '"'), w.end());
    if (w.empty()) continue;
    out = out.empty() ? w : w + " " + out;  // `app "bin"`: the kind first
  }
  return out;
}

}  // namespace

std::optional<std::vector<Unit>> parse_page(const std::string& html) {
  const std::string tag = "const UNIT_DATA = ";
  const size_t at = html.find(tag);
  if (at == std::string::npos) return std::nullopt;
  const size_t end = html.find("\n];", at);
  if (end == std::string::npos) return std::nullopt;
  const auto data = nlohmann::json::parse(html.substr(at + tag.size(), end + 2 - at - tag.size()), nullptr, false);
  if (!data.is_array()) return std::nullopt;
  std::vector<Unit> units;
  for (const auto& u : data) {
    if (!u.is_object() || !u.contains("name") || !u["name"].is_string() || !u.contains("start") ||
        !u["start"].is_number() || !u.contains("duration") || !u["duration"].is_number())
      return std::nullopt;
    Unit unit;
    unit.name = u["name"].get<std::string>();
    unit.target = target_words(u.value("target", ""));
    unit.start_s = std::max(0.0, u["start"].get<double>());
    unit.duration_s = std::max(0.0, u["duration"].get<double>());
    units.push_back(std::move(unit));
  }
  return units;
}

fs::path page_path(const fs::path& target_dir) { return target_dir / "cargo-timings" / "cargo-timing.html"; }

void show_host_pass(report::Timeline& t, size_t host, const std::string& name, const std::vector<Unit>& units) {
  if (host >= t.jobs.size()) return;
  t.jobs[host].name = name;
  t.jobs[host].kind = "cargo";
  if (!t.jobs[host].reached) return;
  const double start = t.jobs[host].start_s, end = start + t.jobs[host].duration_s;
  for (const auto& u : units) {
    report::TimelineJob j;
    j.name = "rustc " + u.name + " " + u.target;
    j.kind = "crate";
    j.status = t.jobs[host].status == "failed" ? "ran" : t.jobs[host].status;
    j.reached = true;
    j.start_s = std::min(start + u.start_s, end);
    j.duration_s = std::max(0.0, std::min(u.duration_s, end - j.start_s));
    t.jobs.push_back(std::move(j));
  }
}

}  // namespace ob::run::cargo_timings
