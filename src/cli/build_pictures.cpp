#include "build_pictures.hpp"

#include <iostream>

#include "offload_build/report/style.hpp"
#include "offload_build/report/timings_html.hpp"
#include "offload_build/report/trace_json.hpp"

namespace ob::cli {

namespace {

void warn(const Error& e) {
  std::cerr << report::paint_diagnostic("offload-build: warning: " + e.message) << '\n';
}

}  // namespace

bool wants_pictures(const GlobalOptions& o) { return (o.timings || o.trace) && !o.dry_run; }

void write_pictures(const GlobalOptions& o, const report::Timeline& timeline, const fs::path& default_page,
                    bool append) {
  if (o.dry_run) return;
  if (o.trace) {
    auto written = append ? report::append_trace(*o.trace, timeline) : report::write_trace(*o.trace, timeline);
    if (!written) warn(written.error());
  }
  if (!o.timings) return;
  const fs::path page = fs::absolute(o.timings->empty() ? default_page : *o.timings).lexically_normal();
  if (auto written = report::write_timings(page, timeline); !written) warn(written.error());
  else if (!o.quiet) std::cerr << "offload-build: timings: " << page.string() << '\n';
}

}  // namespace ob::cli
