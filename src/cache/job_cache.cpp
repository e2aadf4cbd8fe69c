#include "offload_build/cache/job_cache.hpp"

#include <cctype>
#include <fstream>
#include <set>
#include <tuple>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/cache/depfile.hpp"
#include "offload_build/cache/entry_metadata.hpp"
#include "offload_build/cache/lookups.hpp"
#include "offload_build/cache/place.hpp"
#include "offload_build/toolchain/program_identity.hpp"
#include "offload_build/util/strings.hpp"
#include "offload_build/toolchain/stable_names.h"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/paths.hpp"

namespace ob::cache {

namespace {

constexpr size_t kMaxCandidates = 8;

// A depfile lists every file a compile read: thousands of lines at most.
constexpr uint64_t kMaxDepfile = uint64_t{64} << 20;

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

// The manifest entry's candidates, newest first; empty when absent. A
// manifest entry that does not validate is corrupt: removed, and `corrupt` set.
std::vector<Candidate> candidates_of(storage::LayeredStorage& storage, const std::string& key, storage::Lookup& lookup,
                                     bool& corrupt) {
  corrupt = lookup.status == storage::LookupStatus::Corrupt;
  if (lookup.status != storage::LookupStatus::Hit) return {};
  auto candidates = decode_manifest_meta(lookup.entry);
  if (candidates) return std::move(*candidates);
  storage.discard(kManifestEntryKind, key);
  corrupt = true;
  return {};
}

// The first of the job's unordered reads (plan::Job::unordered_reads) that is
// no longer as its key holds after the run, stat'ed again: another job wrote
// it meanwhile, and this one may have read either.
std::optional<std::string> unordered_change(const plan::Job& job, const JobKey& key, FileFactsCache& files,
                                            const fs::path& cwd) {
  const size_t first = key.inputs.size() - job.unordered_reads.size();
  for (size_t i = 0; i < job.unordered_reads.size(); ++i) {
    files.forget(job.unordered_reads[i]);
    const Dep& keyed = key.inputs[first + i];
    const FileFacts& now = files.get(job.unordered_reads[i], cwd);
    if (is_absence(keyed) ? now.exists : (!now.exists || now.sha256 != keyed.sha256))
      return fmt::format("{} {} while it ran", keyed.path, is_absence(keyed) ? "appeared" : "changed");
  }
  return std::nullopt;
}

}  // namespace

JobCache::JobCache(storage::LayeredStorage& storage, const plan::Plan& plan, JobCacheOptions options)
    : PlanKeys(plan, options.system_dirs, options.allow_time_macros), storage_(storage), options_(options),
      state_(!options.keep_build_state  ? fs::path()
             : !plan.state_file.empty() ? plan.state_file
             : plan.program.empty()     ? fs::path()  // no place for one
                                        : plan.program.parent_path() / ".offload-build" / "state.json") {}

void JobCache::miss(const plan::Job& job, const std::string& reason, std::string detail) {
  if (job.inode_sensitive && !job.stable_names && !plan_.kernel_names_fallback.empty())
    detail += " [" + plan_.kernel_names_fallback + "]";
  ++counters_.misses;
  ++counters_.misses_by_reason[reason];
  misses_[job.id] = {reason, detail};
  explain(job, "miss: " + detail);
}

void JobCache::explain(const plan::Job& job, const std::string& line) {
  if (options_.explain)
    said_[job.id].explain += "offload-build: explain: " + job_id(job, plan_.cwd) + ": " + line + "\n";
}

void JobCache::attach(exec::ExecOptions& options) {
  options.keys = this;
  options.serve = [this](const plan::Job& job, const std::vector<fs::path>& temps) { return serve(job, temps); };
  options.after_serve = [this](const plan::Job& job, exec::Served) { after_serve(job); };
  options.after_run = [this](const plan::Job& job, const std::vector<fs::path>& temps,
                             const std::optional<fs::path>& depfile, std::string_view output) {
    store(job, temps, depfile, output);
  };
}

const JobKey& JobCache::key_of(const plan::Job& job) {
  if (auto it = pending_.find(job.id); it != pending_.end()) return it->second.key;
  // Not looked up (never cached, or asked after it was stored): computed once here.
  auto it = unlooked_.find(job.id);
  if (it == unlooked_.end()) it = unlooked_.emplace(job.id, compute_job_key(plan_, job, files_)).first;
  return it->second;
}

void JobCache::after_serve(const plan::Job& job) {
  Said said;
  {
    std::lock_guard lock(mu_);
    auto it = said_.find(job.id);
    if (it == said_.end()) return;
    said = std::move(it->second);
    said_.erase(it);
  }
  if (options_.explain && !said.explain.empty()) *options_.explain << said.explain << std::flush;
  if (!said.diagnostics.empty() && options_.replay) options_.replay(job, said.diagnostics);
}

std::optional<std::string> JobCache::find_result_key(const plan::Job& job, const JobKey& key,
                                                     std::string& reason, std::string& changed,
                                                     std::vector<Dep>& matched, Lock& lock, bool& confined) {
  if (!job.depfile) return result_key(key, {});
  lock.unlock();
  storage::Lookup manifest = storage_.get(kManifestEntryKind, key.direct);
  confined = manifest.confined;
  bool corrupt = false;
  auto candidates = candidates_of(storage_, key.direct, manifest, corrupt);
  lock.lock();
  if (corrupt) {
    ++counters_.corrupt;
    reason = "corrupt";
    return std::nullopt;
  }
  for (auto& cand : candidates) {
    const Dep* failed = nullptr;
    for (const auto& d : cand.deps)
      if (!dep_holds(d, files_, plan_.cwd)) { failed = &d; break; }
    if (!failed) {
      matched = std::move(cand.deps);
      return cand.result;
    }
    // The newest entry's first difference, for --explain without a build state.
    if (changed.empty()) changed = dep_change(*failed, files_, plan_.cwd);
  }
  reason = manifest.status == storage::LookupStatus::Hit ? "inputs changed" : "no entry";
  return std::nullopt;
}

JobCache::Restored JobCache::restore(const plan::Job& job, const storage::Entry& entry,
                                     const std::vector<fs::path>& temps, std::string& diagnostics,
                                     size_t& jobs) {
  // After the outputs: a kept depfile (Job::keep_depfile; its temporary comes
  // last), then what the command printed when the metadata says so. Anything
  // else than what store() writes is a corrupt entry.
  auto meta = decode_result_meta(entry);
  const bool kept_depfile = job.keep_depfile && job.depfile;
  if (!meta || meta->modes.size() != job.outputs.size() || meta->kept_depfile != kept_depfile)
    return Restored::Corrupt;
  auto write = [](const fs::path& path, const std::string& data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    return static_cast<bool>(out);
  };
  if (kept_depfile && !write(temps.back(), entry.files[job.outputs.size()].data))
    return Restored::Unwritable;
  if (meta->diagnostics) diagnostics = entry.files.back().data;
  jobs = meta->jobs;
  for (size_t i = 0; i < job.outputs.size(); ++i) {
    if (!write(temps[i], entry.files[i].data)) return Restored::Unwritable;
    // Only the executable bit comes from the entry (never setuid, setgid,
    // sticky, or write permission the umask would not give).
    std::error_code ec;
    fs::permissions(temps[i], static_cast<fs::perms>(restored_mode(meta->modes[i], process_umask())),
                    ec);
  }
  return Restored::Ok;
}

// Record what the job read and wrote, for --explain and the next up-to-date check.
// `temps` are the outputs before their rename, which keeps inode and mtime.
void JobCache::remember(const std::string& id, const JobKey& key, const std::vector<Dep>& deps,
                        const std::vector<fs::path>& temps, const plan::Job& job) {
  // No build state kept (a launcher compile, cargo) and no reads asked for: nothing to record.
  if (!options_.keep_build_state && !options_.collect_reads) return;
  JobRecord record{key.tools, key.argv, key.env, deps, {}, {}};
  record.deps.insert(record.deps.end(), key.inputs.begin(), key.inputs.end());
  for (const auto& d : record.deps) record.dep_stamps.push_back(dep_stamp(d, files_, plan_.cwd));
  for (size_t i = 0; i < job.outputs.size(); ++i)
    record.outputs.emplace_back(job.outputs[i].string(), stat_stamp(temps[i]));
  if (options_.collect_reads) {
    std::vector<Dep>& reads = reads_[job.id];
    reads = record.deps;
    std::vector<std::string> tools{
        toolchain::program_path(job.argv.front()).string()};  // a bare name: where PATH finds it
    for (const auto& t : job.tools) tools.push_back(t.string());
    for (const auto& [name, value] : job.env)
      if (name == "LD_PRELOAD" && value)  // the stable-names library (and the user's, after a ':' or ' ')
        for (const auto& part : util::split(*value, ':'))
          for (const auto& library : util::split(part, ' '))
            if (!library.empty()) tools.push_back(library);
    for (const auto& t : tools) {
      const std::string program = std::string(kProgramDepPrefix) + t;
      reads.push_back(Dep{program, files_.get(program, plan_.cwd).sha256, 0, 0, {}});
    }
  }
  state_.record(id, std::move(record));
}

std::optional<std::vector<Dep>> JobCache::reads() const {
  std::vector<Dep> all;
  std::set<std::tuple<std::string, std::string, uint64_t, uint64_t, std::string>> seen;
  for (const auto& job : plan_.jobs) {
    auto it = reads_.find(job.id);
    if (it == reads_.end()) return std::nullopt;
    for (const auto& d : it->second) {
      if (is_lookups_unknown(d)) return std::nullopt;
      if (util::is_under((plan_.cwd / d.path).lexically_normal(), plan_.build_dir)) continue;
      if (seen.emplace(d.path, d.sha256, d.device, d.inode, d.name).second) all.push_back(d);
    }
  }
  return all;
}

exec::Served JobCache::serve(const plan::Job& job, const std::vector<fs::path>& temps) {
  Lock lock(mu_);
  for (const auto& out : job.outputs) files_.forget(out);  // rewritten by this job either way
  const std::string id = job_id(job, plan_.cwd);
  // A job with no entry runs unless the build state keeps it (Job::up_to_date_check).
  auto not_cached = [&] {
    // One the planner says cannot be keyed is a miss `cache stats` counts, by that reason.
    if (!job.uncacheable_reason.empty()) miss(job, "uncacheable", "not cached: " + job.uncacheable_reason);
    else if (options_.explain && options_.planner_explain && !state_.knows(id))
      if (auto said = options_.planner_explain(job)) explain(job, "not cached, runs: " + *said);
    return exec::Served::No;
  };
  if (!job.cacheable && !(job.up_to_date_check && options_.keep_build_state)) return not_cached();
  Pending pending{describe_job(plan_, job)};
  if (state_.up_to_date(id, pending.key, files_, plan_.cwd)) {
    explain(job, "up to date");
    return exec::Served::UpToDate;
  }
  hash_inputs(pending.key, plan_, job, files_);
  if (!job.cacheable) {  // remembered when it ran, never stored
    pending.storable = !pending.key.inputs_missing;
    pending_[job.id] = std::move(pending);
    return not_cached();
  }
  if (pending.key.inputs_missing) {
    pending.storable = false;
    pending_[job.id] = std::move(pending);
    return exec::Served::No;
  }
  for (const auto& in : job.inputs) {
    if (files_.get(in, plan_.cwd).time_macros && !options_.allow_time_macros) {
      pending.storable = false;
      miss(job, "time macros", "source uses __DATE__/__TIME__/__TIMESTAMP__; not cached "
                               "(set \"cache_time_macros\": true to allow)");
      pending_[job.id] = std::move(pending);
      return exec::Served::No;
    }
  }

  std::string reason, changed;
  std::vector<Dep> deps;
  bool confined = false;
  auto rkey = find_result_key(job, pending.key, reason, changed, deps, lock, confined);
  if (rkey) {
    // The job's own temporaries and the storage: nothing of ours, unlocked.
    lock.unlock();
    storage::Lookup result = storage_.get(kResultEntryKind, *rkey);
    std::string diagnostics;
    size_t jobs = 1;
    Restored restored = result.status == storage::LookupStatus::Hit
                            ? restore(job, result.entry, temps, diagnostics, jobs)
                            : Restored::Unwritable;
    if (restored == Restored::Corrupt) {
      storage_.discard(kResultEntryKind, *rkey);
      result.status = storage::LookupStatus::Corrupt;
    }
    // What an entry the engine's layer served prints (any client of the
    // engine may have planted it) is cleaned as the engine's own output is,
    // on every later local hit too.
    if (!diagnostics.empty() && !result.confined) result.confined = storage_.marked_confined(kResultEntryKind, *rkey);
    if (!diagnostics.empty() && (confined || result.confined)) diagnostics = util::foreign_text(diagnostics, "engine");
    lock.lock();
    if (result.status == storage::LookupStatus::Hit && restored == Restored::Ok) {
      counters_.hits += jobs;
      if (jobs > 1) ++counters_.whole_compiles;
      if (confined || result.confined) confined_.insert(job.id);
      explain(job, "hit");
      if (!diagnostics.empty()) said_[job.id].diagnostics = std::move(diagnostics);
      remember(id, pending.key, deps, temps, job);
      return exec::Served::FromCache;
    }
    if (result.status == storage::LookupStatus::Corrupt) {
      ++counters_.corrupt;
      reason = "corrupt";
    } else {
      reason = result.status == storage::LookupStatus::Hit ? "unwritable output" : "no entry";
    }
  }
  std::string detail = reason == "corrupt" ? "the cache entry was corrupt (removed; rebuilding)"
                       : !changed.empty() && !state_.knows(id)
                           ? changed
                           : state_.explain_miss(id, job, pending.key, files_, plan_.cwd);
  if (reason == "no entry" && options_.explain)
    if (auto elsewhere = explain_elsewhere(job, pending.key)) detail = *elsewhere;
  // The planner says it where it knows the job better than its command line
  // (a cargo device pass: argv is its key material's hashes), or nothing was recorded.
  if (reason != "corrupt" && options_.explain && options_.planner_explain && (!state_.knows(id) || job.key_material))
    if (auto said = options_.planner_explain(job)) detail = *said;
  miss(job, reason, detail);
  pending_[job.id] = std::move(pending);
  return exec::Served::No;
}

std::vector<Dep> JobCache::deps_from_depfile(const plan::Job& job, std::string_view depfile,
                                             bool& time_macros) {
  std::vector<Dep> deps;
  for (const auto& path : parse_depfile(depfile)) {
    const FileFacts& f = files_.get(path, plan_.cwd);
    if (!f.exists) continue;  // temporaries of the tool itself
    bool is_output = false;
    for (const auto& out : job.outputs)
      is_output |= (plan_.cwd / path).lexically_normal() == out;
    if (is_output) continue;
    time_macros |= f.time_macros;
    fs::path p(path);
    deps.push_back(make_dep(plan_, job, p.is_absolute() ? plan::arg_path(p, plan_.cwd).string() : path, f));
  }
  if (job.env_deps)
    for (const auto& name : parse_env_deps(depfile)) {
      const std::string path = std::string(kEnvDepPrefix) + name;
      deps.push_back(Dep{path, files_.get(path, plan_.cwd).sha256, 0, 0, {}});
    }
  return deps;
}

void JobCache::update_manifest(const JobKey& key, const std::vector<Dep>& deps,
                               const std::string& result, bool local) {
  storage::Lookup lookup = local ? storage_.get_local(kManifestEntryKind, key.direct) : storage_.get(kManifestEntryKind, key.direct);
  bool corrupt = false;
  auto candidates = candidates_of(storage_, key.direct, lookup, corrupt);
  if (lookup.confined && !local) candidates.clear();  // a confined remote's candidates go no further
  std::vector<Candidate> updated{{deps, result}};
  for (auto& c : candidates) {
    if (updated.size() >= kMaxCandidates) break;
    if (c.result != result) updated.push_back(std::move(c));
  }
  const storage::Entry entry{encode_manifest_meta(updated), {}};
  if (local) storage_.put_confined(kManifestEntryKind, key.direct, entry);
  else storage_.put(kManifestEntryKind, key.direct, entry);
}

void JobCache::store(const plan::Job& job, const std::vector<fs::path>& temps,
                     const std::optional<fs::path>& depfile, std::string_view diagnostics) {
  std::lock_guard lock(mu_);
  (void)stays_local(job);  // what reads a confined job's outputs is confined, stored or not
  auto it = pending_.find(job.id);
  if (it == pending_.end()) return;
  Pending pending = std::move(it->second);
  pending_.erase(it);
  const std::string id = job_id(job, plan_.cwd);

  // The lookups the preload library recorded beside the depfile: read once, never left behind.
  std::optional<std::vector<std::string>> lookups;
  std::string unrecorded;
  if (job.records_lookups) {
    const fs::path record = toolchain::lookups_record(exec::temporary_path(*job.depfile, job.id));
    lookups = toolchain::read_lookups_record(record, unrecorded);
    std::error_code ec;
    fs::remove(record, ec);
  }

  bool time_macros = false;
  std::vector<Dep> deps = pending.key.inputs;
  std::optional<std::string> depfile_text;
  if (job.depfile) {
    if (!depfile) return;  // the tool wrote no depfile: we cannot know what it read
    // Not a regular file, or absurdly large: what it read is unknown, so nothing is stored.
    depfile_text = util::read_file(*depfile, kMaxDepfile);
    if (!depfile_text) {
      ++counters_.misses_by_reason["depfile unreadable"];
      return;
    }
    deps = deps_from_depfile(job, *depfile_text, time_macros);
  }
  // Time-dependent outputs are neither stored nor remembered: they rebuild every time.
  if (time_macros && !options_.allow_time_macros) {
    ++counters_.misses_by_reason["time macros (in a header)"];
    return;
  }
  if (!pending.storable) return;
  // A module file nothing orders that changed while it ran: what it read is unknown.
  bool unknown = false;
  if (auto changed = unordered_change(job, pending.key, files_, plan_.cwd)) {
    unknown = true;
    if (!job.depfile) deps.clear();  // the record holds the key's inputs and this: never up to date
    deps.push_back(lookups_unknown());
    ++counters_.misses_by_reason["module file changed while it ran"];
    if (options_.explain) *options_.explain << "offload-build: explain: " << id << ": not stored: " << *changed << "\n";
  }
  // What it looked for and did not find. Unknown: nothing is stored, and the
  // record never calls it up to date (a file created there later would go unseen).
  if (job.records_lookups && !unknown) {
    std::optional<std::vector<Dep>> missing;
    if (lookups) missing = lookup_deps(plan_, job, options_.system_dirs, *lookups, unrecorded);
    if (missing) {
      deps.insert(deps.end(), missing->begin(), missing->end());
    } else {
      unknown = true;
      deps.push_back(lookups_unknown());
      ++counters_.misses_by_reason["lookups unknown"];
      if (options_.explain)
        *options_.explain << "offload-build: explain: " << id << ": not stored: " << unrecorded << "\n";
    }
  }
  remember(id, pending.key, unknown || job.depfile ? deps : std::vector<Dep>{}, temps, job);
  if (unknown || !job.cacheable || !storage_.writable()) return;
  std::optional<std::string> kept;
  if (job.keep_depfile) kept = std::move(depfile_text);
  put_result(job, pending, temps, deps, std::move(kept), diagnostics, 1);
  // For a later --explain in a checkout elsewhere (local only: a hint, not a result).
  storage_.put_local("place", place_free_key(plan_, job, pending.key),
                     storage::Entry{encode_place_meta(place_record(plan_, pending.key)), {}});
}

void JobCache::store_whole(const plan::Job& job, const std::vector<fs::path>& outputs, std::vector<Dep> deps,
                           std::optional<std::string> kept_depfile, std::string_view diagnostics,
                           size_t jobs) {
  std::lock_guard lock(mu_);
  auto it = pending_.find(job.id);
  if (it == pending_.end()) return;
  Pending pending = std::move(it->second);
  pending_.erase(it);
  if (!pending.storable || !storage_.writable()) return;
  put_result(job, pending, outputs, deps, std::move(kept_depfile), diagnostics, jobs);
}

// The result entry (outputs still at `temps`) and the manifest entry naming it.
void JobCache::put_result(const plan::Job& job, const Pending& pending, const std::vector<fs::path>& temps,
                          const std::vector<Dep>& deps, std::optional<std::string> kept_depfile,
                          std::string_view diagnostics, size_t jobs) {
  storage::Entry entry;
  ResultMeta meta{job_id(job, plan_.cwd), {}, !diagnostics.empty()};
  meta.jobs = jobs;
  for (size_t i = 0; i < job.outputs.size(); ++i) {
    auto data = util::read_file(temps[i], storage::kMaxPayloadSize);
    if (!data) return;  // not a regular file, or too big to cache: the build is fine
    entry.files.push_back({job.outputs[i].filename().string(), std::move(*data)});
    // Keyed without inodes, so it must not hold inode names (docs/CACHE.md).
    if (job.stable_names && names_kernels_by_inode(entry.files.back().data)) {
      ++counters_.misses_by_reason["kernel names from inodes"];
      return;
    }
    std::error_code ec;
    auto perms = fs::status(temps[i], ec).permissions();
    meta.modes.push_back(static_cast<unsigned>(perms & fs::perms::mask) & 0777);
  }
  if (job.keep_depfile && kept_depfile)
    entry.files.push_back({job.depfile->filename().string(), std::move(*kept_depfile)});
  if (meta.diagnostics) entry.files.push_back({"diagnostics", std::string(diagnostics)});
  entry.metadata = encode_result_meta(meta);
  const std::string rkey = result_key(pending.key, job.depfile ? deps : std::vector<Dep>{});
  const bool local = stays_local(job);
  if (!(local ? storage_.put_confined(kResultEntryKind, rkey, entry) : storage_.put(kResultEntryKind, rkey, entry))) {
    ++counters_.store_failures;
    return;
  }
  ++counters_.stores;
  if (job.depfile) update_manifest(pending.key, deps, rkey, local);
}

bool JobCache::stays_local(const plan::Job& job) {
  bool local = options_.local_only && options_.local_only(job);
  for (plan::JobId dep : job.deps) local |= confined_.count(dep) > 0;
  if (local) confined_.insert(job.id);
  return local;
}

std::optional<std::string> JobCache::explain_elsewhere(const plan::Job& job, const JobKey& key) {
  storage::Lookup found = storage_.get_local("place", place_free_key(plan_, job, key));
  std::optional<std::string> said;
  if (found.status == storage::LookupStatus::Hit)
    if (auto earlier = decode_place_meta(found.entry)) said = explain_place(*earlier, place_record(plan_, key));
  const std::string id = job_id(job, plan_.cwd);
  if (said) {
    const bool program = util::starts_with(*said, "only its compiler");
    place_misses_.try_emplace(job.unit, id, program ? "its compiler" : "its paths");
    return said;
  }
  // Its inputs are outputs of a job whose place alone differs (the host IR,
  // a package; for the link, the objects): so do they.
  auto from = place_misses_.find(job.unit);
  if (from == place_misses_.end() && job.kind == plan::JobKind::Link && !place_misses_.empty())
    from = place_misses_.begin();
  if (from == place_misses_.end()) return std::nullopt;
  const auto& [earlier, what] = from->second;
  return fmt::format("only its {} differs: its inputs come from {}, which misses only for {} (above)",
                     what == "its paths" ? "place" : "compiler", earlier, what);
}

void JobCache::finish() {
  std::lock_guard lock(mu_);
  storage_.record(counters_);
  state_.settle_outputs();
  state_.save();
}

}  // namespace ob::cache
