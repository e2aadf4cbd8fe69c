// A launcher compile's whole entry (ccache's unit of caching): the caller's
// object, its depfile and what the split printed, under a key of the
// caller's command line and source (plan::make_whole_compile_plan) and every
// file the split's jobs read and every tool they ran (JobCache::reads()). A
// hit writes those and runs nothing: no toolchain search, no driver listing,
// no stable-names probe, no intermediate file. Stored after a split compile
// whose every job was served or stored; the split's own entries stay.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/storage/remote/layered.hpp"

namespace ob::cache {

// What shapes a launcher compile's split besides its command line, source
// and the files it reads (the whole entry's Job::key_facts): the settings
// that choose its jobs and their kernel names, and PATH (which finds ptxas
// and offload-arch).
std::vector<std::string> split_facts(const config::Config& config);

class WholeCompile {
 public:
  // `system_dirs`: JobCacheOptions::system_dirs (the split's, or the reads
  // recorded by stamp would not match).
  WholeCompile(storage::LayeredStorage& storage, plan::Plan plan, std::vector<fs::path> system_dirs);
  WholeCompile(const WholeCompile&) = delete;
  WholeCompile& operator=(const WholeCompile&) = delete;

  // On a hit: the outputs are in place (each through a temporary and a
  // rename), the hits counted (one per job of the split), and what the
  // split printed when it ran is returned. nullopt: a miss, nothing written.
  std::optional<std::string> serve();
  // After the split compile succeeded: store the entry. `reads`: the
  // split's JobCache::reads(); `jobs`: how many jobs the split had.
  void store(std::vector<Dep> reads, std::string_view diagnostics, size_t jobs);

 private:
  plan::Plan plan_;  // before cache_, which keeps a reference to it
  JobCache cache_;
  std::string said_;
};

}  // namespace ob::cache
