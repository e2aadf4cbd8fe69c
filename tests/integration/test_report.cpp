// --report FILE on real builds: the schema's shape, the values (jobs, kinds,
// commands that match -v, cache hits and misses with reasons), and a report
// for a failed build.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;
using nlohmann::json;

namespace {

struct Project {
  TempDir tmp{"ob-report"};
  fs::path dir;
  std::string cache;
  fs::path report;
  Project() : dir(copy_example("saxpy-c", tmp.path())), cache((tmp.path() / "cache").string()),
              report(tmp.path() / "out" / "report.json") {}
  process::Captured build(std::vector<std::string> more = {}) const {
    more.insert(more.begin(), {"--report", report.string()});
    return build_project(dir, cache, std::move(more), {{"CI", "1"}});
  }
  json read() const { return json::parse(read_file(report)); }
};

// The structure config/report.schema.json describes, checked field by field.
void check_shape(const json& r) {
  REQUIRE(r.is_object());
  CHECK(r.at("version") == 1);
  for (const char* key : {"offload_build", "project", "manifest", "cwd", "started", "result"})
    CHECK(r.at(key).is_string());
  CHECK(r.at("duration_s").is_number());
  CHECK(std::regex_match(r.at("started").get<std::string>(),
                         std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
  CHECK(r.at("tools").is_object());
  CHECK(r.at("outputs").is_array());
  CHECK(r.at("targets").is_array());
  for (const char* key : {"jobs", "ran", "from_cache", "up_to_date", "failed", "not_run",
                          "cache_hits", "cache_misses"})
    CHECK(r.at("summary").at(key).is_number_integer());
  REQUIRE(r.at("jobs").is_array());
  for (const auto& j : r.at("jobs")) {
    CHECK(j.at("id").is_number_integer());
    CHECK(j.at("kind").is_string());
    CHECK(j.at("description").is_string());
    CHECK(j.at("inputs").is_array());
    CHECK(j.at("outputs").is_array());
    CHECK(j.at("deps").is_array());
    REQUIRE(j.at("command").is_array());
    for (const auto& a : j.at("command")) CHECK(a.is_string());
    CHECK(j.at("status").is_string());
    CHECK((j.at("cache").is_string() || j.at("cache").is_null()));
    CHECK((j.at("reason").is_string() || j.at("reason").is_null()));
    CHECK((j.at("exit_code").is_number_integer() || j.at("exit_code").is_null()));
    CHECK((j.at("duration_s").is_number() || j.at("duration_s").is_null()));
  }
}

// A python3 with the jsonschema module (python3-jsonschema; scripts/setup.sh
// installs it), or "" when there is none: the tests that write a report skip.
const std::string& python_with_jsonschema() {
  static const std::string python = [] {
    for (const char* py : {"python3", "/usr/bin/python3"})
      if (run_tool({py, "-c", "import jsonschema"}).exit_code == 0) return std::string(py);
    return std::string();
  }();
  return python;
}

#define OB_REQUIRE_JSONSCHEMA()                                                                   \
  do {                                                                                            \
    if (python_with_jsonschema().empty())                                                         \
      OB_SKIP("no python3 jsonschema module (python3-jsonschema) to apply config/report.schema.json"); \
  } while (0)

// The schema file itself.
void validate_with_schema(const fs::path& report) {
  const std::string schema = std::string(OB_SOURCE_DIR) + "/config/report.schema.json";
  auto v = run_tool({python_with_jsonschema(), "-c",
                     "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), "
                     "json.load(open(sys.argv[2])))",
                     report.string(), schema});
  INFO(v.err);
  CHECK(v.exit_code == 0);
}

// -v prints each command with its outputs at their temporary names
// (dir/.name.ob-tmp-PID-JOB); map them back to the final names.
std::string without_temp_names(const std::string& text) {
  static const std::regex temp(R"((^|/|\s|=)\.([^/\s]+)\.ob-tmp-\d+-\d+)");
  return std::regex_replace(text, temp, "$1$2");
}

}  // namespace

TEST_CASE("report option describes a real build: jobs, commands, times, cache decisions, tools",
          "[report]") {
  OB_REQUIRE_JSONSCHEMA();
  Project p;
  auto first = p.build({"-v", "-j1"});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(fs::exists(p.report));
  const json r = p.read();
  check_shape(r);
  validate_with_schema(p.report);

  CHECK(r["result"] == "ok");
  CHECK(r["error"].is_null());
  CHECK(r["project"] == "saxpy");
  CHECK(r["manifest"] == (p.dir / "offload.json").string());
  CHECK(r["cwd"] == p.dir.string());
  CHECK(r["cache_dir"] == p.cache);
  CHECK(r["targets"] == json::array({"host"}));
  CHECK(r["duration_s"].get<double>() > 0);

  // The host parse, one device compile, package, host codegen and link, in plan order.
  const json& jobs = r["jobs"];
  REQUIRE(jobs.size() == 5);
  std::vector<std::string> kinds;
  for (const auto& j : jobs) kinds.push_back(j["kind"]);
  CHECK(kinds == std::vector<std::string>{"host-ir", "device", "package", "host", "link"});
  CHECK(jobs[0]["target"].is_null());
  CHECK(jobs[1]["target"] == "host");
  CHECK(jobs[1]["triple"] == "x86_64-unknown-linux-gnu");
  CHECK(jobs[4]["target"].is_null());
  CHECK(jobs[0]["inputs"] == json::array({(p.dir / "saxpy.c").string()}));
  CHECK(jobs[1]["inputs"] == json::array({(p.dir / "saxpy.c").string(),
                                          (p.dir / "build/obj/saxpy.c.host.bc").string()}));
  CHECK(jobs[4]["outputs"] == json::array({(p.dir / "build/saxpy").string()}));
  CHECK(jobs[1]["deps"] == json::array({0}));
  CHECK(jobs[3]["deps"] == json::array({0, 2}));
  for (const auto& j : jobs) {
    CHECK(j["status"] == "ran");
    CHECK(j["exit_code"] == 0);
    CHECK(j["duration_s"].get<double>() > 0);
    CHECK(j["started_s"].get<double>() >= 0);
    CHECK(j["cache"] == "miss");
    CHECK_FALSE(j["reason"].get<std::string>().empty());
  }
  CHECK(r["summary"]["jobs"] == 5);
  CHECK(r["summary"]["ran"] == 5);
  CHECK(r["summary"]["cache_misses"] == 5);
  CHECK(r["summary"]["cache_hits"] == 0);

  // Each command is the argv -v printed (there with temporary output names).
  const std::string echoed = without_temp_names(first.err);
  for (const auto& j : jobs) {
    const std::string line = util::shell_join(j["command"].get<std::vector<std::string>>());
    INFO(line);
    CHECK(count_occurrences(echoed, line + "\n") == 1);
  }
  CHECK(jobs[0]["command"][0] == std::string(kLlvmBin) + "/clang");

  // Tools: versions of the programs run, identity of the others.
  CHECK_THAT(r["tools"]["clang"]["version"].get<std::string>(), Catch::Contains("clang version 22"));
  CHECK(r["tools"]["clang"]["path"] == std::string(kLlvmBin) + "/clang");
  CHECK(r["tools"]["clang"]["size"].get<uint64_t>() > 0);
  CHECK(r["tools"].contains("llvm-offload-binary"));
  CHECK(r["tools"]["offload-build"]["version"] == std::string("offload-build ") + OB_VERSION);

  // The program, as built.
  REQUIRE(r["outputs"].size() == 1);
  CHECK(r["outputs"][0]["path"] == (p.dir / "build/saxpy").string());
  CHECK(r["outputs"][0]["size"] == fs::file_size(p.dir / "build/saxpy"));

  SECTION("a clean rebuild: every job a cache hit") {
    fs::remove_all(p.dir / "build");
    auto second = p.build();
    REQUIRE(second.exit_code == 0);
    const json r2 = p.read();
    check_shape(r2);
    for (const auto& j : r2["jobs"]) {
      CHECK(j["cache"] == "hit");
      CHECK(j["status"] == "cached");
      CHECK(j["exit_code"].is_null());
      CHECK(j["reason"].is_null());
    }
    CHECK(r2["summary"]["cache_hits"] == 5);
    CHECK(r2["summary"]["ran"] == 0);
  }

  SECTION("an edited source: its compiles miss and say why") {
    std::string src = read_file(p.dir / "saxpy.c");
    write_file(p.dir / "saxpy.c", src + "\n/* edited */\n");
    auto second = p.build();
    REQUIRE(second.exit_code == 0);
    const json r2 = p.read();
    CHECK(r2["jobs"][0]["cache"] == "miss");
    CHECK_THAT(r2["jobs"][0]["reason"].get<std::string>(), Catch::Contains("saxpy.c"));
    CHECK(r2["jobs"][0]["reason_code"].is_string());
    CHECK(r2["jobs"][1]["cache"] == "miss");
    // A comment changes neither the host IR nor the device image: the host
    // codegen reading them is served.
    CHECK(r2["jobs"][3]["cache"] == "hit");
  }

  SECTION("with --no-cache the cache column says off") {
    fs::remove_all(p.dir / "build");
    auto second = p.build({"--no-cache"});
    REQUIRE(second.exit_code == 0);
    const json r2 = p.read();
    CHECK(r2["cache_dir"].is_null());
    for (const auto& j : r2["jobs"]) CHECK(j["cache"] == "off");
  }
}

TEST_CASE("report option: written for a failed build, with the failed job marked", "[report]") {
  OB_REQUIRE_JSONSCHEMA();
  Project p;
  write_file(p.dir / "saxpy.c", "int main(void) { return 0 }\n");
  auto r = p.build({"-j1"});
  CHECK(r.exit_code == 1);
  REQUIRE(fs::exists(p.report));
  const json rep = p.read();
  check_shape(rep);
  validate_with_schema(p.report);
  CHECK(rep["result"] == "failed");
  CHECK_THAT(rep["error"].get<std::string>(), Catch::Contains("host-ir saxpy.c failed with exit code 1"));
  const json& jobs = rep["jobs"];
  REQUIRE(jobs.size() == 5);
  CHECK(jobs[0]["status"] == "failed");
  CHECK(jobs[0]["exit_code"] == 1);
  CHECK(jobs[0]["cache"] == "miss");
  CHECK_THAT(jobs[0]["error"].get<std::string>(), Catch::Contains("failed with exit code 1"));
  for (size_t i = 1; i < jobs.size(); ++i) {
    CHECK(jobs[i]["status"] == "not-run");
    CHECK(jobs[i]["cache"].is_null());
    CHECK(jobs[i]["duration_s"].is_null());
  }
  CHECK(rep["summary"]["failed"] == 1);
  CHECK(rep["summary"]["not_run"] == 4);
  CHECK(rep["outputs"][0]["exists"] == false);
  CHECK(temp_outputs(p.report.parent_path()).empty());

  SECTION("and for a build that fails before planning (bad manifest)") {
    write_file(p.dir / "offload.json", "{\"name\": \"saxpy\", \"sources\": [\"saxpy.c\"]}");
    auto bad = p.build();
    CHECK(bad.exit_code == 2);
    const json rep2 = p.read();
    check_shape(rep2);
    CHECK(rep2["result"] == "failed");
    CHECK(rep2["jobs"].empty());
    CHECK_THAT(rep2["error"].get<std::string>(), Catch::Contains("targets"));
  }
}

// Interrupted while two compiles run: the report says so, and names them.
TEST_CASE("report option after an interrupt marks the stopped jobs", "[report]") {
  TempDir tmp{"ob-report"};
  const fs::path llvm = tmp / "llvm";
  const std::string hanging = "#!/bin/sh\n"
                              "for a; do [ \"$a\" = '-###' ] && exit 1; done\n"  // not clang
                              "out=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                              "[ -n \"$out\" ] && echo partial > \"$out\"\nexec sleep 30\n";
  for (const char* tool : {"clang", "clang++", "llvm-offload-binary", "clang-linker-wrapper"}) {
    write_file(llvm / "bin" / tool, hanging);
    fs::permissions(llvm / "bin" / tool, fs::perms::owner_all);
  }
  const fs::path dir = tmp / "proj";
  write_file(dir / "a.c", "int a;\n");
  write_file(dir / "b.c", "int b;\n");
  write_file(dir / "offload.json", R"({"name": "p", "sources": ["*.c"], "targets": ["host"], "toolchain": ")" +
                                       llvm.string() + "\"}");
  const fs::path report = tmp / "report.json";
  process::Command cmd{{OB_BINARY, "-C", dir.string(), "-j", "2", "--no-cache", "--report", report.string(), "build"},
              {},
              {{"CI", "1"}}};
  const int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  auto pid = process::spawn(cmd, process::Stdio{-1, -1, devnull});
  close(devnull);
  REQUIRE(pid.ok());
  // Both compiles started: each wrote its output (not counting the record of
  // its lookups beside its depfile, written as its process starts).
  auto started_outputs = [&] {
    size_t n = 0;
    for (const auto& t : temp_outputs(dir / "build")) n += t.extension() != ".lookups";
    return n;
  };
  // (At most 60 s: a bound on a hang, not reached when it works.)
  for (int i = 0; i < 1200 && started_outputs() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(started_outputs() == 2);
  kill(*pid, SIGINT);
  CHECK(process::wait_exit_code(*pid) == 130);
  CHECK(temp_outputs(dir / "build").empty());  // no temporary left behind, lookups included
  REQUIRE(fs::exists(report));
  const json r = json::parse(read_file(report));
  check_shape(r);
  CHECK(r["result"] == "interrupted");
  CHECK_THAT(r["error"].get<std::string>(), Catch::Contains("interrupted"));
  REQUIRE(r["jobs"].size() == 7);
  for (const auto& j : r["jobs"]) {
    INFO(j["description"]);
    CHECK(j["status"] == (j["kind"] == "device" ? "interrupted" : "not-run"));
  }
  // No tool was asked its version after the interrupt (the report's tools
  // have no "version" at all; one asked and stopped would have it, null).
  REQUIRE(r["tools"].contains("clang"));
  CHECK_FALSE(r["tools"]["clang"].contains("version"));
}

TEST_CASE("wrap --report: a launcher compile's report, split or run unchanged with its reason",
          "[report][launcher]") {
  OB_REQUIRE_JSONSCHEMA();
  Project p;
  const std::string clang = "/usr/bin/clang-22";
  const fs::path r1 = p.tmp / "split.json", r2 = p.tmp / "unchanged.json";
  auto split = run_ob({"--cache-dir", p.cache, "--report", r1.string(), "wrap", "--", clang, "-fopenmp",
                       "-fopenmp-targets=x86_64-unknown-linux-gnu", "-O2", "-c", "saxpy.c", "-o", "s.o"},
                      p.dir);
  INFO(split.err);
  REQUIRE(split.exit_code == 0);
  const json s = json::parse(read_file(r1));
  validate_with_schema(r1);
  CHECK(s["launcher"]["split"] == true);
  CHECK(s["launcher"]["reason_code"].is_null());
  CHECK(s["summary"]["jobs"] == 4);  // host-ir, device, package, host codegen
  CHECK(s["summary"]["cache_misses"] == 4);
  CHECK(s["summary"]["unchanged_by_reason"] == json::object());
  CHECK(s["outputs"][0]["path"] == (p.dir / "s.o").string());

  // -ftime-trace keeps a compile whole: run unchanged, its exit code and report.
  auto unchanged = [&](const fs::path& report, const std::string& source, int code) {
    auto ran = run_ob({"--cache-dir", p.cache, "--report", report.string(), "wrap", "--", clang, "-fopenmp",
                       "-fopenmp-targets=x86_64-unknown-linux-gnu", "-ftime-trace", "-c", source, "-o", "t.o"},
                      p.dir);
    CHECK(ran.exit_code == code);
    validate_with_schema(report);
    return json::parse(read_file(report));
  };
  const json u = unchanged(r2, "saxpy.c", 0);
  CHECK(u["launcher"]["split"] == false);
  CHECK_THAT(u["launcher"]["reason"].get<std::string>(), Catch::StartsWith("option -ftime-trace"));
  CHECK(u["launcher"]["exit_code"] == 0);
  CHECK(u["summary"]["unchanged_by_reason"] == json{{"unsupported option", 1}});
  CHECK(u["jobs"].empty());
  // Written by the session, as every flow's: where it ran, how it ended, the cache it counted in.
  CHECK(u["cwd"] == fs::canonical(p.dir).string());
  CHECK(u["result"] == "ok");
  CHECK(u["cache_dir"] == p.cache);
  // One that fails: the compiler's exit code, and the report says so.
  const json f = unchanged(p.tmp / "failed.json", "missing.c", 1);
  CHECK(f["result"] == "failed");
  CHECK(f["launcher"]["exit_code"] == 1);
  CHECK(f["summary"]["unchanged_by_reason"] == json{{"unsupported option", 1}});
}
