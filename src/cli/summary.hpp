// Private to src/cli: the summary line every build ends with (manifest and cargo flows).
#pragma once

#include <functional>
#include <map>
#include <optional>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/report/build_report.hpp"

namespace ob::cli {

// "offload-build: 13 jobs: 10 from cache, 3 run in 1.42 s" (the prefix colored
// on a terminal, ", N up to date" when some were); nothing under --quiet.
void print_summary(const exec::ExecSummary& s, double seconds, bool quiet);

// --report's view of the cache's misses (BuildContext::Ran::misses), which it must outlive.
std::function<std::optional<report::MissReason>(const plan::Job&)> miss_reasons(
    const std::map<plan::JobId, cache::JobCache::MissNote>& misses);

}  // namespace ob::cli
