// The build picture (issue 20): --timings drawn by a real browser (headless
// chromium) for real builds, manifest and launcher; --trace read back as
// Chrome trace events, one per job, for a manifest build, a make -j run of
// launcher compiles (several processes, one file) and the cargo flow.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "launcher_support.hpp"
#include "rust_support.hpp"
#include "timings_support.hpp"

using namespace ob;
using namespace ob::test;
using nlohmann::json;

namespace {

const Env kPlain = {{"CI", "1"}};

// The "X" events of a trace file (which must be valid JSON).
std::vector<json> complete_events(const fs::path& trace) {
  const json t = json::parse(read_file(trace));
  REQUIRE(t.at("traceEvents").is_array());
  std::vector<json> out;
  for (const auto& e : t["traceEvents"])
    if (e.at("ph") == "X") out.push_back(e);
  return out;
}

// The critical jobs (ids) form one chain: each depends on the one before, the
// first on nothing, and the last is the job that ended last.
void check_chain(const std::vector<size_t>& ids, const json& jobs) {
  REQUIRE(ids.size() >= 2);
  CHECK(jobs.at(ids.front()).at("deps").empty());
  for (size_t i = 1; i < ids.size(); ++i) {
    const auto deps = jobs.at(ids[i]).at("deps").get<std::vector<size_t>>();
    CHECK(std::find(deps.begin(), deps.end(), ids[i - 1]) != deps.end());
  }
  CHECK(jobs.at(ids.back()).at("kind") == "link");
}

}  // namespace

TEST_CASE("timings option: chromium draws one bar per job of a real build, by kind and cache, with the critical path",
          "[timings][integration]") {
  OB_REQUIRE_CHROMIUM();
  TempDir tmp{"ob-timings"};
  const fs::path dir = copy_example("vector-cxx", tmp.path());
  const std::string cache = (tmp / "cache").string();
  const fs::path report = tmp / "report.json";
  auto r = run_ob({"-C", dir.string(), "--cache-dir", cache, "-j2", "--timings", "--report", report.string(), "build"},
                  {}, kPlain);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const fs::path page = dir / "build/offload-build-timings.html";
  CHECK_THAT(r.err, Catch::EndsWith("offload-build: timings: " + page.string() + "\n"));
  // The file goes with '=' (the value is optional): a separate word is said to be one.
  auto spaced = run_ob({"-C", dir.string(), "--timings", "t.html", "build"});
  CHECK(spaced.exit_code == 2);
  CHECK(spaced.err == "offload-build: error: --timings takes its file with '=': --timings=t.html\n");
  const json jobs = json::parse(read_file(report)).at("jobs");
  REQUIRE(jobs.size() >= 10);  // 3 sources x (host-ir, device, package, host) + link

  const std::string dom = rendered_dom(page);
  CHECK_FALSE(html_attribute(dom, "data-ob-error"));
  CHECK(html_attribute(dom, "data-ob-rendered") == std::to_string(jobs.size()));
  const auto bars = bars_of(dom);
  REQUIRE(bars.size() == jobs.size());
  std::set<std::string> kinds, drawn;
  std::vector<size_t> critical;
  for (const auto& b : bars) {
    const size_t id = std::stoul(b.data.at("job"));
    const json& job = jobs.at(id);
    INFO(job.dump());
    drawn.insert(b.data.at("job"));
    kinds.insert(b.data.at("kind"));
    CHECK(b.data.at("kind") == job.at("kind").get<std::string>());
    CHECK(b.has_class("kind-" + job.at("kind").get<std::string>()));
    CHECK(b.data.at("target") == (job.at("target").is_null() ? "" : job.at("target").get<std::string>()));
    CHECK(b.data.at("status") == "ran");
    CHECK(job.at("status") == "ran");
    CHECK((b.has_class("ran") && !b.has_class("served")));
    CHECK(b.has_class("critical") == (b.data.at("critical") == "true"));
    if (b.has_class("critical")) critical.push_back(id);
  }
  CHECK(drawn.size() == jobs.size());  // each job once
  CHECK(kinds == std::set<std::string>{"host-ir", "device", "package", "host", "link"});
  std::sort(critical.begin(), critical.end());
  check_chain(critical, jobs);
  const auto device = table_row(dom, "by-kind", "device");
  REQUIRE(device.size() == 9);
  CHECK(device[1] == "3");  // jobs
  CHECK(device[2] == "3");  // ran
  CHECK(device[3] == "0");  // served
  CHECK(device[8] != "0");  // CPU time: three compiles used some
  const auto host_target = table_row(dom, "by-target", "host");
  REQUIRE(host_target.size() == 9);
  CHECK(host_target[1] == "3");

  SECTION("a rebuild from the cache: every bar served, none ran") {
    fs::remove_all(dir / "build");
    const fs::path cached = tmp / "pages" / "cached.html";
    auto again = run_ob({"-C", dir.string(), "--cache-dir", cache, "--timings=" + cached.string(), "build"}, {}, kPlain);
    INFO(again.err);
    REQUIRE(again.exit_code == 0);
    CHECK_THAT(again.err, Catch::Contains("offload-build: timings: " + cached.string()));
    const std::string dom2 = rendered_dom(cached);
    CHECK_FALSE(html_attribute(dom2, "data-ob-error"));
    const auto served = bars_of(dom2);
    CHECK(served.size() == jobs.size());
    for (const auto& b : served) {
      CHECK(b.data.at("status") == "cached");
      CHECK((b.has_class("served") && !b.has_class("ran")));
    }
    CHECK(table_row(dom2, "by-kind", "device").at(3) == "3");  // served
    CHECK(table_row(dom2, "by-kind", "device").at(8) == "0");  // no CPU time: nothing ran
  }
}

TEST_CASE("trace option: one complete event per job of a manifest build, with sane fields", "[timings][integration]") {
  TempDir tmp{"ob-trace"};
  const fs::path dir = copy_example("saxpy-c", tmp.path());
  const fs::path trace = tmp / "out/trace.json", report = tmp / "report.json";
  auto r = run_ob({"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "--trace", trace.string(), "--report",
                   report.string(), "build"},
                  {}, kPlain);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json jobs = json::parse(read_file(report)).at("jobs");
  const json all = json::parse(read_file(trace)).at("traceEvents");
  const auto events = complete_events(trace);
  REQUIRE(events.size() == jobs.size());
  std::set<size_t> seen;
  std::map<size_t, json> by_job;
  for (const auto& e : events) {
    INFO(e.dump());
    const size_t id = e.at("args").at("job");
    seen.insert(id);
    by_job[id] = e;
    const json& job = jobs.at(id);
    CHECK(e.at("name") == job.at("description"));
    CHECK(e.at("cat") == job.at("kind"));
    CHECK(e.at("args").at("status") == job.at("status"));
    CHECK(e.at("ts").is_number_integer());
    CHECK(e.at("ts").get<long long>() > 0);
    CHECK(e.at("dur").get<long long>() >= 1);
    // Microseconds, not nanoseconds: the job's duration_s in the report (the
    // same measurement, rounded to the millisecond) times 10^6.
    REQUIRE(job.at("duration_s").is_number());
    CHECK(std::llabs(e.at("dur").get<long long>() - std::llround(job.at("duration_s").get<double>() * 1e6)) <= 1000);
    CHECK(e.at("pid") == events.front().at("pid"));
    CHECK(e.at("tid").get<int>() >= 1);
  }
  CHECK(seen.size() == jobs.size());
  // A job starts after every job it depends on ended (1 us of rounding).
  for (const auto& [id, e] : by_job)
    for (size_t dep : jobs.at(id).at("deps").get<std::vector<size_t>>())
      CHECK(e.at("ts").get<long long>() + 1 >= by_job.at(dep).at("ts").get<long long>() + by_job.at(dep).at("dur").get<long long>());
  // The process is named.
  bool named = false;
  for (const auto& e : all)
    named |= e.at("ph") == "M" && e.at("name") == "process_name" && e.at("pid") == events.front().at("pid");
  CHECK(named);
}

namespace {

// A make -j3 run through the launcher with OFFLOAD_BUILD_TRACE: 4 offload
// compiles, a plain one (cached whole: one host job), an assembly source (run
// unchanged) and an offload link. The trace file.
fs::path make_with_trace(const Launcher& l) {
  for (const char* n : {"a", "b", "c", "d"})
    fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / (std::string(n) + ".c"));
  write_file(l.tmp / "plain.c", "int plain(void) { return 1; }\n");
  write_file(l.tmp / "asm.s", "\t.text\n");
  const std::string compile = std::string(OB_BINARY) + " " + kClang + " -O2 -fopenmp " + kHostTargets;
  const std::string plain = std::string(OB_BINARY) + " " + kClang + " -c $< -o $@\n";
  write_file(l.tmp / "Makefile", "all: a.o b.o c.o d.o plain.o asm.o prog\n"
                                 "%.o: %.c\n\t" + compile + " -c $< -o $@\n"
                                 "plain.o: plain.c\n\t" + plain + "asm.o: asm.s\n\t" + plain +
                                 "prog: a.o\n\t" + compile + " a.o -o prog\n");
  const fs::path trace = l.tmp / "trace.json";
  auto r = run_tool({"make", "-j3", "-s"}, l.tmp.path(), l.env({{"OFFLOAD_BUILD_TRACE", trace.string()}}));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return trace;
}

}  // namespace

TEST_CASE("trace in launcher mode: a make -j3 run of several compiles is one valid trace from several processes",
          "[timings][launcher][integration]") {
  Launcher l;
  const auto events = complete_events(make_with_trace(l));
  std::map<std::string, int> by_kind;
  std::set<long long> pids;
  for (const auto& e : events) {
    ++by_kind[e.at("cat").get<std::string>()];
    pids.insert(e.at("pid").get<long long>());
    CHECK(e.at("dur").get<long long>() >= 1);
  }
  // Each of the 4 offload compiles: host-ir, device, package, host; the link
  // cached as one job; the plain compile one host job; the assembly run unchanged.
  CHECK(by_kind == std::map<std::string, int>{{"host-ir", 4}, {"device", 4}, {"package", 4}, {"host", 5},
                                              {"link", 1}, {"unchanged", 1}});
  CHECK(pids.size() == 7);  // one process per make recipe
  CHECK(temp_outputs(l.tmp.path()).empty());

  SECTION("a file that is not such a trace is left alone, and the compile still succeeds") {
    const fs::path other = l.tmp / "notes.json";
    write_file(other, "{\"mine\": true}\n");
    auto one = l.ob({kClang, "-O2", "-fopenmp", kHostTargets, "-c", "a.c", "-o", "again.o"},
                    {{"OFFLOAD_BUILD_TRACE", other.string()}});
    CHECK(one.exit_code == 0);
    CHECK_THAT(one.err, Catch::Contains("not a trace offload-build wrote"));
    CHECK(read_file(other) == "{\"mine\": true}\n");
  }
}

TEST_CASE("timings command: a whole make -j3 run's trace drawn as one page", "[timings][launcher][integration]") {
  OB_REQUIRE_CHROMIUM();
  Launcher l;
  const fs::path trace = make_with_trace(l);
  const size_t jobs = complete_events(trace).size();
  auto r = l.ob({"timings", trace.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const fs::path page = trace.string() + ".html";
  CHECK_THAT(r.err, Catch::Contains("offload-build: timings: " + page.string()));
  const std::string dom = rendered_dom(page);
  CHECK_FALSE(html_attribute(dom, "data-ob-error"));
  const auto bars = bars_of(dom);
  CHECK(bars.size() == jobs);
  std::map<std::string, int> by_kind;
  for (const auto& b : bars) ++by_kind[b.data.at("kind")];
  CHECK(by_kind["device"] == 4);
  CHECK(by_kind["unchanged"] == 1);
  CHECK(table_row(dom, "by-kind", "host-ir").at(1) == "4");
  // Not a trace: a clear error, no page.
  write_file(l.tmp / "notes.json", "[1]");
  auto bad = l.ob({"timings", (l.tmp / "notes.json").string()});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("notes.json: not a trace of offload-build's --trace"));
  CHECK_FALSE(fs::exists(l.tmp / "notes.json.html"));
}

TEST_CASE("timings in launcher mode: a one-step build's page draws each source's compile and the link",
          "[timings][launcher][integration]") {
  OB_REQUIRE_CHROMIUM();
  Launcher l;
  write_file(l.tmp / "kern.c", "void scale(float *x, int n) {\n"
                               "#pragma omp target teams distribute parallel for map(tofrom: x[0:n])\n"
                               "  for (int i = 0; i < n; ++i) x[i] *= 2;\n}\n");
  write_file(l.tmp / "main.c", "void scale(float *x, int n);\n"
                               "int main(void) { float x[8] = {1}; scale(x, 8); return x[0] == 2 ? 0 : 1; }\n");
  auto r = l.ob({"--timings", "wrap", "--", kClang, "-O2", "-fopenmp", kHostTargets, "main.c", "kern.c", "-o", "prog"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const fs::path page = l.tmp / "prog.timings.html";  // the default next to the output
  CHECK_THAT(r.err, Catch::Contains("offload-build: timings: " + page.string()));
  CHECK(run_tool({(l.tmp / "prog").string()}, l.tmp.path()).exit_code == 0);
  const std::string dom = rendered_dom(page);
  CHECK_FALSE(html_attribute(dom, "data-ob-error"));
  std::map<std::string, int> by_kind;
  int critical = 0;
  for (const auto& b : bars_of(dom)) {
    ++by_kind[b.data.at("kind")];
    critical += b.has_class("critical");
  }
  CHECK(by_kind == std::map<std::string, int>{{"host-ir", 2}, {"device", 2}, {"package", 2}, {"host", 2}, {"link", 1}});
  CHECK(critical == 5);  // one source's host-ir, device, package, host, then the link
}

TEST_CASE("trace and timings in the cargo flow: each job an event, after the jobs it depends on",
          "[timings][integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-trace"};
  const fs::path dir = copy_rust_example("rust-cargo", tmp.path());
  const fs::path trace = tmp / "trace.json";
  auto r = run_ob({"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "--trace", trace.string(), "--timings",
                   "cargo", "build"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto events = complete_events(trace);
  std::vector<std::string> names;  // the plan's jobs
  std::set<std::string> crates;    // what cargo compiled in the host pass
  std::map<size_t, const json*> by_job;
  const json* host = nullptr;
  for (const auto& e : events) {
    CHECK(e.at("args").at("status") == "ran");
    by_job[e.at("args").at("job").get<size_t>()] = &e;
    if (e.at("cat") == "crate") {
      crates.insert(e.at("name").get<std::string>());
      continue;
    }
    names.push_back(e.at("name"));
    if (e.at("cat") == "cargo") host = &e;
  }
  for (const auto& e : events)  // the plan's jobs: each after those it depends on
    for (size_t d : e.at("args").at("deps").get<std::vector<size_t>>()) {
      REQUIRE(by_job.count(d));
      CHECK(e.at("ts").get<long long>() + 1 >= by_job[d]->at("ts").get<long long>() + by_job[d]->at("dur").get<long long>());
    }
  // The device pass, the package, (in the test flavour the embed's stub and
  // the embed,) the host pass, named for what it is: cargo build.
  const bool native = names.size() == 3;
  CHECK(names == (native ? std::vector<std::string>{"device host rust-cargo", "package rust-cargo", "cargo build rust-cargo"}
                         : std::vector<std::string>{"device host rust-cargo", "package rust-cargo",
                                                    "stub offload-stub.ll", "host rust-cargo", "cargo build rust-cargo"}));
  CHECK(events.at(1).at("args").at("deps") == json::array({0}));  // the package after the device image
  REQUIRE(host);
  CHECK(host->at("args").at("deps") == json::array({names.size() - 2}));  // the host pass last
  // Its crates, from cargo's own --timings page: the library and the program,
  // each a bar within the host pass.
  CHECK(crates == std::set<std::string>{"rustc rust-cargo lib", "rustc rust-cargo bin rust-cargo"});
  for (const auto& e : events)
    if (e.at("cat") == "crate") {
      CHECK(e.at("ts").get<long long>() >= host->at("ts").get<long long>());
      CHECK(e.at("ts").get<long long>() + e.at("dur").get<long long>() <=
            host->at("ts").get<long long>() + host->at("dur").get<long long>() + 1);
      CHECK(e.at("dur").get<long long>() > 0);
    }
  CHECK_THAT(r.err, Catch::Contains("] cargo build rust-cargo\n"));
  const fs::path page = dir / "target/offload/dev/offload-build-timings.html";
  CHECK_THAT(r.err, Catch::Contains("offload-build: timings: " + page.string()));
  const std::string html = read_file(page);
  CHECK(count_occurrences(html, "\"kind\":\"device\"") == 1);
  CHECK(count_occurrences(html, "\"kind\":\"cargo\"") == 1);
  CHECK(count_occurrences(html, "\"kind\":\"crate\"") == 2);
  CHECK(count_occurrences(html, "\"kind\":\"link\"") == 0);
}

TEST_CASE("trace and timings options: written for a failed build too, with the failed job marked",
          "[timings][integration]") {
  TempDir tmp{"ob-trace-failed"};
  const fs::path dir = copy_example("saxpy-c", tmp.path());
  write_file(dir / "saxpy.c", read_file(dir / "saxpy.c") + "\nthis is not C;\n");
  const fs::path trace = tmp / "trace.json", page = tmp / "page.html";
  auto r = run_ob({"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "--trace", trace.string(),
                   "--timings=" + page.string(), "build"},
                  {}, kPlain);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("offload-build: timings: " + page.string()));
  std::map<std::string, int> by_status;
  for (const auto& e : complete_events(trace)) ++by_status[e.at("args").at("status").get<std::string>()];
  CHECK(by_status == std::map<std::string, int>{{"failed", 1}});  // the host parse; nothing after it started
  CHECK(count_occurrences(read_file(page), "\"status\":\"failed\"") == 1);
  CHECK(count_occurrences(read_file(page), "\"result\":\"failed\"") == 1);
}
