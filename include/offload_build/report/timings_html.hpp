// --timings[=FILE]: a build as one self-contained HTML page (inline CSS, SVG
// and script; nothing fetched), as `cargo build --timings` gives: a bar per
// job on a time axis, in lanes (one per slot that ran jobs at once), colored
// by kind (device jobs by target), served jobs (cache, up to date) pale and
// dashed, the critical path outlined; tables per target and per kind.
// docs/TIMINGS.md.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "offload_build/report/timeline.hpp"
#include "offload_build/util/result.hpp"

namespace ob::report {

// Where --timings without a file writes: <build dir>/offload-build-timings.html.
inline constexpr const char* kTimingsFileName = "offload-build-timings.html";

// What the page draws: the timeline with each job's lane and critical mark.
nlohmann::json timings_data(const Timeline& timeline);

// The page itself; its script draws `timings_data` when a browser opens it.
std::string timings_html(const Timeline& timeline);

// Write the page to `file` (a temporary, then a rename). Creates the directory.
Result<void> write_timings(const std::filesystem::path& file, const Timeline& timeline);

}  // namespace ob::report
