// Where each job of a build ran under remote execution, as --explain, --report,
// the trace and the timings page say it (the remote runner, exec/remote/runner.hpp,
// takes the notes; this is their wording).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "offload_build/plan/plan.hpp"
#include "offload_build/report/timeline.hpp"

namespace ob::report {

// Where a job ran (--explain, --report, cache stats).
enum class RanWhere { Local, Remote, EngineCache, Fallback };
std::string_view ran_where_name(RanWhere where);  // "local", "remote", "engine-cache", "local-fallback"

struct RemoteJobNote {
  RanWhere where = RanWhere::Local;
  double queued_s = 0;    // the engine's queue
  double executed_s = 0;  // the command on the worker
  std::string why;        // why it ran locally (a fallback's reason)
  // Its inputs from its dependency manifest in the engine: no scan here.
  bool no_scan = false;
};

// Where each of the plan's jobs ran, as the runner noted it (manifest builds
// and launcher compiles alike).
using RemoteNotes = std::map<plan::JobId, RemoteJobNote>;

// --explain: one line per noted job ("offload-build: explain: device sm_90
// src/k.c: executed remotely (queued 0.01 s, ran 0.52 s)").
void explain_remote(const plan::Plan& plan, const RemoteNotes& notes, std::ostream& out);
// --report and the trace: a job's note as {"where", "queued_s", "executed_s",
// "why"}; the function for ReportData::execution (empty without notes).
nlohmann::json remote_note_json(const RemoteJobNote& note);
std::function<std::optional<nlohmann::json>(const plan::Job&)> remote_execution_of(const RemoteNotes& notes);
// --timings (the trace and the HTML page): each noted job's TimelineJob::where.
void mark_remote(Timeline& timeline, const RemoteNotes& notes);

}  // namespace ob::report
