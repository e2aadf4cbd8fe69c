// A new user's first hour (issue 20): unknown and missing commands, `clean`,
// `cache` alone, `cache stats --zero`, the stats table, unsupported options by
// name, `verify -- PROGRAM`, and the small wording fixes. The real binary.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "launcher_support.hpp"
#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// saxpy-c in a temporary directory, with its own cache (outside the project
// unless a test names another).
struct Project {
  TempDir tmp{"ob-first-hour"};
  fs::path dir = copy_example("saxpy-c", tmp.path());
  fs::path cache = tmp / "cache";
  process::Captured ob(std::vector<std::string> more, const fs::path& cache_dir = {}) const {
    std::vector<std::string> a{"-C", dir.string(), "--cache-dir", (cache_dir.empty() ? cache : cache_dir).string()};
    a.insert(a.end(), more.begin(), more.end());
    return run_ob(std::move(a));
  }
  nlohmann::json stats(const fs::path& cache_dir = {}) const {
    auto r = ob({"cache", "stats", "--json"}, cache_dir);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  auto lines = util::split(text, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// Counters with long labels: an assembly source and -ftime-trace compiles
// through the launcher (a plain C compile is cached, not counted as unchanged).
void count_unchanged(const Launcher& l, int time_traces) {
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c", fs::copy_options::skip_existing);
  write_file(l.tmp / "plain.s", "\t.text\n");
  REQUIRE(l.ob({kClang, "-c", "plain.s", "-o", "plain.o"}).exit_code == 0);
  for (int i = 0; i < time_traces; ++i)
    REQUIRE(l.ob({kClang, "-fopenmp", kHostTargets, "-ftime-trace", "-c", "saxpy.c", "-o", "t.o"}).exit_code == 0);
}

}  // namespace

TEST_CASE("an unknown command is named with the closest one, and none lists the commands", "[ux]") {
  TempDir tmp("ob-first-hour");
  auto typo = run_ob({"bild"}, tmp.path());
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.err, Catch::StartsWith("offload-build: error: unknown command 'bild'; did you mean 'build'?"));
  CHECK_THAT(typo.err, !Catch::Contains("A subcommand is required"));
  // After global options too, and one level down.
  auto after_options = run_ob({"-C", tmp.path().string(), "-v", "bulid"});
  CHECK(after_options.exit_code == 2);
  CHECK_THAT(after_options.err, Catch::Contains("unknown command 'bulid'; did you mean 'build'?"));
  auto nested = run_ob({"cache", "stat"}, tmp.path());
  CHECK(nested.exit_code == 2);
  CHECK_THAT(nested.err, Catch::Contains("unknown command 'cache stat'; did you mean 'cache stats'?"));
  auto far = run_ob({"xyzzy"}, tmp.path());
  CHECK(far.exit_code == 2);
  CHECK_THAT(far.err, Catch::Contains("unknown command 'xyzzy'; the commands are: build, run"));

  auto none = run_ob({}, tmp.path());
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Contains("usage: offload-build [OPTIONS] COMMAND"));
  for (const char* command : {"build", "run", "clean", "verify", "cache", "init", "doctor", "wrap"})
    CHECK_THAT(none.err, Catch::Contains(std::string("\n  ") + command + " "));
  CHECK_THAT(none.err, !Catch::Contains("A subcommand is required"));
  auto help = run_ob({"help"}, tmp.path());
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("Subcommands:") || Catch::Contains("SUBCOMMANDS"));
}

TEST_CASE("a compiler as the first word still runs in launcher mode", "[ux]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  // A bare name found by its shape, and a path.
  for (const std::string& compiler : std::vector<std::string>{"clang-22", kClang}) {
    auto r = l.ob({compiler, "-O2", "-c", "saxpy.c", "-o", "p.o"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(l.tmp / "p.o"));
    fs::remove(l.tmp / "p.o");
  }
  // -v names one device pass in the singular.
  auto v = l.ob({kClang, "-fopenmp", kHostTargets, "-c", "saxpy.c", "-o", "s.o"}, {{"OFFLOAD_BUILD_VERBOSE", "1"}});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  CHECK_THAT(v.err, Catch::Contains(" 1 device pass, package, host "));
  CHECK_THAT(v.err, !Catch::Contains("1 device passes"));
}

TEST_CASE("a missing manifest says how to make one", "[ux]") {
  TempDir tmp("ob-first-hour");
  for (const char* command : {"build", "clean"}) {
    auto r = run_ob({"-C", tmp.path().string(), command});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("no manifest at") && Catch::Contains("`offload-build init DIR`"));
  }
}

TEST_CASE("clean removes the build directory only, never the cache", "[ux]") {
  Project p;
  REQUIRE(p.ob({"build"}).exit_code == 0);
  REQUIRE(fs::exists(p.dir / "build/saxpy"));
  const auto entries = p.stats()["entries"].get<uint64_t>();
  REQUIRE(entries > 0);

  auto dry = p.ob({"--dry-run", "clean"});
  CHECK(dry.exit_code == 0);
  CHECK_THAT(dry.out, Catch::Contains("would remove " + (p.dir / "build").string() + " ("));
  CHECK(fs::exists(p.dir / "build/saxpy"));

  auto r = p.ob({"clean"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("removed " + (p.dir / "build").string()));
  CHECK_FALSE(fs::exists(p.dir / "build"));
  CHECK(fs::exists(p.dir / "offload.json"));
  CHECK(fs::exists(p.dir / "saxpy.c"));
  CHECK(p.stats()["entries"] == entries);
  CHECK_THAT(p.ob({"clean"}).out, Catch::Contains("nothing to clean"));

  SECTION("a cache inside the build directory is kept") {
    const fs::path inner = p.dir / "build/cache";
    REQUIRE(p.ob({"build"}, inner).exit_code == 0);
    const auto inner_entries = p.stats(inner)["entries"].get<uint64_t>();
    REQUIRE(inner_entries > 0);
    auto kept = p.ob({"clean"}, inner);
    INFO(kept.out << kept.err);
    CHECK(kept.exit_code == 0);
    CHECK_THAT(kept.out, Catch::Contains("keeping the cache directory"));
    CHECK_FALSE(fs::exists(p.dir / "build/saxpy"));
    CHECK(p.stats(inner)["entries"] == inner_entries);
  }
  SECTION("a build directory outside the project is refused") {
    const fs::path outside = p.tmp / "elsewhere";
    fs::create_directories(outside);
    write_file(outside / "keep.txt", "mine");
    write_file(p.dir / "offload.json",
               R"({"name": "saxpy", "sources": ["saxpy.c"], "targets": ["host"], "build_dir": "../elsewhere"})");
    auto refused = p.ob({"clean"});
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("is not a directory inside the project"));
    CHECK(fs::exists(outside / "keep.txt"));
  }
}

TEST_CASE("cache alone shows the stats, and stats --zero zeroes the counters", "[ux]") {
  Launcher l;
  count_unchanged(l, 1);
  auto alone = l.ob({"cache"});
  auto stats = l.ob({"cache", "stats"});
  CHECK(alone.exit_code == 0);
  CHECK(alone.out == stats.out);
  CHECK_THAT(alone.out, Catch::Contains("compiles run unchanged"));

  const auto before = l.stats();
  REQUIRE(before["unchanged_by_reason"]["not an offload compile"] == 1);
  auto zero = l.ob({"cache", "stats", "--zero"});
  CHECK(zero.exit_code == 0);
  CHECK_THAT(zero.out, Catch::Contains("compiles run unchanged") && Catch::Contains("zeroed the counters of"));
  const auto after = l.stats();
  CHECK(after["unchanged_by_reason"].empty());
  CHECK(after["unsupported_options"].empty());
  CHECK(after["hits"] == 0);
  CHECK(after["misses"] == 0);
  CHECK(after["entries"] == before["entries"]);  // entries stay
}

TEST_CASE("cache stats puts every value in one column and names unsupported options", "[ux]") {
  Launcher l;
  count_unchanged(l, 2);
  auto r = l.ob({"cache", "stats"});
  REQUIRE(r.exit_code == 0);
  INFO(r.out);
  const auto lines = lines_of(r.out);
  size_t column = std::string::npos;
  for (const auto& line : lines)
    if (util::starts_with(line, "entries ")) column = line.find_first_not_of(' ', 7);
  REQUIRE(column != std::string::npos);
  size_t checked = 0;
  for (const auto& line : lines) {
    if (util::starts_with(line, "remote storage ") || util::starts_with(line, "warning:")) continue;
    INFO(line);
    REQUIRE(line.size() > column);
    CHECK(line.substr(column - 2, 2) == "  ");  // the label ends before, two spaces apart
    CHECK(line[column] != ' ');
    ++checked;
  }
  CHECK(checked >= 12);
  // Under "unsupported option", the option by name.
  CHECK(std::find(lines.begin(), lines.end(),
                  fmt::format("{:<{}}{}", "    -ftime-trace", column, 2)) != lines.end());
  CHECK(l.stats()["unsupported_options"] == nlohmann::json{{"-ftime-trace", 2}});

  // The first offload compile it kept whole said why, once: in a new build
  // (no notes of this one), -v names it again with the most frequent ones.
  fs::remove_all(l.cache / "launcher-notes");
  auto v = l.ob({kClang, "-fopenmp", kHostTargets, "-ftime-trace", "-c", "saxpy.c", "-o", "t.o"},
                {{"OFFLOAD_BUILD_VERBOSE", "1"}});
  CHECK_THAT(v.err, Catch::Contains("running the compiler unchanged: option -ftime-trace") &&
                        Catch::Contains("counted most: -ftime-trace 3"));
}

TEST_CASE("verify -- PROGRAM proves offload of any program, and fails without it", "[ux]") {
  Project p;
  REQUIRE(p.ob({"build"}).exit_code == 0);
  // Global options may come between `verify` and `--`.
  auto ok = run_ob({"verify", "--color", "never", "--", "./build/saxpy"}, p.dir);
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "saxpy: n=1048576 y[10]=21.000000 max_err=0 OK\non_device=yes\n");
  CHECK_THAT(ok.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch") &&
                         Catch::Contains("__omp_offloading_"));
  CHECK(count_occurrences(ok.err, "omptarget device") == 0);  // summarized, not dumped

  // A program without offload: built with clang alone, no -fopenmp.
  write_file(p.tmp / "plain.c", "#include <stdio.h>\nint main(void) { puts(\"plain\"); return 0; }\n");
  REQUIRE(run_tool({kClang, "plain.c", "-o", "plain"}, p.tmp.path()).exit_code == 0);
  auto plain = run_ob({"verify", "./plain", "--not-ours"}, p.tmp.path());  // `--` is optional
  CHECK(plain.exit_code == 1);
  CHECK(plain.out == "plain\n");
  CHECK_THAT(plain.err, Catch::Contains("offload-build: error: verify: ./plain ran but no kernel was "
                                        "launched on an offload device"));
  auto none = run_ob({"verify"}, p.tmp.path());
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Contains("usage: offload-build verify -- PROGRAM ARGS..."));
}
