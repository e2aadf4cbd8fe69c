// Lookups that found nothing (cache/lookups.hpp, docs/CACHE.md): k.c
// includes "h.h", found in b/ under -Ia -Ib, and asks __has_include("opt.h").
// A header created later where the compile once looked (a/h.h, then
// b/opt.h, then a/opt.h) changes what plain clang builds; offload-build must
// build the same program every time: the launcher's whole entry and its
// per-job entries, a manifest build's no-op record, its up-to-date check, and
// a clean build from the cache.
#include <catch2/catch.hpp>

#include <chrono>

#include "integration/launcher_support.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const char* kSource = R"(#include <stdio.h>
#include "h.h"
#if __has_include("opt.h")
#include "opt.h"
#else
#define OPT 0
#endif
int main(void) {
  int v = 0;
#pragma omp target map(tofrom: v)
  v = V + OPT;
  printf("v=%d\n", v);
  return 0;
}
)";

const Env kMandatory{{"OMP_TARGET_OFFLOAD", "MANDATORY"}};

// Written an hour ago: a file modified within 2 s of a build's start keeps it
// from leaving a no-op record (the record would then not be tested).
void write_old(const fs::path& p, const std::string& text) {
  write_file(p, text);
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(p, old);
  fs::last_write_time(p.parent_path(), old);
}

// The tree every test starts from: k.c, a/ (empty) and b/h.h in `dir`.
void write_tree(const fs::path& dir) {
  write_old(dir / "k.c", kSource);
  write_old(dir / "b/h.h", "#define V 10\n");
  fs::create_directories(dir / "a");
  write_old(dir / "a/.keep", "");
}

// What plain clang's program prints, built from `dir` as it is now.
std::string plain_clang_prints(const fs::path& dir) {
  auto built = run_tool({kClang, "-fopenmp", kHostTargets, "-Ia", "-Ib", "k.c", "-o", "plain"}, dir);
  INFO(built.err);
  REQUIRE(built.exit_code == 0);
  auto ran = run_tool({(dir / "plain").string()}, dir, kMandatory);
  REQUIRE(ran.exit_code == 0);
  return ran.out;
}

// The launcher compiles k.c to k.o (with --explain: no whole entry, each job
// asked on its own); clang links it; what the program prints.
std::string launcher_prints(const Launcher& l, bool explain, std::string* err = nullptr) {
  Env env;
  if (explain) env.emplace_back("OFFLOAD_BUILD_EXPLAIN", "1");
  auto compiled = l.ob({kClang, "-fopenmp", kHostTargets, "-Ia", "-Ib", "-c", "k.c", "-o", "k.o"}, env);
  INFO(compiled.err);
  REQUIRE(compiled.exit_code == 0);
  if (err) *err = compiled.err;
  auto linked = l.cc({kClang, "-fopenmp", kHostTargets, "k.o", "-o", "k"});
  REQUIRE(linked.exit_code == 0);
  auto ran = l.cc({(l.tmp / "k").string()}, kMandatory);
  REQUIRE(ran.exit_code == 0);
  return ran.out;
}

int count(const nlohmann::json& stats, const char* name) { return stats.value(name, 0); }

}  // namespace

TEST_CASE("a header created where a launcher compile looked is not served from its whole entry",
          "[launcher][integration][whole][lookups]") {
  Launcher l;
  write_tree(l.tmp.path());
  REQUIRE(plain_clang_prints(l.tmp.path()) == "v=10\n");
  CHECK(launcher_prints(l, false) == "v=10\n");
  CHECK(launcher_prints(l, false) == "v=10\n");
  REQUIRE(count(l.stats(), "whole_compiles") == 1);  // the whole entry is used

  write_file(l.tmp / "a/h.h", "#define V 20\n");  // found before b/h.h now
  REQUIRE(plain_clang_prints(l.tmp.path()) == "v=20\n");
  CHECK(launcher_prints(l, false) == "v=20\n");
  CHECK(count(l.stats(), "whole_compiles") == 1);

  CHECK(launcher_prints(l, false) == "v=20\n");  // stored again, with a/h.h
  CHECK(count(l.stats(), "whole_compiles") == 2);
  write_file(l.tmp / "b/opt.h", "#define OPT 5\n");  // __has_include says yes now
  REQUIRE(plain_clang_prints(l.tmp.path()) == "v=25\n");
  CHECK(launcher_prints(l, false) == "v=25\n");
  CHECK(count(l.stats(), "whole_compiles") == 2);
}

TEST_CASE("a header created where a launcher compile looked is not served from its jobs' entries",
          "[launcher][integration][lookups]") {
  Launcher l;
  write_tree(l.tmp.path());
  CHECK(launcher_prints(l, true) == "v=10\n");
  std::string err;
  CHECK(launcher_prints(l, true, &err) == "v=10\n");
  CHECK(count_occurrences(err, ": hit") >= 3);

  write_file(l.tmp / "a/h.h", "#define V 20\n");
  REQUIRE(plain_clang_prints(l.tmp.path()) == "v=20\n");
  CHECK(launcher_prints(l, true, &err) == "v=20\n");
  INFO(err);
  CHECK_THAT(err, Catch::Contains("miss: file appeared: ") && Catch::Contains("a/h.h"));

  write_file(l.tmp / "b/opt.h", "#define OPT 5\n");
  REQUIRE(plain_clang_prints(l.tmp.path()) == "v=25\n");
  CHECK(launcher_prints(l, true, &err) == "v=25\n");
  CHECK_THAT(err, Catch::Contains("miss: file appeared: ") && Catch::Contains("b/opt.h"));
}

TEST_CASE(
    "a header created where a manifest build looked is seen by its no-op record and up-to-date check and by a clean build",
    "[integration][noop][lookups]") {
  TempDir tmp("ob-lookups");
  const fs::path dir = tmp / "p";
  write_tree(dir);
  write_old(dir / "offload.json",
            R"({"name": "hm", "sources": ["k.c"], "targets": ["host"], "include_dirs": ["a", "b"]})");
  const fs::path cache = tmp / "cache";
  const fs::path record = dir / "build/.offload-build/noop";
  auto build = [&] {
    auto r = run_ob({"-C", dir.string(), "build"}, {}, {{"OFFLOAD_BUILD_CACHE_DIR", cache.string()}});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.err;
  };
  auto prints = [&] {
    auto ran = run_tool({(dir / "build/hm").string()}, dir, kMandatory);
    REQUIRE(ran.exit_code == 0);
    return ran.out;
  };
  auto all_up_to_date = [](const std::string& err) {
    return err.find(" jobs: 0 from cache, 0 run, ") != std::string::npos;
  };

  build();
  CHECK(prints() == "v=10\n");
  REQUIRE(all_up_to_date(build()));
  REQUIRE(fs::exists(record));  // the next plain build is a no-op unless something changed

  SECTION("the no-op record") {
    write_old(dir / "a/h.h", "#define V 20\n");
    REQUIRE(plain_clang_prints(dir) == "v=20\n");
    const std::string err = build();
    CHECK_FALSE(all_up_to_date(err));
    CHECK(prints() == "v=20\n");
  }

  SECTION("the up-to-date check and a clean build from the cache") {
    fs::remove(record);  // each job's own check
    write_old(dir / "a/h.h", "#define V 20\n");
    REQUIRE(plain_clang_prints(dir) == "v=20\n");
    std::string err = build();
    CHECK_FALSE(all_up_to_date(err));
    CHECK(prints() == "v=20\n");

    build();  // current again
    fs::remove(record);
    write_old(dir / "b/opt.h", "#define OPT 5\n");
    REQUIRE(plain_clang_prints(dir) == "v=25\n");
    err = build();
    CHECK_FALSE(all_up_to_date(err));
    CHECK(prints() == "v=25\n");

    // A fresh build directory, the same cache: a/opt.h now shadows b/opt.h.
    write_old(dir / "a/opt.h", "#define OPT 7\n");
    REQUIRE(plain_clang_prints(dir) == "v=27\n");
    fs::remove_all(dir / "build");
    err = build();
    CHECK(err.find(" jobs: 5 from cache,") == std::string::npos);
    CHECK(prints() == "v=27\n");
  }
}

// An include directory that is a symlink loop: the lookup fails with ELOOP,
// which clang takes for "not there" as it does ENOENT. Made a real directory
// holding the header later, it must be seen, as plain clang sees it.
TEST_CASE("an include directory that was a symlink loop and became a directory with the header is seen",
          "[launcher][integration][lookups]") {
  const bool whole = GENERATE(true, false);
  DYNAMIC_SECTION((whole ? "the whole entry" : "the jobs' entries")) {
    Launcher l;
    write_tree(l.tmp.path());
    fs::remove_all(l.tmp / "a");
    fs::create_directory_symlink("a", l.tmp / "a");  // a -> a: ELOOP
    REQUIRE(plain_clang_prints(l.tmp.path()) == "v=10\n");
    CHECK(launcher_prints(l, !whole) == "v=10\n");
    CHECK(launcher_prints(l, !whole) == "v=10\n");  // served

    fs::remove(l.tmp / "a");
    write_file(l.tmp / "a/h.h", "#define V 20\n");
    REQUIRE(plain_clang_prints(l.tmp.path()) == "v=20\n");
    CHECK(launcher_prints(l, !whole) == "v=20\n");
  }
}

TEST_CASE("a manifest build whose include directory was a symlink loop sees the header that appeared there",
          "[integration][noop][lookups]") {
  TempDir tmp("ob-lookups-eloop");
  const fs::path dir = tmp / "p";
  write_tree(dir);
  fs::remove_all(dir / "a");
  fs::create_directory_symlink("a", dir / "a");
  write_old(dir / "offload.json",
            R"({"name": "hm", "sources": ["k.c"], "targets": ["host"], "include_dirs": ["a", "b"]})");
  auto build = [&] {
    auto r = run_ob({"-C", dir.string(), "build"}, {}, {{"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()}});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto ran = run_tool({(dir / "build/hm").string()}, dir, kMandatory);
    REQUIRE(ran.exit_code == 0);
    return ran.out;
  };
  CHECK(build() == "v=10\n");
  CHECK(build() == "v=10\n");
  fs::remove(dir / "a");
  write_old(dir / "a/h.h", "#define V 20\n");
  REQUIRE(plain_clang_prints(dir) == "v=20\n");
  CHECK(build() == "v=20\n");  // the no-op record
  fs::remove(dir / "build/.offload-build/noop");
  write_old(dir / "a/h.h", "#define V 30\n");
  CHECK(build() == "v=30\n");  // the up-to-date check
  fs::remove_all(dir / "build");
  CHECK(build() == "v=30\n");  // a clean build from the cache
}
