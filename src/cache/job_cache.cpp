#include "offload_build/cache/job_cache.hpp"

#include <cctype>
#include <fstream>
#include <iterator>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/cache/depfile.hpp"
#include "offload_build/toolchain/stable_names.h"

namespace ob::cache {

namespace {

constexpr size_t kMaxCandidates = 8;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

nlohmann::json deps_to_json(const std::vector<Dep>& deps) {
  auto arr = nlohmann::json::array();
  for (const auto& d : deps) arr.push_back({d.path, d.sha256, d.device, d.inode, d.name});
  return arr;
}

std::vector<Dep> deps_from_json(const nlohmann::json& arr) {
  std::vector<Dep> deps;
  for (const auto& d : arr)
    deps.push_back({d.at(0).get<std::string>(), d.at(1).get<std::string>(),
                    d.at(2).get<uint64_t>(), d.at(3).get<uint64_t>(), d.at(4).get<std::string>()});
  return deps;
}

// Whether `data` (an object or bitcode) names an OpenMP kernel after an inode
// (__omp_offloading_<hex dev>_...) instead of a stable name: a file the
// stable-names library could not name (an id collision, an unresolvable path).
bool names_kernels_by_inode(const std::string& data) {
  static const std::string tag = "__omp_offloading_";
  for (size_t pos = data.find(tag); pos != std::string::npos; pos = data.find(tag, pos + 1)) {
    const size_t at = pos + tag.size();
    if (at < data.size() && std::isxdigit(static_cast<unsigned char>(data[at])) &&
        data.compare(at, 3, OB_STABLE_DEV_HEX) != 0)
      return true;
  }
  return false;
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
      files_({plan.cwd, plan.build_dir, plan.base_dir}, system_dirs(), plan.base_dir),
      state_(options.keep_build_state ? plan.program.parent_path() / ".offload-build" / "state.json"
                                      : fs::path()) {}

void JobCache::miss(const Job& job, const std::string& reason, std::string detail) {
  if (job.inode_sensitive && !job.stable_names && !plan_.kernel_names_fallback.empty())
    detail += " [" + plan_.kernel_names_fallback + "]";
  ++counters_.misses;
  ++counters_.misses_by_reason[reason];
  misses_[job.id] = {reason, detail};
  if (options_.explain)
    *options_.explain << "offload-build: explain: " << job_id(job, plan_.cwd) << ": miss: "
                      << detail << '\n';
}

std::optional<std::string> JobCache::find_result_key(const Job& job, const JobKey& key,
                                                     std::string& reason,
                                                     std::vector<Dep>& matched) {
  if (!job.depfile) return result_key(key, {});
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
        if (!dep_matches(d, files_.get(d.path, plan_.cwd))) { all = false; break; }
      if (all) {
        matched = std::move(deps);
        return cand.at("result").get<std::string>();
      }
    } catch (const nlohmann::json::exception&) {
      // A candidate we cannot read is simply not a match.
    }
  }
  reason = manifest.status == LookupStatus::Hit ? "inputs changed" : "no entry";
  return std::nullopt;
}

bool JobCache::restore(const Job& job, const Entry& entry, const std::vector<fs::path>& temps,
                       std::string& diagnostics) {
  // After the outputs: a kept depfile (Job::keep_depfile; its temporary comes
  // last), then what the command printed when the metadata says so.
  auto meta = nlohmann::json::parse(entry.metadata, nullptr, false);
  const bool kept_depfile = job.keep_depfile && job.depfile;
  const bool printed = !meta.is_discarded() && meta.value("diagnostics", false);
  if (entry.files.size() != job.outputs.size() + (kept_depfile ? 1 : 0) + (printed ? 1 : 0))
    return false;
  if (kept_depfile) {
    const auto& dep = entry.files[job.outputs.size()];
    std::ofstream out(temps.back(), std::ios::binary | std::ios::trunc);
    out.write(dep.data.data(), static_cast<std::streamsize>(dep.data.size()));
    if (!out) return false;
  }
  if (printed) diagnostics = entry.files.back().data;
  for (size_t i = 0; i < job.outputs.size(); ++i) {
    {
      std::ofstream out(temps[i], std::ios::binary | std::ios::trunc);
      out.write(entry.files[i].data.data(), static_cast<std::streamsize>(entry.files[i].data.size()));
      if (!out) return false;
    }
    if (!meta.is_discarded() && meta.contains("modes") && i < meta["modes"].size()) {
      std::error_code ec;
      fs::permissions(temps[i], static_cast<fs::perms>(meta["modes"][i].get<unsigned>()), ec);
    }
  }
  return true;
}

// Record what the job read and wrote, for --explain and the next up-to-date check.
// `temps` are the outputs before their rename, which keeps inode and mtime.
void JobCache::remember(const std::string& id, const JobKey& key, const std::vector<Dep>& deps,
                        const std::vector<fs::path>& temps, const Job& job) {
  JobRecord record{key.tools, key.argv, key.env, deps, {}, {}};
  record.deps.insert(record.deps.end(), key.inputs.begin(), key.inputs.end());
  for (const auto& d : record.deps) record.dep_stamps.push_back(files_.get(d.path, plan_.cwd).stamp);
  for (size_t i = 0; i < job.outputs.size(); ++i)
    record.outputs.emplace_back(job.outputs[i].string(), stat_stamp(temps[i]));
  state_.record(id, std::move(record));
}

Served JobCache::serve(const Job& job, const std::vector<fs::path>& temps) {
  for (const auto& out : job.outputs) files_.forget(out);  // rewritten by this job either way
  if (!job.cacheable) return Served::No;
  const std::string id = job_id(job, plan_.cwd);
  Pending pending{describe_job(plan_, job)};
  if (state_.up_to_date(id, pending.key, files_, plan_.cwd)) {
    if (options_.explain) *options_.explain << "offload-build: explain: " << id << ": up to date\n";
    return Served::UpToDate;
  }
  hash_inputs(pending.key, plan_, job, files_);
  if (pending.key.inputs_missing) {
    pending.storable = false;
    pending_[job.id] = std::move(pending);
    return Served::No;
  }
  for (const auto& in : job.inputs) {
    if (files_.get(in, plan_.cwd).time_macros && !options_.allow_time_macros) {
      pending.storable = false;
      miss(job, "time macros", "source uses __DATE__/__TIME__/__TIMESTAMP__; not cached "
                               "(set \"cache_time_macros\": true to allow)");
      pending_[job.id] = std::move(pending);
      return Served::No;
    }
  }

  std::string reason;
  std::vector<Dep> deps;
  auto rkey = find_result_key(job, pending.key, reason, deps);
  if (rkey) {
    Lookup result = storage_.get("result", *rkey);
    std::string diagnostics;
    if (result.status == LookupStatus::Hit && restore(job, result.entry, temps, diagnostics)) {
      ++counters_.hits;
      if (options_.explain) *options_.explain << "offload-build: explain: " << id << ": hit\n";
      if (!diagnostics.empty() && options_.replay) options_.replay(job, diagnostics);
      remember(id, pending.key, deps, temps, job);
      return Served::FromCache;
    }
    if (result.status == LookupStatus::Corrupt) {
      ++counters_.corrupt;
      reason = "corrupt";
    } else {
      reason = result.status == LookupStatus::Hit ? "unwritable output" : "no entry";
    }
  }
  std::string detail = reason == "corrupt"
                           ? "the cache entry was corrupt (removed; rebuilding)"
                           : state_.explain_miss(id, job, pending.key, files_, plan_.cwd);
  miss(job, reason, detail);
  pending_[job.id] = std::move(pending);
  return Served::No;
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
    deps.push_back(make_dep(plan_, job, p.is_absolute() ? arg_path(p, plan_.cwd).string() : path, f));
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
                     const std::optional<fs::path>& depfile, std::string_view diagnostics) {
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
  // Time-dependent outputs are neither stored nor remembered: they rebuild every time.
  if (time_macros && !options_.allow_time_macros) {
    ++counters_.misses_by_reason["time macros (in a header)"];
    return;
  }
  if (!pending.storable) return;
  remember(id, pending.key, job.depfile ? deps : std::vector<Dep>{}, temps, job);
  if (!storage_.writable()) return;

  Entry entry;
  auto modes = nlohmann::json::array();
  for (size_t i = 0; i < job.outputs.size(); ++i) {
    entry.files.push_back({job.outputs[i].filename().string(), read_all(temps[i])});
    // Keyed without inodes, so it must not hold inode names (docs/CACHE.md).
    if (job.stable_names && names_kernels_by_inode(entry.files.back().data)) {
      ++counters_.misses_by_reason["kernel names from inodes"];
      return;
    }
    std::error_code ec;
    auto perms = fs::status(temps[i], ec).permissions();
    modes.push_back(static_cast<unsigned>(perms & fs::perms::mask));
  }
  if (job.keep_depfile && depfile)
    entry.files.push_back({job.depfile->filename().string(), read_all(*depfile)});
  nlohmann::json meta{{"job", id}, {"modes", modes}};
  if (!diagnostics.empty()) {
    meta["diagnostics"] = true;
    entry.files.push_back({"diagnostics", std::string(diagnostics)});
  }
  entry.metadata = meta.dump();
  const std::string rkey = result_key(pending.key, job.depfile ? deps : std::vector<Dep>{});
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
