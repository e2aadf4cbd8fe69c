// The build picture's pieces without a build: lanes, the critical path, the
// page's escaping of names, and many writers adding to one trace file.
#include <catch2/catch.hpp>

#include <thread>

#include <nlohmann/json.hpp>

#include "offload_build/report/timeline.hpp"
#include "offload_build/report/timings_html.hpp"
#include "offload_build/report/trace_json.hpp"
#include "offload_build/util/files.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::report;
using ob::test::TempDir;

namespace {

TimelineJob job(double start, double dur, std::vector<size_t> deps = {}, std::string name = "job") {
  TimelineJob j;
  j.name = std::move(name);
  j.kind = "device";
  j.status = "ran";
  j.reached = true;
  j.start_s = start;
  j.duration_s = dur;
  j.deps = std::move(deps);
  return j;
}

Timeline timeline(std::vector<TimelineJob> jobs) {
  Timeline t;
  t.title = "unit";
  t.flow = "manifest";
  t.origin = std::chrono::steady_clock::now();
  t.started = std::chrono::system_clock::now();
  t.jobs = std::move(jobs);
  return t;
}

std::string read(const fs::path& p) { return util::read_file(p).value_or(""); }

void write(const fs::path& p, const std::string& text) { REQUIRE(util::write_file_atomic(p, text)); }

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("timeline lanes: the lowest free lane at each start, as many lanes as jobs ran at once", "[timings]") {
  TimelineJob never = job(0, 0);
  never.reached = false;
  const auto t = timeline({job(0, 1), job(0.5, 1), job(1, 1), job(1.2, 0.1), never});
  CHECK(assign_lanes(t) == std::vector<int>{0, 1, 0, 2, -1});
}

TEST_CASE("timeline critical path: back from the job that ended last through the dependency that ended last",
          "[timings]") {
  // a -> b (long) -> d; a -> c (short) -> d; e alone, early.
  const auto t = timeline({job(0, 1), job(1, 2, {0}), job(1, 1, {0}), job(3, 1, {1, 2}), job(0, 0.5)});
  CHECK(critical_path(t) == std::vector<bool>{true, true, false, true, false});
  CHECK(critical_path(timeline({})).empty());
}

TEST_CASE("timings page: names cannot end the data's script element", "[timings]") {
  const std::string plain = timings_html(timeline({job(0, 1)}));
  const std::string hostile =
      timings_html(timeline({job(0, 1, {}, "x</script><script>alert(1)</script><!--"), job(1, 1, {0}, "b\xff")}));
  CHECK(count(hostile, "</script>") == count(plain, "</script>"));
  CHECK(count(hostile, "<!--") == count(plain, "<!--"));
  CHECK(hostile.find("alert(1)") != std::string::npos);  // still there, as \u003c-escaped JSON
  // The data parses back to the names.
  const size_t from = hostile.find("id=\"ob-data\">") + 13;
  const auto data = nlohmann::json::parse(hostile.substr(from, hostile.find("</script>", from) - from));
  CHECK(data["jobs"][0]["name"] == "x</script><script>alert(1)</script><!--");
  CHECK(data["jobs"][1]["name"] == "b\xEF\xBF\xBD");  // U+FFFD for a byte that is not UTF-8
}

TEST_CASE("trace file: many writers at once each add their events, and the file is always one valid JSON",
          "[timings]") {
  TempDir tmp("ob-trace-unit");
  const fs::path file = tmp / "t.json";
  constexpr int kWriters = 6, kEach = 15;
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&] {
      for (int i = 0; i < kEach; ++i)
        if (!append_trace(file, timeline({job(0, 1), job(1, 1, {0})}))) ++failures;
    });
  // A reader meanwhile only ever sees whole files.
  int parsed = 0;
  for (int i = 0; i < 50; ++i) {
    const std::string text = read(file);
    if (text.empty()) continue;
    CHECK(nlohmann::json::accept(text));
    ++parsed;
  }
  for (auto& t : writers) t.join();
  CHECK(failures == 0);
  const auto events = nlohmann::json::parse(read(file))["traceEvents"];
  size_t complete = 0;
  for (const auto& e : events) complete += e["ph"] == "X";
  CHECK(complete == size_t{kWriters} * kEach * 2);
  for (const auto& e : fs::directory_iterator(tmp.path()))  // no temporary left behind
    CHECK(e.path().filename().string().find(".ob-tmp-") == std::string::npos);

  SECTION("an empty file is a new trace; a foreign one is refused untouched") {
    write(tmp / "empty.json", "");
    CHECK(append_trace(tmp / "empty.json", timeline({job(0, 1)})));
    CHECK(nlohmann::json::parse(read(tmp / "empty.json"))["traceEvents"].size() == 3);
    write(tmp / "other.json", "[1, 2]\n");
    auto refused = append_trace(tmp / "other.json", timeline({job(0, 1)}));
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("not a trace offload-build wrote"));
    CHECK(read(tmp / "other.json") == "[1, 2]\n");
  }
}

TEST_CASE("trace file read back: a round trip keeps the jobs and their dependencies, anything else is an error",
          "[timings]") {
  auto t = timeline({job(0, 1, {}, "first"), job(1, 1, {0}, "second")});
  t.jobs[1].target = "sm_90";
  t.jobs[1].where = "remote (queued 0.01 s, ran 0.50 s)";  // remote execution
  const auto doc = nlohmann::json::parse(trace_document(trace_events(t, 42)));
  auto back = timeline_from_trace(doc, "t.json");
  REQUIRE(back);
  REQUIRE(back->jobs.size() == 2);
  CHECK(back->title == "t.json: 1 process");
  CHECK(back->jobs[1].name == "second");
  CHECK(back->jobs[1].target == "sm_90");
  CHECK(back->jobs[1].where == "remote (queued 0.01 s, ran 0.50 s)");
  CHECK(back->jobs[0].where.empty());
  CHECK(back->jobs[1].deps == std::vector<size_t>{0});
  CHECK(back->jobs[1].start_s == Approx(1.0).margin(2e-6));
  CHECK(back->duration_s == Approx(2.0).margin(2e-6));
  for (const char* bad : {R"([1])", R"({"traceEvents": 5})", R"({"traceEvents": [7]})", R"({"traceEvents": [{}]})",
                          R"({"traceEvents": [{"ph": "X"}]})",
                          R"({"traceEvents": [{"ph": "X", "ts": "1", "dur": 1, "pid": 1, "name": "a", "cat": "b", "args": {"job": 0}}]})",
                          R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "pid": 1, "name": "a", "cat": "b", "args": 3}]})"}) {
    INFO(bad);
    auto r = timeline_from_trace(nlohmann::json::parse(bad), "bad.json");
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::StartsWith("not a trace of offload-build's --trace"));
  }
  // Odd types where text is expected fall back, never throw.
  auto odd = timeline_from_trace(nlohmann::json::parse(
      R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "pid": 1, "name": "a", "cat": "b", "args": {"job": 0, "target": 5, "status": []}}]})"),
      "odd.json");
  REQUIRE(odd);
  CHECK(odd->jobs.at(0).status == "ran");
}
