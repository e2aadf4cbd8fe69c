// Issue 13, each problem reproduced then checked fixed: a cache another user
// can write is not trusted (the two-user cases run the second user through
// `setpriv --reuid=nobody`, as the tests run as root here), restored outputs
// never carry special bits, malformed metadata is a corrupt entry, entries are
// signed and bound to their key, symlinks in the cache are not followed, any
// file name works, globs stay inside the project, stale temporaries go, and
// messages stay short.
#include <catch2/catch.hpp>

#include "support/cache_stats.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include <nlohmann/json.hpp>

#include "offload_build/storage/storage.hpp"
#include "support/other_user.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"
#include "support/skip.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kSaxpyOk = "saxpy: n=1048576 y[10]=21.000000 max_err=0 OK\non_device=yes\n";

process::Captured build(const fs::path& dir, const fs::path& cache, Env env = {},
                     std::vector<std::string> extra = {}) {
  return build_project(dir, cache, std::move(extra), std::move(env));
}

void check_runs(const fs::path& program) {
  auto r = run_tool({program.string()}, program.parent_path(), {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == kSaxpyOk);
}

std::vector<fs::path> entries(const fs::path& cache, const std::string& kind) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache / "v1" / kind, ec), end; !ec && it != end; ++it)
    if (it->is_regular_file() && it->path().filename().string().find(".tmp.") == std::string::npos)
      out.push_back(it->path());
  return out;
}

// The result entry holding the linked program (its one file is named "saxpy").
fs::path link_entry(const fs::path& cache) {
  for (const auto& p : entries(cache, "result")) {
    auto e = storage::decode_entry(read_file(p), "result", p.filename().string());
    if (e && !e->files.empty() && e->files.front().name == "saxpy") return p;
  }
  FAIL("no link entry in " << cache);
  return {};
}

// Rewrite an entry's metadata with a valid checksum, as a writer of the cache could.
void rewrite_metadata(const fs::path& entry, const std::string& metadata) {
  const std::string key = entry.filename().string();
  auto e = storage::decode_entry(read_file(entry), "result", key);
  REQUIRE(e.ok());
  e->metadata = metadata;
  write_file(entry, storage::encode_entry(*e, "result", key));
}


std::vector<std::string> as_nobody(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"});
  return argv;
}

}  // namespace

TEST_CASE("a cache directory another user could write is not used", "[integration][cache][trust]") {
  if (geteuid() != 0) OB_SKIP("needs root to act as a second user");
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  fs::permissions(tmp.path(), fs::perms(0755));

  SECTION("a /tmp-style 1777 directory whose v1/ another user made first") {
    fs::path cache = tmp / "shared";
    fs::create_directories(cache);
    fs::permissions(cache, fs::perms(01777));
    auto mk = run_tool(as_nobody({"mkdir", (cache / "v1").string()}));
    REQUIRE(mk.exit_code == 0);
    auto r = build(dir, cache);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(count_occurrences(r.err, "warning: not using cache directory") == 1);
    CHECK_THAT(r.err, Catch::Contains("writable by every user"));
    CHECK_THAT(r.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
    CHECK(entries(cache, "result").empty());  // nothing of ours written where others write
    check_runs(dir / "build/saxpy");
  }
  SECTION("a group-writable cache without the shared-cache setting") {
    fs::path cache = tmp / "cache";
    REQUIRE(build(dir, cache).exit_code == 0);
    fs::permissions(cache / "v1", fs::perms(0775));
    fs::remove_all(dir / "build");
    auto r = build(dir, cache);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("v1 is writable by its group") &&
                          Catch::Contains("OFFLOAD_BUILD_CACHE_UMASK"));
    CHECK_THAT(r.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
    // Opting in (a group-shared cache with an explicit umask) trusts it again.
    fs::remove_all(dir / "build");
    auto shared = build(dir, cache, {{"OFFLOAD_BUILD_CACHE_UMASK", "002"}});
    INFO(shared.err);
    CHECK_THAT(shared.err, Catch::Contains("5 jobs: 5 from cache, 0 run"));
    CHECK(count_occurrences(shared.err, "warning") == 0);
  }
  SECTION("an entry file owned by another user is refused and replaced") {
    fs::path cache = tmp / "cache";
    REQUIRE(build(dir, cache).exit_code == 0);
    const fs::path entry = link_entry(cache);
    REQUIRE(::chown(entry.c_str(), 65534, 65534) == 0);
    fs::remove_all(dir / "build");
    auto r = build(dir, cache, {}, {"--explain"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("4 from cache, 1 run"));
    struct stat st {};
    REQUIRE(::stat(entry.c_str(), &st) == 0);
    CHECK(st.st_uid == 0);  // rebuilt and stored by us
  }
}

TEST_CASE("a restored output never carries special bits, and malformed metadata is a corrupt entry",
          "[integration][cache][trust]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  fs::path cache = tmp / "cache";
  REQUIRE(build(dir, cache).exit_code == 0);
  const fs::path entry = link_entry(cache);
  const std::string original = read_file(entry);
  const std::string job = nlohmann::json::parse(
      storage::decode_entry(original, "result", entry.filename().string())->metadata)["job"];

  SECTION("mode 07777 recorded in a valid entry") {
    rewrite_metadata(entry, nlohmann::json{{"job", job}, {"modes", {07777}}}.dump());
    fs::remove_all(dir / "build");
    auto r = build(dir, cache);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("5 from cache"));
    struct stat st {};
    REQUIRE(::stat((dir / "build/saxpy").c_str(), &st) == 0);
    const mode_t mask = ::umask(0);
    ::umask(mask);
    CHECK((st.st_mode & 07777) == (0777 & ~mask));  // executable, as a fresh link makes it
    check_runs(dir / "build/saxpy");
  }
  for (const std::string meta : {R"({"job":"J","modes":["rwx"]})", R"({"job":"J","modes":[-1]})",
                                 R"({"job":"J","modes":[493],"diagnostics":"yes"})",
                                 R"({"job":"J","modes":[493,493]})", R"({"job":"J","modes":[493],"jobs":1})",
                                 R"({"job":"J","modes":[493],"jobs":-4})", R"({"job":"J","modes":[493],"jobs":1e12})",
                                 "not json at all"}) {
    SECTION("metadata " + meta) {
      rewrite_metadata(entry, meta);
      const int corrupt_before = cache_stats(cache)["corrupt"].get<int>();
      fs::remove_all(dir / "build");
      auto r = build(dir, cache, {}, {"--explain"});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK_THAT(r.err, Catch::Contains("4 from cache, 1 run"));
      CHECK(count_occurrences(r.err, "miss: the cache entry was corrupt") == 1);
      CHECK(cache_stats(cache)["corrupt"].get<int>() == corrupt_before + 1);
      check_runs(dir / "build/saxpy");
      auto v = run_ob({"--cache-dir", cache.string(), "cache", "verify"});
      CHECK(v.exit_code == 0);  // replaced by a sound one
    }
  }
  SECTION("cache verify checks metadata") {
    rewrite_metadata(entry, R"({"job":"J","modes":["rwx"]})");
    auto v = run_ob({"--cache-dir", cache.string(), "cache", "verify"});
    CHECK(v.exit_code == 1);
    CHECK_THAT(v.out, Catch::Contains("bad metadata: a mode is not a number"));
  }
}

TEST_CASE("with a signing key, entries not signed with it are refused",
          "[integration][cache][trust]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  fs::path cache = tmp / "cache";
  const Env k1{{"OFFLOAD_BUILD_SIGNING_KEY", "first secret"}};
  REQUIRE(build(dir, cache, k1).exit_code == 0);

  SECTION("another key: every entry is refused, counted and rebuilt") {
    const Env k2{{"OFFLOAD_BUILD_SIGNING_KEY", "second secret"}};
    auto v = run_ob({"--cache-dir", cache.string(), "cache", "verify"}, {}, k2);
    CHECK(v.exit_code == 1);
    CHECK(count_occurrences(v.out, "signature mismatch") >= 5);
    fs::remove_all(dir / "build");
    auto r = build(dir, cache, k2);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
    CHECK(cache_stats(cache)["corrupt"].get<int>() >= 5);
    check_runs(dir / "build/saxpy");
    CHECK(run_ob({"--cache-dir", cache.string(), "cache", "verify"}, {}, k2).exit_code == 0);
  }
  SECTION("the key from a file; an unsigned entry is refused") {
    write_file(tmp / "key", "first secret\n");
    const Env from_file{{"OFFLOAD_BUILD_SIGNING_KEY_FILE", (tmp / "key").string()}};
    fs::remove_all(dir / "build");
    CHECK_THAT(build(dir, cache, from_file).err, Catch::Contains("5 jobs: 5 from cache, 0 run"));
    // Re-encoded without a key (the checksum valid): refused.
    const fs::path entry = link_entry(cache);
    rewrite_metadata(entry, storage::decode_entry(read_file(entry), "result",
                                                entry.filename().string())->metadata);
    auto v = run_ob({"--cache-dir", cache.string(), "cache", "verify"}, {}, from_file);
    CHECK_THAT(v.out, Catch::Contains("not signed"));
    fs::remove_all(dir / "build");
    CHECK_THAT(build(dir, cache, from_file).err, Catch::Contains("4 from cache, 1 run"));
  }
  SECTION("a well-formed entry moved under another key is refused") {
    const fs::path link = link_entry(cache);
    for (const auto& p : entries(cache, "result"))
      if (p != link) fs::copy_file(link, p, fs::copy_options::overwrite_existing);
    fs::remove_all(dir / "build");
    auto r = build(dir, cache, k1);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("1 from cache, 4 run"));
    check_runs(dir / "build/saxpy");
  }
}

TEST_CASE("symlinks planted in the cache directory are never followed",
          "[integration][cache][trust]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  fs::path cache = tmp / "cache";
  fs::create_directories(tmp / "elsewhere");

  SECTION("a dangling stats.lock") {
    fs::create_directories(cache);
    fs::create_symlink(tmp / "elsewhere/created", cache / "stats.lock");
    REQUIRE(build(dir, cache).exit_code == 0);
    CHECK_FALSE(fs::exists(tmp / "elsewhere/created"));
  }
  for (const char* link : {"v1", "v1/result"}) {
    SECTION(std::string("a symlinked ") + link) {
      fs::create_directories((cache / link).parent_path());
      fs::create_symlink(tmp / "elsewhere", cache / link);
      auto r = build(dir, cache);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK_THAT(r.err, Catch::Contains("is a symbolic link"));
      CHECK(fs::is_empty(tmp / "elsewhere"));
      check_runs(dir / "build/saxpy");
    }
  }
}

TEST_CASE("file and directory names that are not UTF-8 build, report and cache",
          "[integration][utf8]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp / "d\xffir");
  fs::rename(dir / "saxpy.c", dir / "bad\xffname.c");
  write_file(dir / "offload.json", R"({"name": "saxpy", "output": "saxpy", "sources": ["*.c"],
    "targets": ["host"], "flags": ["-O2"], "libs": ["m"]})");
  fs::path cache = tmp / "cache";
  auto dry = run_ob({"-C", dir.string(), "--cache-dir", cache.string(), "--dry-run", "build"});
  INFO(dry.err);
  CHECK(dry.exit_code == 0);
  auto r = run_ob({"-C", dir.string(), "--cache-dir", cache.string(), "--report",
                   (tmp / "report.json").string(), "build", "--compdb"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  check_runs(dir / "build/saxpy");
  // Reports are valid JSON; the name's invalid byte is U+FFFD there.
  auto report = nlohmann::json::parse(read_file(tmp / "report.json"));
  CHECK_THAT(report.dump(), Catch::Contains("bad\xEF\xBF\xBDname.c"));
  CHECK_NOTHROW(nlohmann::json::parse(read_file(dir / "build/compile_commands.json")));
  fs::remove_all(dir / "build");
  CHECK_THAT(build(dir, cache).err, Catch::Contains("5 jobs: 5 from cache, 0 run"));

  SECTION("launcher mode compiles what clang compiles") {
    fs::copy_file(dir / "bad\xffname.c", tmp / "k\xff.c");
    auto l = run_tool({OB_BINARY, fs::path(kLlvmBin) / "clang", "-fopenmp",
                       "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", "k\xff.c", "-o", "k.o"},
                      tmp.path());
    INFO(l.err);
    CHECK(l.exit_code == 0);
    CHECK(fs::file_size(tmp / "k.o") > 0);
  }
}

TEST_CASE("a glob reaching outside the project is an error", "[integration][glob]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp / "p");
  for (const char* pattern : {"/**", "../../**", "src/*/../../../*.c"}) {
    write_file(dir / "offload.json", std::string(R"({"name": "s", "sources": [")") + pattern +
                                         R"("], "targets": ["host"]})");
    auto r = run_ob({"-C", dir.string(), "--dry-run", "build"});
    INFO(pattern << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("reaches outside the project directory"));
  }
}

TEST_CASE("temporaries of dead builds are swept, messages stay short, a cache path that is a file is named",
          "[integration][ux]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  REQUIRE(build(dir, tmp / "cache").exit_code == 0);
  // A pid that is surely dead: a child we waited for.
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string stale = ".saxpy.ob-tmp-" + std::to_string(dead) + "-4";
  write_file(dir / "build" / stale, "partial");
  write_file(dir / "build" / (stale + "-1a2b3c.tmp"), "clang's own");
  const std::string live = ".saxpy.ob-tmp-" + std::to_string(getpid()) + "-4";
  write_file(dir / "build" / live, "a running build's");
  REQUIRE(build(dir, tmp / "cache").exit_code == 0);
  CHECK_FALSE(fs::exists(dir / "build" / stale));
  CHECK_FALSE(fs::exists(dir / "build" / (stale + "-1a2b3c.tmp")));
  CHECK(fs::exists(dir / "build" / live));

  write_file(tmp / "plain", "a file\n");
  for (const char* sub : {"verify", "stats"}) {
    auto r = run_ob({"--cache-dir", (tmp / "plain").string(), "cache", sub});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out + r.err, Catch::Contains("is not a directory"));
  }

  write_file(dir / "offload.json", R"({"name": "s", "sources": ["saxpy.c"], "targets": [")" +
                                       std::string(100000, 'x') + R"("]})");
  auto r = run_ob({"-C", dir.string(), "--dry-run", "build"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.size() < 4000);
  CHECK_THAT(r.err, Catch::Contains("bytes)"));
}

TEST_CASE("an internal error in launcher mode runs the compiler unchanged, counted",
          "[integration][launcher][fallback]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  write_file(dir / "broken.c", "int main(void) { return x; }\n");
  const fs::path cache = tmp / "cache";
  auto compile = [](const std::string& src, const std::string& out) {
    return std::vector<std::string>{(fs::path(kLlvmBin) / "clang").string(), "-fopenmp",
                                    "-fopenmp-targets=x86_64-unknown-linux-gnu", "-O2", "-c",
                                    src, "-o", out};
  };
  // The test hook makes launcher mode throw before it splits anything.
  auto through_ob = [&](const std::string& src, const std::string& out, bool verbose) {
    auto argv = compile(src, out);
    argv.insert(argv.begin(), OB_BINARY);
    return run_tool(argv, dir, {{"OFFLOAD_BUILD_CACHE_DIR", cache.string()},
                                {"OFFLOAD_BUILD_TEST_HOOK_INTERNAL_ERROR", "1"},
                                {"OFFLOAD_BUILD_VERBOSE", verbose ? "1" : "0"}});
  };
  auto ref = run_tool(compile("saxpy.c", "ref.o"), dir);
  REQUIRE(ref.exit_code == 0);
  auto got = through_ob("saxpy.c", "got.o", false);
  INFO(got.err);
  REQUIRE(got.exit_code == 0);
  // The compiler's own object, byte for byte (a split compile preloads the
  // stable-names library), and its own (empty) output.
  CHECK(read_file(dir / "got.o") == read_file(dir / "ref.o"));
  CHECK(got.err == ref.err);
  auto s = cache_stats(cache);
  CHECK(s["unchanged_by_reason"] == nlohmann::json{{"internal error", 1}});
  CHECK(s["misses"] == 0);  // nothing was split
  CHECK(s["entries"] == 0);

  // Under -v the reason is said; a failing compile fails as the compiler does.
  auto ref_bad = run_tool(compile("broken.c", "ref-bad.o"), dir);
  auto bad = through_ob("broken.c", "got-bad.o", true);
  CHECK(ref_bad.exit_code == 1);
  CHECK(bad.exit_code == ref_bad.exit_code);
  CHECK_THAT(bad.err, Catch::Contains("running the compiler unchanged: internal error: "
                                      "OFFLOAD_BUILD_TEST_HOOK_INTERNAL_ERROR is set"));
  CHECK_THAT(bad.err, Catch::Contains("use of undeclared identifier 'x'"));
  CHECK(cache_stats(cache)["unchanged_by_reason"] == nlohmann::json{{"internal error", 2}});
}

TEST_CASE("a SIGTERM sent to the launcher alone reaches the command it runs unchanged",
          "[integration][launcher][signals]") {
  TempDir tmp;
  const fs::path ready = tmp / "ready", got = tmp / "got";
  // Not a compiler: run unchanged. It says when it waits, and what ended it.
  const std::string script = "trap 'echo term > " + got.string() + "; kill $s; exit 143' TERM\n"
                             "sleep 1000 & s=$!\necho > " + ready.string() + "\nwait\n";
  process::Command cmd{{OB_BINARY, "/bin/sh", "-c", script}, tmp.path(),
                       {{"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()}}};
  const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  auto pid = process::spawn(cmd, process::Stdio{devnull, devnull, devnull});
  close(devnull);
  REQUIRE(pid.ok());
  // (At most 60 s each: a bound on a hang, not reached when it works.)
  auto wait_for = [](const fs::path& file) {
    for (int i = 0; i < 1200 && !fs::exists(file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return fs::exists(file);
  };
  REQUIRE(wait_for(ready));
  kill(*pid, SIGTERM);  // offload-build's pid only, not its process group
  const bool reached = wait_for(got);
  if (!reached) kill(*pid, SIGKILL);
  CHECK(reached);
  CHECK(process::wait_exit_code(*pid) == 143);  // the command's own exit code
  if (reached) CHECK(read_file(got) == "term\n");
}

TEST_CASE("cache stats and verify on a read-only cache whose v1 is a symlink say so",
          "[integration][cache][trust]") {
  TempDir tmp;
  fs::permissions(tmp.path(), fs::perms(0755));
  fs::path dir = copy_example("saxpy-c", tmp.path());
  const fs::path real = tmp / "real";
  REQUIRE(build(dir, real).exit_code == 0);  // the entries the symlink leads to
  const size_t stored = entries(real, "result").size();
  REQUIRE(stored > 0);
  const fs::path cache = tmp / "cache";
  fs::create_directories(cache);
  fs::create_symlink(real / "v1", cache / "v1");
  fs::permissions(cache, fs::perms(0555));
  const bool root = geteuid() == 0;  // root writes anywhere: look as nobody
  const OtherUser nobody(tmp.path());  // a copy nobody can run (the checkout may be 0700)
  if (root && !nobody.skip.empty()) OB_SKIP(nobody.skip);
  auto look = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {nobody.binary.string(), "--cache-dir", cache.string(), "cache"});
    return run_tool(root ? as_nobody(args) : args);
  };
  auto s = look({"stats"});
  INFO(s.out << s.err);
  CHECK(s.exit_code == 0);
  CHECK_THAT(s.out, Catch::Contains("warning: builds do not use this cache: v1 is a symbolic link"));
  CHECK_THAT(s.out, Catch::Contains("\nentries                 0\n"));  // not those behind it
  auto j = look({"stats", "--json"});
  REQUIRE(j.exit_code == 0);
  auto parsed = nlohmann::json::parse(j.out);
  CHECK(parsed["entries"] == 0);
  CHECK(parsed["not_used"] == "v1 is a symbolic link");
  auto v = look({"verify"});
  INFO(v.out << v.err);
  CHECK(v.exit_code == 1);
  CHECK_THAT(v.out, Catch::Contains("v1 is a symbolic link: not followed, no entry checked"));
  CHECK_THAT(v.out, !Catch::Contains("0 corrupt"));
  CHECK(fs::is_symlink(cache / "v1"));
  CHECK(entries(real, "result").size() == stored);
  fs::permissions(cache, fs::perms(0755));  // for TempDir's removal
}
