// Cache keys for jobs (ccache's "direct mode", two levels):
//   direct key  = format version, job kind, tool identities, normalized argv,
//                 compiler-relevant environment, contents of the job's inputs;
//   result key  = direct key + path and content (and, for inode-sensitive
//                 jobs, device and inode) of every file the depfile listed.
// A "manifest" entry stored under the direct key lists the dependency sets
// seen so far and the result key each one gave.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "offload_build/cache/file_facts.hpp"
#include "offload_build/exec/job_keys.hpp"
#include "offload_build/plan/plan.hpp"

namespace ob::cache {

// v4: dependency sets hold the lookups that found nothing (lookups.hpp);
// an entry stored without them is never trusted.
inline constexpr const char* kKeyFormat = "offload-build cache key v4";

// The kinds of the entries stored: under a job's direct key, its dependency
// sets; under its result key (result_key), its outputs.
inline constexpr const char* kManifestEntryKind = "manifest";
inline constexpr const char* kResultEntryKind = "result";

// Environment variables that change what a job of `kind` produces.
const std::vector<std::string>& relevant_environment(plan::JobKind kind);

struct Dep {
  std::string path;  // as the depfile wrote it (relative to the project when inside it)
  std::string sha256;
  uint64_t device = 0;
  uint64_t inode = 0;  // 0: identity not part of the key
  std::string name;    // stable kernel names: FileFacts::name (empty: not part of the key)
};

struct JobKey {
  std::string direct;                 // hex SHA-256
  std::vector<std::string> tools;     // identities, argv[0] first
  std::vector<std::string> argv;      // outputs replaced by placeholders
  std::vector<std::string> env;       // NAME=value or NAME unset
  std::vector<Dep> inputs;            // the job's declared inputs
  bool inputs_missing = false;        // an input does not exist: not cacheable
};

JobKey compute_job_key(const plan::Plan& plan, const plan::Job& job, FileFactsCache& files);
// The same in two steps: what needs no file read (tools, argv, env), then the
// inputs' contents and the direct key.
JobKey describe_job(const plan::Plan& plan, const plan::Job& job);
void hash_inputs(JobKey& key, const plan::Plan& plan, const plan::Job& job, FileFactsCache& files);
// How many times describe_job ran in this process (a test's proof that each
// job's key is computed once per build, local or remote).
size_t describe_job_count();

// Facts of `path`, a file `job` read, as a Dep: its path (an absolute path
// under one of the plan's base directories written relative to the plan's directory,
// so checkouts at other places agree) and content; for inode-sensitive jobs
// also what its kernel names are made of: the stable name (Job::stable_names)
// or the device and inode. Files under the build directory (outputs of other
// jobs, restored from the cache with new inodes) carry neither: only sources
// and headers hold target regions.
Dep make_dep(const plan::Plan& plan, const plan::Job& job, const std::string& path, const FileFacts& facts);

// What `job`'s key (`key`, describe_job's) holds beyond its argv and the
// files it ships, for its remote action (exec::ActionKey): the tools,
// environment and facts, and the identity of every system file in `reads`
// (the files the job reads, absolute; the others travel by digest);
// do_not_cache when one uses a time macro and `allow_time_macros` is false,
// as the local cache would not serve it.
exec::ActionKey action_key(const plan::Plan& plan, const plan::Job& job, const JobKey& key,
                           const std::vector<fs::path>& reads, FileFactsCache& files, bool allow_time_macros);

std::string result_key(const JobKey& key, const std::vector<Dep>& deps);

// The entry the job cache asks for `job` first (exec::JobKeys::first_entry):
// its dependency sets under the direct key, or (no depfile) its result.
std::pair<std::string, std::string> first_entry(const plan::Job& job, const JobKey& key);

// exec::JobKeys over one plan's jobs, from one record of file facts: the
// job cache's (job_cache.hpp), or JobKeyTable's. key_of says where each key
// is kept.
class PlanKeys : public exec::JobKeys {
 public:
  std::optional<std::string> direct(const plan::Job& job) final;
  std::optional<std::pair<std::string, std::string>> first_entry(const plan::Job& job) final;
  exec::ActionKey action_key(const plan::Job& job, const std::vector<fs::path>& reads) final;

 protected:
  PlanKeys(const plan::Plan& plan, std::vector<fs::path> system_dirs, bool allow_time_macros);
  // The job's key, computed at most once (with mu_ held).
  virtual const JobKey& key_of(const plan::Job& job) = 0;

  mutable std::mutex mu_;
  const plan::Plan& plan_;
  FileFactsCache files_;  // (mu_)

 private:
  const bool allow_time_macros_;
};

// The keys of a build without a job cache (--no-cache) whose runner needs
// them (remote execution): each job's computed once, on the first ask.
class JobKeyTable final : public PlanKeys {
 public:
  JobKeyTable(const plan::Plan& plan, std::vector<fs::path> system_dirs, bool allow_time_macros)
      : PlanKeys(plan, std::move(system_dirs), allow_time_macros) {}

 private:
  const JobKey& key_of(const plan::Job& job) override;
  std::map<plan::JobId, JobKey> keys_;
};

// The directories of `plan` whose files are never identified by stat alone
// (FileFactsCache's `project`): its own, its build directory, its base directories.
std::vector<fs::path> project_dirs(const plan::Plan& plan);

// Whether `dep` still describes the file on disk.
bool dep_matches(const Dep& dep, const FileFacts& now);

}  // namespace ob::cache
