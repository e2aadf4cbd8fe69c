// Private to src/cli: the summary line every build ends with (manifest and cargo flows).
#pragma once

#include "offload_build/exec/executor.hpp"

namespace ob::cli {

// "offload-build: 13 jobs: 10 from cache, 3 run in 1.42 s" (the prefix colored
// on a terminal, ", N up to date" when some were); nothing under --quiet.
void print_summary(const ExecSummary& s, double seconds, bool quiet);

}  // namespace ob::cli
