// --trace FILE: a build in Chrome's Trace Event Format (the JSON object form,
// {"traceEvents": [...]}), which Perfetto (ui.perfetto.dev) and
// chrome://tracing open. Each job that ran or was served is one complete
// event ("ph": "X", ts and dur in microseconds); its process is the
// offload-build process, its thread the lane (slot) it ran in. Timestamps are
// the system's monotonic clock, so the events of several processes (a make or
// ninja run of launcher compiles) line up in one file. docs/TIMINGS.md.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "offload_build/report/timeline.hpp"
#include "offload_build/util/result.hpp"

namespace ob::report {

// The largest trace file append_trace grows: beyond it a process adds nothing
// (and says so), so a trace left set across many builds stays bounded.
inline constexpr uint64_t kMaxTraceFile = uint64_t{64} << 20;  // 64 MiB

// The events of one process `pid`: its name and lanes (metadata, "ph": "M"),
// then one "X" event per job reached, with args status, target, served,
// critical (on the critical path), job (its index) and deps.
nlohmann::json trace_events(const Timeline& timeline, long pid);

// A whole trace file holding `events`, one event per line.
std::string trace_document(const nlohmann::json& events);

// Replace `file` with this build's trace (a temporary, then a rename).
Result<void> write_trace(const std::filesystem::path& file, const Timeline& timeline);

// Add this process's events to `file` (created when missing), for many
// processes writing one trace: under an exclusive lock on FILE.lock, the file
// is read, its events and ours written to a temporary and renamed over it, so
// a reader or a crash never sees half a file. A file that is not a trace
// offload-build wrote is left alone (an error saying so), as is one over
// kMaxTraceFile; a lock not had in 10 s is an error, never a hang.
Result<void> append_trace(const std::filesystem::path& file, const Timeline& timeline);

// A trace file offload-build wrote, as one timeline: every process's jobs on
// one time axis (lanes and the critical path found again over all of them; a
// job's dependencies are those within its process, as make's are unknown).
// `title` names it. An error says what is wrong with the file's content.
Result<Timeline> timeline_from_trace(const nlohmann::json& trace, std::string title);

}  // namespace ob::report
