// The no-op fast path (cli/noop_build.hpp, cache/noop_record.hpp): a build
// with nothing to do prints what a no-op build prints without planning or
// reading state.json, and any change that matters makes the next build a
// real one.
#include <catch2/catch.hpp>

#include <chrono>

#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "rust_support.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const char* kMain = R"(#include <stdio.h>
#include "shared.h"
#if __has_include(<cpath_value.h>)
#include <cpath_value.h>
#else
#define CPATH_VALUE 0
#endif
int other(void);
int main(void) {
  printf("main %d %d %d\n", SHARED, CPATH_VALUE, other());
  return 0;
}
)";

class Project {
 public:
  Project() : dir_(tmp_.path() / "p") {
    write_file(dir_ / "offload.json",
               R"({"name": "noop", "sources": ["src/*.c"], "targets": ["host"], "flags": ["-O1"]})");
    write_file(dir_ / "src/main.c", kMain);
    write_file(dir_ / "src/other.c", "#include \"shared.h\"\nint other(void) { return SHARED + 1; }\n");
    write_file(dir_ / "src/shared.h", "#define SHARED 5\n");
    backdate();
  }

  // Everything written so far an hour old: a file modified within 2 s of a
  // build's start keeps it from leaving a record (a change in the same
  // timestamp tick could go unseen).
  void backdate() {
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      if (e.path().string().find("/build") == std::string::npos) fs::last_write_time(e.path(), old);
    fs::last_write_time(dir_, old);
  }

  process::Captured build(std::vector<std::string> extra = {}, Env env = {}) {
    last_ = build_project(dir_, {}, std::move(extra), std::move(env));
    return last_;
  }

  // Built, and a record left by a no-op build (the first build's inputs may
  // be too new for one): the next build with the same command takes the fast path.
  void ready(std::vector<std::string> extra = {}, Env env = {}) {
    REQUIRE(build(extra, env).exit_code == 0);
    REQUIRE(build(extra, env).exit_code == 0);
    INFO(last_.err);
    REQUIRE(all_up_to_date(last_.err));
    REQUIRE(fs::exists(record()));
  }

  std::string program_output() { return run_tool({(dir_ / "build/noop").string()}).out; }

  const fs::path& dir() const { return dir_; }
  fs::path record() const { return dir_ / "build/.offload-build/noop"; }
  fs::path state() const { return dir_ / "build/.offload-build/state.json"; }

  static bool all_up_to_date(const std::string& err) {
    return err.find(" jobs: 0 from cache, 0 run, ") != std::string::npos;
  }

 private:
  TempDir tmp_;
  fs::path dir_;
  process::Captured last_;
};

// The lines without the summary's time.
std::string without_time(const std::string& err) {
  const auto at = err.rfind(" in ");
  return at == std::string::npos ? err : err.substr(0, at);
}

// A job line of `err` ("[k/n] host src/main.c (up to date)") for `job`.
std::string line_of(const std::string& err, const std::string& job) {
  for (const auto& line : util::split(err, '\n'))
    if (line.find("] " + job) != std::string::npos) return line.substr(line.find("] ") + 2);
  return "";
}

}  // namespace

TEST_CASE("a no-op build takes the fast path: same lines, state.json not read",
          "[integration][noop]") {
  Project p;
  p.ready();
  // -q: nothing at all, on either path.
  auto quiet_slow = p.build({"-q"});
  auto quiet_fast = p.build({"-q"});
  CHECK(quiet_slow.exit_code == 0);
  CHECK(quiet_fast.exit_code == 0);
  CHECK(quiet_fast.err.empty());
  CHECK(quiet_fast.out.empty());

  std::filesystem::remove(p.record());
  auto slow = p.build();  // a no-op build through the plan: leaves the record
  REQUIRE(slow.exit_code == 0);
  REQUIRE(fs::exists(p.record()));
  // A state that cannot be read would make every job run: the fast path never reads it.
  const auto state_time = fs::last_write_time(p.state());
  write_file(p.state(), "not json");
  fs::last_write_time(p.state(), state_time);
  auto fast = p.build();
  INFO(fast.err);
  REQUIRE(fast.exit_code == 0);
  CHECK(Project::all_up_to_date(fast.err));
  CHECK(without_time(fast.err) == without_time(slow.err));
  CHECK(fast.out == slow.out);
  CHECK(line_of(fast.err, "link build/noop") == "link build/noop (up to date)");
  CHECK(read_file(p.state()) == "not json");  // not rewritten either
}

TEST_CASE("after a no-op record, an edit to a source or a header rebuilds", "[integration][noop]") {
  Project p;
  p.ready();
  CHECK(p.program_output() == "main 5 0 6\n");
  SECTION("a source edited") {
    write_file(p.dir() / "src/other.c", "#include \"shared.h\"\nint other(void) { return SHARED + 2; }\n");
    auto r = p.build();
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(line_of(r.err, "host src/other.c") == "host src/other.c");  // ran
    CHECK(p.program_output() == "main 5 0 7\n");
  }
  SECTION("a header edited") {
    write_file(p.dir() / "src/shared.h", "#define SHARED 8\n");
    auto r = p.build();
    REQUIRE(r.exit_code == 0);
    CHECK(p.program_output() == "main 8 0 9\n");
  }
  SECTION("a header edited in place, same size, its mtime put back: the ctime tells") {
    const fs::path h = p.dir() / "src/shared.h";
    const auto when = fs::last_write_time(h);
    {
      std::fstream f(h, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(15);  // "#define SHARED 5\n": the 5
      f.put('7');
    }
    fs::last_write_time(h, when);
    REQUIRE(fs::last_write_time(h) == when);
    auto r = p.build();
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(!Project::all_up_to_date(r.err));
    CHECK(p.program_output() == "main 7 0 8\n");
  }
  SECTION("a header touched (same content): its includers are served, not up to date") {
    fs::last_write_time(p.dir() / "src/shared.h", fs::file_time_type::clock::now());
    auto r = p.build();
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(!Project::all_up_to_date(r.err));
    CHECK(line_of(r.err, "host-ir src/main.c") != "host-ir src/main.c (up to date)");
  }
}

TEST_CASE("after a no-op record, a source added to or removed from the glob changes the plan",
          "[integration][noop]") {
  Project p;
  p.ready();
  SECTION("added") {
    write_file(p.dir() / "src/extra.c", "int extra(void) { return 3; }\n");
    fs::last_write_time(p.dir() / "src/extra.c", fs::file_time_type::clock::now() - std::chrono::hours(1));
    auto r = p.build();  // only the directory's mtime says so
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(line_of(r.err, "host src/extra.c") == "host src/extra.c");
    CHECK(r.err.find("offload-build: 13 jobs") != std::string::npos);
  }
  SECTION("removed") {
    fs::remove(p.dir() / "src/other.c");
    auto r = p.build();
    INFO(r.err);
    CHECK(r.exit_code != 0);  // main.c calls other(): the link fails
    CHECK(!fs::exists(p.record()));
  }
}

TEST_CASE("after a no-op record, a deleted output is made again", "[integration][noop]") {
  Project p;
  p.ready();
  const fs::path target = GENERATE(as<std::string>{}, "build/noop", "build/obj/src/other.c.host.o");
  fs::remove(p.dir() / target);
  auto r = p.build();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(!Project::all_up_to_date(r.err));
  CHECK(fs::exists(p.dir() / target));
  CHECK(p.program_output() == "main 5 0 6\n");
}

TEST_CASE("after a no-op record, the command line, the environment or offload.json changed rebuilds",
          "[integration][noop]") {
  Project p;
  SECTION("--two-parse: another layout") {
    p.ready();
    auto r = p.build({"--two-parse"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(line_of(r.err, "host-ir src/main.c").empty());
    CHECK(r.err.find("offload-build: 7 jobs") != std::string::npos);
  }
  SECTION("CPATH, which compiles read") {
    write_file(p.dir() / "inc1/cpath_value.h", "#define CPATH_VALUE 1\n");
    write_file(p.dir() / "inc2/cpath_value.h", "#define CPATH_VALUE 2\n");
    p.backdate();
    p.ready({}, {{"CPATH", (p.dir() / "inc1").string()}});
    CHECK(p.program_output() == "main 5 1 6\n");
    auto r = p.build({}, {{"CPATH", (p.dir() / "inc2").string()}});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(!Project::all_up_to_date(r.err));
    CHECK(p.program_output() == "main 5 2 6\n");
  }
  SECTION("a define added to offload.json") {
    p.ready();
    write_file(p.dir() / "offload.json",
               R"({"name": "noop", "sources": ["src/*.c"], "targets": ["host"], "flags": ["-O1"],
                   "defines": ["SHARED=11"]})");
    write_file(p.dir() / "src/shared.h", "#ifndef SHARED\n#define SHARED 5\n#endif\n");
    fs::last_write_time(p.dir() / "src/shared.h", fs::file_time_type::clock::now() - std::chrono::hours(1));
    auto r = p.build();
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(p.program_output() == "main 11 0 12\n");
  }
}

TEST_CASE("a failed build leaves no no-op record, and the fixed one rebuilds", "[integration][noop]") {
  Project p;
  p.ready();
  const std::string good = read_file(p.dir() / "src/other.c");
  const auto good_time = fs::last_write_time(p.dir() / "src/other.c");
  write_file(p.dir() / "src/other.c", "int other(void) { return oops; }\n");
  auto failed = p.build();
  REQUIRE(failed.exit_code != 0);
  CHECK(!fs::exists(p.record()));
  // Back as it was, stamp included: the outputs are those of this source, so
  // the build may be a no-op, but it is one through the plan (no record).
  write_file(p.dir() / "src/other.c", good);
  fs::last_write_time(p.dir() / "src/other.c", good_time);
  auto fixed = p.build();
  INFO(fixed.err);
  REQUIRE(fixed.exit_code == 0);
  CHECK(p.program_output() == "main 5 0 6\n");
  SECTION("fixed with a new edit") {
    write_file(p.dir() / "src/other.c", "#include \"shared.h\"\nint other(void) { return SHARED * 2; }\n");
    auto r = p.build();
    REQUIRE(r.exit_code == 0);
    CHECK(p.program_output() == "main 5 0 10\n");
  }
}

TEST_CASE("a Rust manifest's build becomes a no-op, and takes the fast path", "[integration][noop][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& e : fs::recursive_directory_iterator(dir)) fs::last_write_time(e.path(), old);
  fs::last_write_time(dir, old);
  const std::vector<std::string> build{"-C", dir.string(), "build"};
  REQUIRE(run_ob(build).exit_code == 0);
  fs::remove(dir / "build/.offload-build/noop");  // the next one goes through the plan
  // The crate's empty offload stub reads no file: it is up to date too (it
  // was served from the cache every time, and the jobs after it with it).
  auto second = run_ob(build);
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(Project::all_up_to_date(second.err));
  CHECK(line_of(second.err, "stub build/obj/offload-stub.ll") ==
        "stub build/obj/offload-stub.ll (up to date)");
  REQUIRE(fs::exists(dir / "build/.offload-build/noop"));
  write_file(dir / "build/.offload-build/state.json", "not json");
  auto fast = run_ob(build);
  INFO(fast.err);
  REQUIRE(fast.exit_code == 0);
  CHECK(without_time(fast.err) == without_time(second.err));
  // An edit is seen.
  write_file(dir / "src/main.rs", read_file(dir / "src/main.rs") + "\n");
  auto edited = run_ob(build);
  REQUIRE(edited.exit_code == 0);
  CHECK(!Project::all_up_to_date(edited.err));
}
