// --explain in the cargo flow (issue 31 item 4): the flow keeps no build
// state, so each device pass and the host pass record what they read when
// they succeed, and a rebuild says which input changed for each.
#include <catch2/catch.hpp>

#include "cargo_workspace.hpp"
#include "offload_build/util/strings.hpp"
#include "rust_support.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// The --explain line of the job whose id contains `job`.
std::string explain_line(const std::string& err, const std::string& job) {
  for (const auto& line : util::split(err, '\n'))
    if (util::starts_with(line, "offload-build: explain: ") && line.find(job) != std::string::npos) return line;
  return "";
}

}  // namespace

TEST_CASE("cargo flow: --explain says which input changed for the device and the host pass",
          "[integration][rust][explain]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-explain"};
  const fs::path ws = factor_workspace(tmp / "ws");
  const std::string app = (ws / "app").string(), cache = (tmp / "cache").string();
  auto build = [&] {
    auto r = run_ob({"-C", app, "--cache-dir", cache, "--explain", "cargo", "run"}, {}, kMandatory);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "x[7]=7 expect=7 OK\n");
    return r.err;
  };
  const std::string first = build();
  // Nothing recorded yet: said so, once per pass.
  CHECK_THAT(explain_line(first, "kern"), Catch::Contains("miss: no earlier build of this job recorded"));
  CHECK_THAT(explain_line(first, "link"), Catch::Contains("not cached, runs: no earlier build of this job recorded"));

  // A kernel edit: the device pass misses on that file, the host pass relinks for it.
  edit_file(ws / "kern/src/lib.rs", "x[i] = i as f64 * factor();", "x[i] = factor() * i as f64;");
  const std::string kernel = build();
  INFO(kernel);
  CHECK_THAT(explain_line(kernel, "kern"), Catch::EndsWith("miss: changed: kern/src/lib.rs"));
  CHECK_THAT(explain_line(kernel, "link"), Catch::Contains("not cached, runs: ") &&
                                               Catch::Contains("changed: kern/src/lib.rs"));
  CHECK_FALSE(Catch::Contains("no earlier build").match(kernel));

  // A host-only edit in the program's crate: the image is current (the build
  // state), and the host pass says what changed.
  edit_file(ws / "app/src/main.rs", "println!(\"{}\", kern::report());", "println!(\"{}\", kern::report());\n    // host");
  const std::string host = build();
  INFO(host);
  CHECK_THAT(explain_line(host, "kern"), Catch::EndsWith(": up to date"));
  CHECK_THAT(explain_line(host, "link"), Catch::EndsWith("not cached, runs: changed: app/src/main.rs"));

  // A flag: the device pass says it (release is another profile: its first build).
  auto release = run_ob({"-C", app, "--cache-dir", cache, "--explain", "cargo", "run", "--release"}, {}, kMandatory);
  INFO(release.err);
  CHECK(release.exit_code == 0);
  CHECK_THAT(explain_line(release.err, "kern"), Catch::Contains("no earlier build of this job recorded (in this profile)"));

  // Nothing changed: the host pass says cargo finds it fresh.
  const std::string again = build();
  CHECK_THAT(explain_line(again, "link"), Catch::Contains("no input changed since it last ran"));
}
