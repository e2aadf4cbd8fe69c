// The cache under damage and pressure, seen from whole builds: corrupt
// entries, concurrent builds, builds killed mid-store, caches that are
// read-only or cannot be created. In every case the build succeeds (or is
// killed) and the program that comes out runs correctly.
#include <catch2/catch.hpp>

#include "support/cache_stats.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <set>
#include <csignal>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/other_user.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"
#include "support/skip.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kSaxpyOk = "saxpy: n=1048576 y[10]=21.000000 max_err=0 OK\non_device=yes\n";

std::vector<fs::path> entry_files(const fs::path& cache) {
  std::vector<fs::path> files;
  if (!fs::exists(cache / "v1")) return files;
  for (const auto& e : fs::recursive_directory_iterator(cache / "v1"))
    if (e.is_regular_file() && e.path().filename().string().find(".tmp.") == std::string::npos)
      files.push_back(e.path());
  return files;
}


// `cache verify` decodes every entry: exit 0 when all are sound.
void require_all_entries_sound(const fs::path& cache) {
  auto v = run_ob({"--cache-dir", cache.string(), "cache", "verify"});
  INFO(v.out << v.err);
  REQUIRE(v.exit_code == 0);
  CHECK_THAT(v.out, Catch::Contains(" 0 corrupt"));
}

process::Captured build(const fs::path& dir, const fs::path& cache, std::vector<std::string> extra = {}) {
  return build_project(dir, cache, std::move(extra));
}

void check_saxpy_runs(const fs::path& dir) {
  auto r = run_tool({(dir / "build/saxpy").string()}, dir, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == kSaxpyOk);
}

}  // namespace

TEST_CASE("corrupt cache entries are counted misses and replaced and never served",
          "[integration][cache]") {
  struct Damage {
    const char* name;
    std::function<void(const fs::path&)> apply;
  };
  const std::vector<Damage> damages = {
      {"flip a byte", [](const fs::path& f) {
         std::string d = read_file(f);
         d[d.size() / 2] ^= 0x20;
         write_file(f, d);
       }},
      {"truncate", [](const fs::path& f) { fs::resize_file(f, fs::file_size(f) / 2); }},
      {"zero the file", [](const fs::path& f) { write_file(f, std::string(fs::file_size(f), '\0')); }},
      {"change the version field", [](const fs::path& f) {
         std::string d = read_file(f);
         d[8] = static_cast<char>(d[8] + 1);  // after the 8-byte magic
         write_file(f, d);
       }},
  };
  for (const auto& damage : damages) {
    SECTION(damage.name) {
      TempDir tmp;
      fs::path dir = copy_example("saxpy-c", tmp.path());
      fs::path cache = tmp / "cache";
      REQUIRE(build(dir, cache).exit_code == 0);
      auto files = entry_files(cache);
      REQUIRE(files.size() >= 5);  // host-ir, device, package, host, link
      for (const auto& f : files) damage.apply(f);
      auto before = cache_stats(cache);

      fs::remove_all(dir / "build");
      auto r = build(dir, cache, {"--explain"});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(count_occurrences(r.err, ": hit") == 0);
      CHECK(count_occurrences(r.err, "miss: the cache entry was corrupt") == 5);
      auto after = cache_stats(cache);
      CHECK(after["corrupt"].get<int>() - before["corrupt"].get<int>() == 5);
      CHECK(after["misses_by_reason"]["corrupt"].get<int>() -
                before["misses_by_reason"].value("corrupt", 0) == 5);
      check_saxpy_runs(dir);

      // The damaged entries were replaced: the next clean build is all hits.
      fs::remove_all(dir / "build");
      auto again = build(dir, cache);
      CHECK_THAT(again.err, Catch::Contains("5 jobs: 5 from cache, 0 run"));
      check_saxpy_runs(dir);
      require_all_entries_sound(cache);
    }
  }
}

TEST_CASE("8 concurrent builds of one project on one cache all succeed", "[integration][cache]") {
  TempDir tmp;
  fs::path cache = tmp / "cache";
  std::vector<fs::path> dirs;
  for (int i = 0; i < 8; ++i) {
    // Half of them share one project directory, half have their own copy.
    if (i < 4) dirs.push_back(i == 0 ? copy_example("vector-cxx", tmp / "shared") : dirs[0]);
    else dirs.push_back(copy_example("vector-cxx", tmp / ("own" + std::to_string(i))));
  }
  std::vector<pid_t> pids;
  for (const auto& dir : dirs) {
    process::Command cmd{{OB_BINARY, "-C", dir.string(), "--cache-dir", cache.string(), "-j", "2", "build"},
                {}, {{"OMP_NUM_THREADS", std::nullopt}}};
    int devnull = open("/dev/null", O_WRONLY);
    auto pid = process::spawn(cmd, process::Stdio{-1, devnull, devnull});
    close(devnull);
    REQUIRE(pid.ok());
    pids.push_back(*pid);
  }
  for (pid_t pid : pids) CHECK(process::wait_exit_code(pid) == 0);
  for (const auto& dir : std::set<fs::path>(dirs.begin(), dirs.end())) {
    auto r = run_tool({(dir / "build/vector").string()}, dir, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("vector-cxx: all OK"));
  }
  require_all_entries_sound(cache);
  auto s = cache_stats(cache);
  CHECK(s["corrupt"].get<int>() == 0);
  // 3 TUs x (host-ir, device, package, host) + link = 13 jobs per build.
  CHECK(s["hits"].get<int>() + s["misses"].get<int>() == 8 * 13);
}

TEST_CASE("builds killed with SIGKILL while storing never leave a bad entry",
          "[integration][cache]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  fs::path cache = tmp / "cache";
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> delay_ms(50, 900);
  int killed_running = 0;
  for (int i = 0; i < 50; ++i) {
    // A new define each round: every compile misses and stores again.
    write_file(dir / "offload.json",
               R"({"name": "saxpy", "sources": ["saxpy.c"], "targets": ["host"], "flags": ["-O2"],
                   "libs": ["m"], "defines": ["ROUND=)" + std::to_string(i) + R"("]})");
    process::Command cmd{{OB_BINARY, "-C", dir.string(), "--cache-dir", cache.string(), "build"}, {}, {}};
    int devnull = open("/dev/null", O_WRONLY);
    auto pid = process::spawn(cmd, process::Stdio{-1, devnull, devnull});
    close(devnull);
    REQUIRE(pid.ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    if (kill(*pid, SIGKILL) == 0) ++killed_running;
    process::wait_exit_code(*pid);
    // Orphaned compilers of the killed build may still be finishing; that is fine.
    require_all_entries_sound(cache);
  }
  WARN("crash safety: " << killed_running << " of 50 builds were killed while running");
  CHECK(killed_running > 25);
  // Whatever the kills left, a full build now is served correctly. An
  // orphaned compiler may still be removing its temporaries while the tree is
  // walked (remove_all then fails on a file gone meanwhile): walk it again.
  std::error_code ec;
  for (int k = 0; k < 100 && fs::exists(dir / "build"); ++k) fs::remove_all(dir / "build", ec);
  REQUIRE_FALSE(fs::exists(dir / "build"));
  auto r = build(dir, cache);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  check_saxpy_runs(dir);
  require_all_entries_sound(cache);
}

TEST_CASE("a cache that cannot be created or written never fails the build",
          "[integration][cache]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  write_file(tmp / "a-file", "not a directory\n");
  auto r = build(dir, tmp / "a-file/cache");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(count_occurrences(r.err, "offload-build: warning: cache directory") == 1);
  CHECK_THAT(r.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
  check_saxpy_runs(dir);
}

TEST_CASE("a read-only cache still serves hits with one warning", "[integration][cache]") {
  TempDir tmp;
  // Both builds run a copy of offload-build and its stable-names library that
  // nobody can reach (the checkout may be in a 0700 directory): a build that
  // cannot load the library keys on inodes and would find nothing.
  const OtherUser nobody(tmp.path());
  if (!nobody.skip.empty()) OB_SKIP(nobody.skip);
  fs::path dir = copy_example("saxpy-c", tmp.path());
  fs::path cache = tmp / "cache";
  {
    auto first = run_tool({nobody.binary.string(), "-C", dir.string(), "--cache-dir", cache.string(), "build"});
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
  }
  fs::remove_all(dir / "build");
  // Root writes anywhere: run the second build as nobody, for whom the cache
  // (owned by root, mode 0755) is read-only and the project is writable.
  const bool root = geteuid() == 0;
  fs::permissions(dir, fs::perms::all);
  fs::permissions(tmp.path(), fs::perms::all);
  for (const auto& e : fs::recursive_directory_iterator(cache))
    fs::permissions(e.path(), e.is_directory() ? fs::perms(0555) : fs::perms(0444));
  fs::permissions(cache, fs::perms(0555));
  std::vector<std::string> argv{nobody.binary.string(), "-C", dir.string(), "--cache-dir", cache.string(), "build"};
  if (root) argv.insert(argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  auto r = run_tool(argv);
  fs::permissions(cache, fs::perms::owner_all);
  if (root && r.exit_code != 0 && r.err.find("setpriv") != std::string::npos)
    OB_SKIP("cannot drop privileges with setpriv here: " << r.err);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(count_occurrences(r.err, "offload-build: warning: cache directory") == 1);
  CHECK_THAT(r.err, Catch::Contains("read-only") || Catch::Contains("not writable"));
  CHECK_THAT(r.err, Catch::Contains("5 jobs: 5 from cache, 0 run"));
  CHECK_THAT(r.err, !Catch::Contains("libob-stable-names.so"));  // it could load the library
  check_saxpy_runs(dir);
}

// Issue #32: a build that cannot reach the stable-names library (nobody
// running a binary in a 0700 checkout, a broken install) keys on inodes and
// shares no entry with builds that have it: it says so, once.
TEST_CASE("a build without its stable-names library says so once", "[integration][cache]") {
  TempDir tmp;
  const fs::path bin = tmp / "bin";
  fs::create_directories(bin);
  fs::copy_file(OB_BINARY, bin / "offload-build");  // the library left behind
  fs::path dir = copy_example("saxpy-c", tmp.path());
  auto r = run_tool({(bin / "offload-build").string(), "-C", dir.string(), "--cache-dir", (tmp / "cache").string(),
                     "build"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(count_occurrences(r.err, "warning: libob-stable-names.so is neither beside " +
                                     (bin / "offload-build").string()) == 1);
  CHECK_THAT(r.err, Catch::Contains("kernel names and cache keys use inodes"));
  check_saxpy_runs(dir);
}
