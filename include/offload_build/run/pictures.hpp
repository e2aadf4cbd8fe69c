// --timings and --trace after a build, from its timeline
// (manifest, launcher and cargo flows; docs/TIMINGS.md).
#pragma once

#include "offload_build/run/request.hpp"
#include "offload_build/report/timeline.hpp"

namespace ob::run {

// Whether the options ask for a picture of the build (and it runs: not --dry-run).
bool wants_pictures(const Request& options);

// Write --timings (to its FILE, or `default_page` when none was given; none
// when that is empty too) and
// --trace (replaced, or with `append` added to: launcher compiles share one
// file). A file not written is a warning, never the build's failure. Unless
// --quiet, says where the page is.
void write_pictures(const Request& options, const report::Timeline& timeline,
                    const fs::path& default_page, bool append);

// `timings TRACE`: draw a trace file (--trace, OFFLOAD_BUILD_TRACE: a whole
// launcher-mode build) as the --timings page, to --timings=FILE or TRACE.html.
Result<int> draw_trace(const Request& options, const fs::path& trace);

}  // namespace ob::run
