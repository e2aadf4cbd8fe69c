#include "offload_build/run/pictures.hpp"

#include <iostream>

#include "offload_build/util/style.hpp"
#include "offload_build/report/timings_html.hpp"
#include "offload_build/report/trace_json.hpp"
#include "offload_build/util/files.hpp"

namespace ob::run {

namespace {

void warn(const Error& e) {
  std::cerr << util::paint_diagnostic("offload-build: warning: " + e.message) << '\n';
}

}  // namespace

bool wants_pictures(const Request& o) { return (o.timings || o.config.path("trace")) && !o.dry_run; }

void write_pictures(const Request& o, const report::Timeline& timeline, const fs::path& default_page,
                    bool append) {
  if (o.dry_run) return;
  if (const auto trace = o.config.path("trace")) {
    auto written = append ? report::append_trace(*trace, timeline) : report::write_trace(*trace, timeline);
    if (!written) warn(written.error());
  }
  if (!o.timings || (o.timings->empty() && default_page.empty())) return;
  const fs::path page = fs::absolute(o.timings->empty() ? default_page : *o.timings).lexically_normal();
  if (auto written = report::write_timings(page, timeline); !written) warn(written.error());
  else if (!o.config.flag("quiet")) std::cerr << "offload-build: timings: " << page.string() << '\n';
}

Result<int> draw_trace(const Request& o, const fs::path& trace) {
  const fs::path file = (o.directory / trace).lexically_normal();  // relative to -C, as every path
  auto text = util::read_regular_file(file, report::kMaxTraceFile, "a trace");
  if (!text) return text.error();
  const auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded()) return Error::usage(file.string() + ": not JSON; give the file --trace or OFFLOAD_BUILD_TRACE wrote");
  auto timeline = report::timeline_from_trace(json, file.filename().string());
  if (!timeline) return Error::usage(file.string() + ": " + timeline.error().message);
  const fs::path page = fs::absolute(o.timings && !o.timings->empty() ? *o.timings : fs::path(file.string() + ".html"));
  OB_TRY(report::write_timings(page, *timeline));
  if (!o.config.flag("quiet")) std::cerr << "offload-build: timings: " << page.lexically_normal().string() << '\n';
  return exit_code::ok;
}

}  // namespace ob::run
