#include "offload_build/cache/build_state.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/util/strings.hpp"

namespace ob::cache {

namespace {

constexpr int kStateVersion = 1;

nlohmann::json to_json(const JobRecord& r) {
  auto deps = nlohmann::json::array();
  for (const auto& d : r.deps) deps.push_back({d.path, d.sha256, d.device, d.inode});
  return {{"tools", r.tools}, {"argv", r.argv}, {"env", r.env}, {"deps", deps}};
}

JobRecord from_json(const nlohmann::json& j) {
  JobRecord r;
  r.tools = j.at("tools").get<std::vector<std::string>>();
  r.argv = j.at("argv").get<std::vector<std::string>>();
  r.env = j.at("env").get<std::vector<std::string>>();
  for (const auto& d : j.at("deps"))
    r.deps.push_back({d.at(0).get<std::string>(), d.at(1).get<std::string>(),
                      d.at(2).get<uint64_t>(), d.at(3).get<uint64_t>()});
  return r;
}

// Elements of `a` not in `b`, counting repeats.
std::vector<std::string> minus(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

std::string job_id(const Job& job, const fs::path& cwd) { return job.describe(cwd); }

BuildState::BuildState(fs::path file) : file_(std::move(file)) {
  std::ifstream in(file_);
  if (!in) return;
  auto doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || doc.value("version", 0) != kStateVersion) return;
  try {
    for (const auto& [id, rec] : doc.at("jobs").items()) previous_[id] = from_json(rec);
  } catch (const nlohmann::json::exception&) {
    previous_.clear();  // an unreadable state only costs explanations
  }
}

void BuildState::record(const std::string& id, JobRecord record) {
  current_[id] = std::move(record);
}

void BuildState::save() const {
  nlohmann::json jobs = nlohmann::json::object();
  for (const auto& [id, rec] : previous_) jobs[id] = to_json(rec);  // jobs not in this build
  for (const auto& [id, rec] : current_) jobs[id] = to_json(rec);
  std::error_code ec;
  fs::create_directories(file_.parent_path(), ec);
  const fs::path tmp = file_.string() + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << nlohmann::json{{"version", kStateVersion}, {"jobs", jobs}}.dump();
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, file_, ec);
  if (ec) fs::remove(tmp, ec);
}

std::string BuildState::explain_miss(const std::string& id, const Job& job, const JobKey& key,
                                     FileFactsCache& files, const fs::path& cwd) const {
  auto it = previous_.find(id);
  if (it == previous_.end()) {
    if (job.target) {
      for (const auto& [other, rec] : previous_) {
        // Same kind and source, another target: the target is new.
        std::string prefix = std::string(job_kind_name(job.kind)) + " ";
        std::string source = arg_path(job.source, cwd).string();
        if (util::starts_with(other, prefix) && util::ends_with(other, " " + source))
          return fmt::format("target {} added (no earlier build of this job)",
                             job.target->short_name());
      }
    }
    return "no earlier build of this job recorded";
  }
  const JobRecord& prev = it->second;
  std::vector<std::string> why;
  for (size_t i = 0; i < key.tools.size(); ++i)
    if (i >= prev.tools.size() || prev.tools[i] != key.tools[i])
      why.push_back("tool changed: " + key.tools[i]);
  for (const auto& a : minus(key.argv, prev.argv)) why.push_back("flag added: " + a);
  for (const auto& a : minus(prev.argv, key.argv)) why.push_back("flag removed: " + a);
  if (why.empty() && key.argv != prev.argv) why.push_back("flags reordered");
  for (size_t i = 0; i < key.env.size() && i < prev.env.size(); ++i)
    if (key.env[i] != prev.env[i]) why.push_back("environment changed: " + key.env[i]);
  std::set<std::string> seen;
  for (const auto& d : prev.deps) {
    if (!seen.insert(d.path).second) continue;
    const FileFacts& now = files.get(d.path, cwd);
    if (!now.exists) why.push_back("file removed: " + d.path);
    else if (now.sha256 != d.sha256) why.push_back("file changed: " + d.path);
    else if (job.inode_sensitive && d.inode != 0 &&
             (static_cast<uint64_t>(now.inode) != d.inode ||
                                     static_cast<uint64_t>(now.device) != d.device))
      why.push_back("file replaced by a copy (new inode, so new kernel names): " + d.path);
  }
  if (why.empty()) return "not in the cache (evicted, cleared, or another cache directory)";
  return util::join(why, "; ");
}

}  // namespace ob::cache
