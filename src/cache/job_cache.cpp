#include "offload_build/cache/job_cache.hpp"

#include <fstream>
#include <iterator>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/cache/depfile.hpp"

namespace ob::cache {

namespace {

constexpr size_t kMaxCandidates = 8;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

nlohmann::json deps_to_json(const std::vector<Dep>& deps) {
  auto arr = nlohmann::json::array();
  for (const auto& d : deps) arr.push_back({d.path, d.sha256, d.device, d.inode});
  return arr;
}

std::vector<Dep> deps_from_json(const nlohmann::json& arr) {
  std::vector<Dep> deps;
  for (const auto& d : arr)
    deps.push_back({d.at(0).get<std::string>(), d.at(1).get<std::string>(),
                    d.at(2).get<uint64_t>(), d.at(3).get<uint64_t>()});
  return deps;
}

// The manifest entry's candidates, newest first; empty when absent or unreadable.
nlohmann::json candidates_of(const Lookup& lookup) {
  if (lookup.status != LookupStatus::Hit) return nlohmann::json::array();
  auto doc = nlohmann::json::parse(lookup.entry.metadata, nullptr, false);
  if (doc.is_discarded() || !doc.contains("candidates") || !doc["candidates"].is_array())
    return nlohmann::json::array();
  return doc["candidates"];
}

}  // namespace

JobCache::JobCache(Storage& storage, const Plan& plan, JobCacheOptions options)
    : storage_(storage), plan_(plan), options_(options),
      state_(plan.program.parent_path() / ".offload-build" / "state.json") {}

void JobCache::miss(const Job& job, const std::string& reason, const std::string& detail) {
  ++counters_.misses;
  ++counters_.misses_by_reason[reason];
  if (options_.explain)
    *options_.explain << "offload-build: explain: " << job_id(job, plan_.cwd) << ": miss: "
                      << detail << '\n';
}

std::optional<std::string> JobCache::find_result_key(const Job& job, const JobKey& key,
                                                     std::string& reason) {
  if (!job.depfile) return result_key(key, {}, job.inode_sensitive);
  Lookup manifest = storage_.get("manifest", key.direct);
  if (manifest.status == LookupStatus::Corrupt) {
    ++counters_.corrupt;
    reason = "corrupt";
    return std::nullopt;
  }
  for (const auto& cand : candidates_of(manifest)) {
    try {
      auto deps = deps_from_json(cand.at("deps"));
      bool all = true;
      for (const auto& d : deps)
        if (!dep_matches(d, files_.get(d.path, plan_.cwd), job.inode_sensitive)) { all = false; break; }
      if (all) return cand.at("result").get<std::string>();
    } catch (const nlohmann::json::exception&) {
      // A candidate we cannot read is simply not a match.
    }
  }
  reason = manifest.status == LookupStatus::Hit ? "inputs changed" : "no entry";
  return std::nullopt;
}

bool JobCache::serve(const Job& job, const std::vector<fs::path>& temps) {
  for (const auto& out : job.outputs) files_.forget(out);  // rewritten by this job either way
  if (!job.cacheable) return false;
  Pending pending{compute_job_key(plan_, job, files_)};
  const std::string id = job_id(job, plan_.cwd);
  if (pending.key.inputs_missing) {
    pending.storable = false;
    pending_[job.id] = std::move(pending);
    return false;
  }
  for (const auto& in : job.inputs) {
    if (files_.get(in, plan_.cwd).time_macros && !options_.allow_time_macros) {
      pending.storable = false;
      miss(job, "time macros", "source uses __DATE__/__TIME__/__TIMESTAMP__; not cached "
                               "(set \"cache_time_macros\": true to allow)");
      pending_[job.id] = std::move(pending);
      return false;
    }
  }

  std::string reason;
  auto rkey = find_result_key(job, pending.key, reason);
  if (rkey) {
    Lookup result = storage_.get("result", *rkey);
    if (result.status == LookupStatus::Hit && result.entry.files.size() == job.outputs.size()) {
      bool written = true;
      for (size_t i = 0; i < job.outputs.size() && written; ++i) {
        std::ofstream out(temps[i], std::ios::binary | std::ios::trunc);
        out.write(result.entry.files[i].data.data(),
                  static_cast<std::streamsize>(result.entry.files[i].data.size()));
        written = static_cast<bool>(out);
      }
      auto meta = nlohmann::json::parse(result.entry.metadata, nullptr, false);
      for (size_t i = 0; i < job.outputs.size() && written && !meta.is_discarded(); ++i) {
        if (!meta.contains("modes") || i >= meta["modes"].size()) break;
        std::error_code ec;
        fs::permissions(temps[i], static_cast<fs::perms>(meta["modes"][i].get<unsigned>()), ec);
      }
      if (written) {
        ++counters_.hits;
        if (options_.explain) *options_.explain << "offload-build: explain: " << id << ": hit\n";
        state_.record(id, {pending.key.tools, pending.key.argv, pending.key.env, pending.key.inputs});
        return true;
      }
      reason = "unwritable output";
    } else if (result.status == LookupStatus::Corrupt) {
      ++counters_.corrupt;
      reason = "corrupt";
    } else {
      reason = "no entry";
    }
  }
  std::string detail = reason == "corrupt"
                           ? "the cache entry was corrupt (removed; rebuilding)"
                           : state_.explain_miss(id, job, pending.key, files_, plan_.cwd);
  miss(job, reason, detail);
  pending_[job.id] = std::move(pending);
  return false;
}

std::vector<Dep> JobCache::deps_from_depfile(const Job& job, const fs::path& depfile,
                                             bool& time_macros) {
  std::vector<Dep> deps;
  for (const auto& path : parse_depfile(read_all(depfile))) {
    const FileFacts& f = files_.get(path, plan_.cwd);
    if (!f.exists) continue;  // temporaries of the tool itself
    bool is_output = false;
    for (const auto& out : job.outputs)
      is_output |= (plan_.cwd / path).lexically_normal() == out;
    if (is_output) continue;
    time_macros |= f.time_macros;
    fs::path p(path);
    deps.push_back(make_dep(plan_, p.is_absolute() ? arg_path(p, plan_.cwd).string() : path, f));
  }
  return deps;
}

void JobCache::update_manifest(const JobKey& key, const std::vector<Dep>& deps,
                               const std::string& result) {
  auto candidates = candidates_of(storage_.get("manifest", key.direct));
  auto updated = nlohmann::json::array();
  updated.push_back({{"deps", deps_to_json(deps)}, {"result", result}});
  for (const auto& c : candidates) {
    if (updated.size() >= kMaxCandidates) break;
    if (c.value("result", "") != result) updated.push_back(c);
  }
  nlohmann::json doc{{"candidates", updated}};
  storage_.put("manifest", key.direct, Entry{doc.dump(), {}});
}

void JobCache::store(const Job& job, const std::vector<fs::path>& temps,
                     const std::optional<fs::path>& depfile) {
  auto it = pending_.find(job.id);
  if (it == pending_.end()) return;
  Pending pending = std::move(it->second);
  pending_.erase(it);
  const std::string id = job_id(job, plan_.cwd);

  bool time_macros = false;
  std::vector<Dep> deps = pending.key.inputs;
  if (job.depfile) {
    if (!depfile) return;  // the tool wrote no depfile: we cannot know what it read
    deps = deps_from_depfile(job, *depfile, time_macros);
  }
  JobRecord record{pending.key.tools, pending.key.argv, pending.key.env, deps};
  record.deps.insert(record.deps.end(), pending.key.inputs.begin(), pending.key.inputs.end());
  state_.record(id, std::move(record));
  if (!pending.storable || !storage_.writable()) return;
  if (time_macros && !options_.allow_time_macros) {
    ++counters_.misses_by_reason["time macros (in a header)"];
    return;
  }

  Entry entry;
  auto modes = nlohmann::json::array();
  for (size_t i = 0; i < job.outputs.size(); ++i) {
    entry.files.push_back({job.outputs[i].filename().string(), read_all(temps[i])});
    std::error_code ec;
    auto perms = fs::status(temps[i], ec).permissions();
    modes.push_back(static_cast<unsigned>(perms & fs::perms::mask));
  }
  entry.metadata = nlohmann::json{{"job", id}, {"modes", modes}}.dump();
  const std::string rkey = result_key(pending.key, job.depfile ? deps : std::vector<Dep>{},
                                      job.inode_sensitive);
  if (!storage_.put("result", rkey, entry)) {
    ++counters_.store_failures;
    return;
  }
  ++counters_.stores;
  for (const auto& f : entry.files) counters_.bytes_stored += f.data.size();
  if (job.depfile) update_manifest(pending.key, deps, rkey);
}

void JobCache::finish() {
  storage_.record(counters_);
  state_.save();
}

}  // namespace ob::cache
