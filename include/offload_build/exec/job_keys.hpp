// What decides a job's outputs, as the job cache computed it when it looked
// the job up (cache/job_key.hpp), handed by the executor to the runner with
// the job (JobView::keys): a runner that needs it too (remote execution: the
// action's key, the name of the job's dependency manifest, whether the
// engine's layer found nothing) asks it here, so one job's key is computed
// once per build, from one record of file facts (cache::FileFactsCache).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "offload_build/plan/plan.hpp"

namespace ob::exec {

namespace fs = std::filesystem;

// What a job's local cache key holds that neither a remote action's
// arguments nor its shipped files show (the tools' identities, the driver's
// environment, the key facts, the system files' identities, the time-macro
// rule), derived from the same definition as the local key, so that the
// engine's action cache is never consulted under a weaker key.
struct ActionKey {
  std::string stamp;  // hex digest of it all, sent in the action's environment
  // The driver's environment as the compile sees it here (CPATH,
  // SOURCE_DATE_EPOCH, ...): sent, its paths made relative like the job's own.
  std::vector<std::pair<std::string, std::string>> env;
  bool do_not_cache = false;  // a file read uses __DATE__/__TIME__: never from or into the engine's cache
};

class JobKeys {
 public:
  virtual ~JobKeys() = default;
  // The job's direct key (hex: what decides its outputs before any file it
  // finds is read), nullopt when it has none (an input is missing). Any thread.
  virtual std::optional<std::string> direct(const plan::Job& job) = 0;
  // The entry the job cache asks for the job first (kind, key): its
  // dependency sets, or its result when it has no depfile. Any thread.
  virtual std::optional<std::pair<std::string, std::string>> first_entry(const plan::Job& job) = 0;
  // The job's ActionKey, given every file it reads (absolute). Any thread.
  virtual ActionKey action_key(const plan::Job& job, const std::vector<fs::path>& reads) = 0;
};

}  // namespace ob::exec
