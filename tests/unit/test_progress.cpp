// The console printer (status line, plain lines, quiet), colors, and the
// report built from recorded events, without running anything.
#include <catch2/catch.hpp>

#include <sstream>

#include "offload_build/report/build_report.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/util/style.hpp"

using namespace ob;
using namespace ob::report;
using namespace ob::util;

namespace {

plan::Plan two_job_plan() {
  plan::Plan plan;
  plan.cwd = "/p";
  plan.program = "/p/build/prog";
  plan::Job dev;
  dev.id = 0;
  dev.kind = plan::JobKind::DeviceCompile;
  dev.target = manifest::Target{"nvptx64-nvidia-cuda", "sm_90"};
  dev.source = "/p/src/kernels.cpp";
  dev.argv = {"clang", "-c", "src/kernels.cpp", "-o", "build/k.o"};
  dev.inputs = {"/p/src/kernels.cpp"};
  dev.outputs = {"/p/build/k.o"};
  plan::Job link;
  link.id = 1;
  link.kind = plan::JobKind::Link;
  link.argv = {"clang", "build/k.o", "-o", "build/prog"};
  link.inputs = {"/p/build/k.o"};
  link.outputs = {"/p/build/prog"};
  link.deps = {0};
  plan.jobs = {dev, link};
  return plan;
}

}  // namespace

TEST_CASE("elide_middle keeps both ends and never splits a UTF-8 character", "[ux]") {
  CHECK(elide_middle("short", 10) == "short");
  CHECK(elide_middle("[12/24] device sm_90 src/kernels.cpp", 20) == "[12/24] ...rnels.cpp");
  CHECK(elide_middle("[12/24] device sm_90 src/kernels.cpp", 20).size() == 20);
  CHECK(elide_middle("abcdef", 3) == "...");
  CHECK(elide_middle("abcdef", 2) == "..");
  // "é" is two bytes; widths count characters.
  CHECK(elide_middle("ééééééééé", 7) == "éé...éé");
}

TEST_CASE("plain mode: one line per job, as the executor always printed", "[ux]") {
  const plan::Plan plan = two_job_plan();
  std::ostringstream out;
  ConsoleProgress console(out, {ProgressMode::Plain, 0});
  console.build_started(plan);
  console.job_served(plan.jobs[0], report::ServedFrom::Cache, 0.01);
  console.job_started(plan.jobs[1]);
  console.job_output(plan.jobs[1], "warning: something");
  console.job_finished(plan.jobs[1], 0.5);
  console.build_finished(report::BuildResult::Ok);
  CHECK(out.str() ==
        "[1/2] device sm_90 src/kernels.cpp (cached)\n[2/2] link build/prog\nwarning: something\n");
}

TEST_CASE("quiet mode prints nothing but what the commands printed", "[ux]") {
  const plan::Plan plan = two_job_plan();
  std::ostringstream out;
  ConsoleProgress console(out, {ProgressMode::Quiet, 0});
  console.build_started(plan);
  console.job_started(plan.jobs[0]);
  console.job_output(plan.jobs[0], "src/kernels.cpp:1:1: error: x\n");
  console.job_failed(plan.jobs[0], 1, 0.1, "failed");
  console.build_finished(report::BuildResult::Failed);
  CHECK(out.str() == "src/kernels.cpp:1:1: error: x\n");
}

TEST_CASE("status mode: one line redrawn in place and other writers erase it first", "[ux]") {
  const plan::Plan plan = two_job_plan();
  std::ostringstream out;
  std::ostringstream other;  // stands for std::cerr seen by the rest of the program
  {
    ConsoleProgress console(out, {ProgressMode::Status, 80}, &other);
    CHECK(console.captures_output());
    console.build_started(plan);
    console.job_started(plan.jobs[0]);
    CHECK(out.str() == "\r[1/2] device sm_90 src/kernels.cpp\x1b[K");
    // Someone else prints a line (an explain line, -v echo, a warning): the
    // status line goes first, the text goes where the stream went before.
    other << "offload-build: explain: hit\n";
    CHECK(out.str() == "\r[1/2] device sm_90 src/kernels.cpp\x1b[K\r\x1b[K");
    CHECK(other.str() == "offload-build: explain: hit\n");
    // The command's buffered output is printed whole, then the status returns.
    console.job_output(plan.jobs[0], "warning: w\n");
    console.job_finished(plan.jobs[0], 0.2);
    console.job_started(plan.jobs[1]);
    console.build_finished(report::BuildResult::Ok);
  }
  CHECK(out.str() == "\r[1/2] device sm_90 src/kernels.cpp\x1b[K\r\x1b[K"
                     "warning: w\n"
                     "\r[1/2] device sm_90 src/kernels.cpp\x1b[K"
                     "\r[2/2] link build/prog\x1b[K\n");
}

TEST_CASE("status mode: the guarded stream is restored, and a partial line is never overwritten",
          "[ux]") {
  const plan::Plan plan = two_job_plan();
  std::ostringstream out;
  std::ostream& guarded = out;  // the usual case: status and messages share std::cerr
  std::streambuf* before = guarded.rdbuf();
  {
    ConsoleProgress console(out, {ProgressMode::Status, 80}, &guarded);
    CHECK(guarded.rdbuf() != before);
    console.build_started(plan);
    guarded << "no newline yet";
    console.job_started(plan.jobs[0]);
    console.job_failed(plan.jobs[0], 1, 0.1, "boom");
    console.build_finished(report::BuildResult::Failed);
  }
  CHECK(guarded.rdbuf() == before);
  CHECK(out.str() == "no newline yet\n\r[1/2] device sm_90 src/kernels.cpp\x1b[K\r\x1b[K");
}

TEST_CASE("colors only when enabled and error/warning prefixes painted", "[ux]") {
  set_color(false);
  CHECK(paint(Style::Error, "error:") == "error:");
  CHECK(paint_diagnostic("offload-build: error: x") == "offload-build: error: x");
  set_color(true);
  CHECK(paint(Style::Summary, "offload-build:") == "\x1b[1;32moffload-build:\x1b[0m");
  CHECK(paint_diagnostic("offload-build: error: bad") == "offload-build: \x1b[1;31merror:\x1b[0m bad");
  CHECK(paint_diagnostic("a.c:1:2: warning: w\nerror: later") ==
        "a.c:1:2: \x1b[1;35mwarning:\x1b[0m w\nerror: later");
  set_color(false);
  CHECK(decide_color(ColorChoice::Always, {}));
  CHECK_FALSE(decide_color(ColorChoice::Never, {}));
  CHECK(parse_color_choice("auto") == ColorChoice::Auto);
  CHECK_FALSE(parse_color_choice("sometimes"));
}

TEST_CASE("a report from recorded events: statuses, cache column, summary", "[report]") {
  const plan::Plan plan = two_job_plan();
  BuildRecorder rec;
  rec.build_started(plan);
  rec.job_started(plan.jobs[0]);
  rec.job_finished(plan.jobs[0], 0.25);
  rec.job_started(plan.jobs[1]);
  rec.job_failed(plan.jobs[1], 1, 0.5, "link build/prog failed with exit code 1");

  ReportData d;
  d.project = "prog";
  d.manifest = "/p/offload.json";
  d.started = std::chrono::system_clock::time_point{} + std::chrono::milliseconds(1'700'000'000'123);
  d.duration_s = 0.8;
  d.result = report::BuildResult::Failed;
  d.error = "link build/prog failed with exit code 1";
  d.plan = &plan;
  d.recorder = &rec;
  d.cache_enabled = true;
  d.cache_dir = fs::path("/c");
  d.miss_reason = [](const plan::Job& job) -> std::optional<MissReason> {
    if (job.id == 0) return MissReason{"inputs changed", "file changed: src/kernels.cpp"};
    return std::nullopt;
  };
  const auto r = make_report(d);
  CHECK(r["version"] == 1);
  CHECK(r["started"] == "2023-11-14T22:13:20.123Z");
  CHECK(r["result"] == "failed");
  CHECK(r["targets"] == nlohmann::json::array({"sm_90"}));
  const auto& jobs = r["jobs"];
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0]["status"] == "ran");
  CHECK(jobs[0]["cache"] == "miss");
  CHECK(jobs[0]["reason"] == "file changed: src/kernels.cpp");
  CHECK(jobs[0]["reason_code"] == "inputs changed");
  CHECK(jobs[0]["duration_s"] == 0.25);
  CHECK(jobs[0]["exit_code"] == 0);
  CHECK(jobs[0]["command"] == nlohmann::json(plan.jobs[0].argv));
  CHECK(jobs[1]["status"] == "failed");
  CHECK(jobs[1]["exit_code"] == 1);
  CHECK(jobs[1]["error"] == "link build/prog failed with exit code 1");
  CHECK(jobs[1]["deps"] == nlohmann::json::array({0}));
  CHECK(r["summary"]["ran"] == 1);
  CHECK(r["summary"]["failed"] == 1);
  CHECK(r["summary"]["cache_misses"] == 2);
  CHECK(r["outputs"].size() == 1);
  CHECK(r["outputs"][0]["path"] == "/p/build/prog");

  d.cache_enabled = false;
  CHECK(make_report(d)["jobs"][0]["cache"] == "off");
}
