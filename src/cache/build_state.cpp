#include "offload_build/cache/build_state.hpp"

#include "offload_build/util/json_text.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <unordered_map>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/cache/lookups.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cache {

namespace {

// Version 2: files are stored once in a table and jobs refer to them by index,
// so the state of a 50-TU build (each compile reads dozens of headers) stays small.
// Version 3: with the lookups that found nothing (lookups.hpp); a record
// without them could call a job current after a header appeared.
// Version 4: stamps with the ctime (an edit whose mtime was put back).
constexpr int kStateVersion = 4;

nlohmann::json stamp_json(const Stamp& s) {
  return {s.exists, s.size, s.mtime_ns, s.device, s.inode, s.ctime_ns};
}

Stamp stamp_from(const nlohmann::json& j) {
  return Stamp{j.at(0).get<bool>(), j.at(1).get<uint64_t>(), j.at(2).get<int64_t>(),
               j.at(3).get<uint64_t>(), j.at(4).get<uint64_t>(), j.at(5).get<int64_t>()};
}

// Elements of `a` not in `b`, counting repeats.
std::vector<std::string> minus(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

class FileTable {
 public:
  size_t index(const Dep& d, const Stamp& s) {
    nlohmann::json row = {d.path, d.sha256, d.device, d.inode, stamp_json(s)};
    auto key = util::dump_lossless(row);
    auto [it, inserted] = ids_.try_emplace(key, rows_.size());
    if (inserted) rows_.push_back(std::move(row));
    return it->second;
  }
  nlohmann::json rows() const { return rows_; }

 private:
  std::map<std::string, size_t> ids_;
  nlohmann::json rows_ = nlohmann::json::array();
};

nlohmann::json to_json(const JobRecord& r, FileTable& files) {
  auto deps = nlohmann::json::array();
  for (size_t i = 0; i < r.deps.size(); ++i)
    deps.push_back(files.index(r.deps[i], i < r.dep_stamps.size() ? r.dep_stamps[i] : Stamp{}));
  auto outputs = nlohmann::json::array();
  for (const auto& [path, stamp] : r.outputs) outputs.push_back({path, stamp_json(stamp)});
  return {{"tools", r.tools}, {"argv", r.argv}, {"env", r.env}, {"deps", deps},
          {"outputs", outputs}};
}

JobRecord from_json(const nlohmann::json& j, const nlohmann::json& files) {
  JobRecord r;
  r.tools = j.at("tools").get<std::vector<std::string>>();
  r.argv = j.at("argv").get<std::vector<std::string>>();
  r.env = j.at("env").get<std::vector<std::string>>();
  for (const auto& index : j.at("deps")) {
    const auto& f = files.at(index.get<size_t>());
    r.deps.push_back({f.at(0).get<std::string>(), f.at(1).get<std::string>(),
                      f.at(2).get<uint64_t>(), f.at(3).get<uint64_t>(), {}});
    r.dep_stamps.push_back(stamp_from(f.at(4)));
  }
  for (const auto& o : j.at("outputs"))
    r.outputs.emplace_back(o.at(0).get<std::string>(), stamp_from(o.at(1)));
  return r;
}

}  // namespace

std::string job_id(const plan::Job& job, const fs::path& cwd) { return job.describe(cwd); }

BuildState::BuildState(fs::path file) : file_(std::move(file)) {
  if (file_.empty()) return;  // no state kept (launcher mode)
  // Regular and at most 1 GiB, or no state: it only costs explanations and a rehash.
  const auto read = util::read_file(file_, uint64_t{1} << 30);
  if (!read) return;
  const std::string& text = *read;
  auto doc = util::parse_lossless(text);
  if (doc.is_discarded() || !doc.is_object() || doc.value("version", 0) != kStateVersion) return;
  try {
    const auto& files = doc.at("files");
    for (const auto& [id, rec] : doc.at("jobs").items()) previous_[id] = from_json(rec, files);
  } catch (const nlohmann::json::exception&) {
    previous_.clear();  // an unreadable state only costs explanations and a rehash
  }
}

void BuildState::record(const std::string& id, JobRecord record) {
  current_[id] = std::move(record);
  dirty_ = true;
}

bool BuildState::up_to_date(const std::string& id, const JobKey& described,
                            FileFactsCache& files, const fs::path& cwd) {
  auto it = previous_.find(id);
  if (it == previous_.end()) return false;
  const JobRecord& prev = it->second;
  // No deps: a job that reads no file (the Rust host flavour's empty offload
  // stub), current while its command and tools are.
  if (prev.outputs.empty() || prev.dep_stamps.size() != prev.deps.size()) return false;
  if (prev.tools != described.tools || prev.argv != described.argv || prev.env != described.env)
    return false;
  for (size_t i = 0; i < prev.deps.size(); ++i) {
    const Dep& d = prev.deps[i];
    const Stamp& was = prev.dep_stamps[i];
    if (is_absence(d) || is_directory_stamp(d)) {
      if (files.any(d.path, cwd) != was) return false;  // an absent path: still none
    } else if (!was.exists || files.stamp(d.path, cwd) != was) {
      return false;
    }
  }
  for (const auto& [path, stamp] : prev.outputs)
    if (!stamp.exists || stat_stamp(path) != stamp) return false;
  current_[id] = prev;
  return true;
}

void BuildState::settle_outputs() {
  for (auto& [id, record] : current_)
    for (auto& [path, stamp] : record.outputs) {
      Stamp now = stat_stamp(path);
      const int64_t ctime = now.ctime_ns;
      now.ctime_ns = stamp.ctime_ns;
      if (now == stamp && ctime != stamp.ctime_ns) {
        stamp.ctime_ns = ctime;
        dirty_ = true;
      }
    }
}

bool BuildState::current_stamps(const plan::Plan& plan, std::map<std::string, Stamp>& files) const {
  // Jobs share most of what they read (headers): each path as recorded is
  // made absolute once.
  std::unordered_map<std::string, Stamp> seen;
  auto add = [&](const std::string& path, const Stamp& stamp, bool absolute, bool absent = false) {
    if (stamp.exists == absent) return false;
    auto [it, inserted] = seen.try_emplace(path, stamp);
    if (!inserted) return it->second == stamp;  // two records disagreeing: one is stale
    auto [at, added] =
        files.try_emplace(absolute ? path : full_path(path, plan.cwd).string(), stamp);
    return added || at->second == stamp;
  };
  for (const auto& job : plan.jobs) {
    auto it = current_.find(job_id(job, plan.cwd));
    if (it == current_.end()) return false;  // not recorded: it would run again
    const JobRecord& r = it->second;
    // What up_to_date() refuses.
    if (r.outputs.empty() || r.dep_stamps.size() != r.deps.size()) return false;
    for (size_t i = 0; i < r.deps.size(); ++i)
      if (!add(r.deps[i].path, r.dep_stamps[i], false, is_absence(r.deps[i]))) return false;
    for (const auto& [path, stamp] : r.outputs)
      if (!add(path, stamp, true)) return false;
  }
  return true;
}

void BuildState::save() const {
  if (!dirty_ || file_.empty()) return;  // empty: no state kept (launcher mode)
  FileTable files;
  nlohmann::json jobs = nlohmann::json::object();
  for (const auto& [id, rec] : previous_)
    if (!current_.count(id)) jobs[id] = to_json(rec, files);  // jobs not in this build
  for (const auto& [id, rec] : current_) jobs[id] = to_json(rec, files);
  std::error_code ec;
  fs::create_directories(file_.parent_path(), ec);
  const fs::path tmp = file_.string() + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << util::dump_lossless(
        nlohmann::json{{"version", kStateVersion}, {"files", files.rows()}, {"jobs", jobs}});
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, file_, ec);
  if (ec) fs::remove(tmp, ec);
}

std::string BuildState::explain_miss(const std::string& id, const plan::Job& job, const JobKey& key,
                                     FileFactsCache& files, const fs::path& cwd) const {
  auto it = previous_.find(id);
  if (it == previous_.end()) {
    if (job.target) {
      for (const auto& [other, rec] : previous_) {
        // Same kind and source, another target: the target is new.
        std::string prefix = std::string(plan::job_kind_name(job.kind)) + " ";
        std::string source = plan::arg_path(job.source, cwd).string();
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
    if (std::string change = dep_change(d, files, cwd); !change.empty()) why.push_back(std::move(change));
  }
  if (why.empty()) {
    for (const auto& d : prev.deps)
      if (is_lookups_unknown(d))
        return "not stored when it last ran: the lookups that found nothing were not recorded";
    return "not in the cache (evicted, cleared, or another cache directory)";
  }
  return util::join(why, "; ");
}

}  // namespace ob::cache
