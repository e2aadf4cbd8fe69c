// The wording of where each job ran under remote execution (report/remote_notes.hpp).
#include "offload_build/report/remote_notes.hpp"

#include <fmt/format.h>

namespace ob::report {

std::string_view ran_where_name(RanWhere where) {
  switch (where) {
    case RanWhere::Local: return "local";
    case RanWhere::Remote: return "remote";
    case RanWhere::EngineCache: return "engine-cache";
    case RanWhere::Fallback: return "local-fallback";
  }
  return "";
}

namespace {

// A remote job's queue and run times as the engine reported them, in parentheses.
std::string engine_times(const RemoteJobNote& n) {
  if (n.queued_s == 0 && n.executed_s == 0) return "(the engine gave no times)";
  return fmt::format("(queued {:.2f} s, ran {:.2f} s)", n.queued_s, n.executed_s);
}

}  // namespace

void explain_remote(const plan::Plan& plan, const RemoteNotes& notes, std::ostream& out) {
  for (const auto& [id, n] : notes) {
    std::string line = fmt::format("offload-build: explain: {}: ", plan.jobs[id].describe(plan.cwd));
    switch (n.where) {
      case RanWhere::Remote: line += "executed remotely " + engine_times(n); break;
      case RanWhere::EngineCache: line += "served by the engine's action cache"; break;
      case RanWhere::Fallback: line += "ran locally after all: " + n.why; break;
      case RanWhere::Local:
        line += n.why.empty() ? "ran locally (not a job remote execution sends)" : "ran locally: " + n.why;
        break;
    }
    if (n.no_scan) line += "; its inputs from its dependency manifest in the engine (no scan here)";
    out << line << '\n';
  }
}

nlohmann::json remote_note_json(const RemoteJobNote& n) {
  nlohmann::json e{{"where", ran_where_name(n.where)}};
  if (n.where == RanWhere::Remote || n.where == RanWhere::EngineCache) {
    e["queued_s"] = n.queued_s;
    e["executed_s"] = n.executed_s;
  }
  if (!n.why.empty()) e["why"] = n.why;
  return e;
}

std::function<std::optional<nlohmann::json>(const plan::Job&)> remote_execution_of(const RemoteNotes& notes) {
  if (notes.empty()) return {};
  return [&notes](const plan::Job& job) -> std::optional<nlohmann::json> {
    auto it = notes.find(job.id);
    if (it == notes.end()) return std::nullopt;
    return remote_note_json(it->second);
  };
}

void mark_remote(Timeline& timeline, const RemoteNotes& notes) {
  for (const auto& [id, n] : notes) {
    if (id >= timeline.jobs.size()) continue;
    std::string& where = timeline.jobs[id].where;
    switch (n.where) {
      case RanWhere::Remote: where = "remote " + engine_times(n); break;
      case RanWhere::EngineCache: where = "engine cache"; break;
      case RanWhere::Fallback: where = "local after all: " + n.why; break;
      case RanWhere::Local: where = "local"; break;
    }
  }
}

}  // namespace ob::report
