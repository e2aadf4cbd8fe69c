// cache::Storage: layout, atomic put/get, corruption handling, unwritable and
// read-only caches, LRU pruning, shared counters, sizes, and the cache commands.
//
// Read-only caches and root: these tests may run as root, for whom mode bits
// do not stop writes. Two techniques that work for any user are used instead:
//  * "cannot be created": the cache path lies under a regular FILE
//    (<tmp>/file/cache), so mkdir fails with ENOTDIR even for root;
//  * "readable but not writable": the tree is chmod 0555; when a probe shows
//    we can still write (root), the checks run in tests/tools/cache_tool.cpp
//    started with --as-nobody, which drops to uid/gid 65534 before opening
//    the cache. That helper also gives a fresh process for the
//    once-per-process warning.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "offload_build/storage/hash.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/cli/cache_command.hpp"
#include "offload_build/process/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "support/skip.hpp"

using namespace ob::storage;
using ob::test::TempDir;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

std::string random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

std::string key_of(const std::string& name) { return sha256_hex(name); }

Entry entry_with(const std::string& data) {
  return Entry{"meta:" + data.substr(0, 16), {{"out", data}}};
}

size_t count_in(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

std::vector<fs::path> files_named(const fs::path& dir, const std::string& part) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(part) != std::string::npos) out.push_back(e.path());
  return out;
}

// Redirects fd 2 to a file for its lifetime; text() restores and returns it.
class StderrCapture {
 public:
  explicit StderrCapture(fs::path file) : file_(std::move(file)) {
    std::fflush(stderr);
    saved_ = ::dup(2);
    int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StderrCapture() { restore(); }
  std::string text() {
    restore();
    return slurp(file_);
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  fs::path file_;
  int saved_ = -1;
};

ob::process::Captured run_cache_tool(std::vector<std::string> args) {
  args.insert(args.begin(), OB_CACHE_TOOL);
  auto r = ob::process::capture(ob::process::Command{std::move(args), {}, {}});
  REQUIRE(r.ok());
  return *r;
}

class EnvGuard {
 public:
  explicit EnvGuard(std::vector<std::string> names) {
    for (auto& n : names) {
      const char* v = std::getenv(n.c_str());
      saved_.emplace_back(n, v ? std::optional<std::string>(v) : std::nullopt);
    }
  }
  ~EnvGuard() {
    for (auto& [n, v] : saved_) {
      if (v)
        ::setenv(n.c_str(), v->c_str(), 1);
      else
        ::unsetenv(n.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

void set_env(const char* name, const char* value) {
  if (value)
    ::setenv(name, value, 1);
  else
    ::unsetenv(name);
}

}  // namespace

TEST_CASE("put then get round-trips through the documented layout", "[cache]") {
  TempDir tmp("ob-cache");
  Storage s(tmp / "c");
  REQUIRE(s.writable());
  std::string key = key_of("one");
  Entry e{R"({"exit":0})", {{"obj", random_bytes(5000, 1)}, {"log", "ok\n"}}};
  REQUIRE(s.put("result", key, e));

  fs::path expected = tmp.path() / "c" / "v1" / "result" / key.substr(0, 2) / key;
  CHECK(s.entry_path("result", key) == expected);
  CHECK(fs::is_regular_file(expected));
  CHECK(slurp(tmp / "c/CACHEDIR.TAG").rfind("Signature: 8a477f597d28d172789f06886806bc55\n", 0) ==
        0);
  CHECK(files_named(tmp / "c", ".tmp.").empty());  // no temp or probe file left

  Lookup l = s.get("result", key);
  REQUIRE(l.status == LookupStatus::Hit);
  CHECK(l.entry.metadata == e.metadata);
  REQUIRE(l.entry.files.size() == 2);
  CHECK(l.entry.files[0].name == "obj");
  CHECK(l.entry.files[0].data == e.files[0].data);
  CHECK(l.entry.files[1].data == "ok\n");

  // Kinds are separate namespaces; a second Storage sees the same entries.
  CHECK(s.get("manifest", key).status == LookupStatus::Missing);
  CHECK(Storage(tmp / "c").get("result", key).status == LookupStatus::Hit);
  CHECK(s.get("result", key_of("two")).status == LookupStatus::Missing);

  // Overwriting replaces.
  REQUIRE(s.put("result", key, entry_with("second")));
  CHECK(s.get("result", key).entry.files[0].data == "second");
  CHECK(s.usage().entries == 1);
  CHECK(s.usage().bytes == fs::file_size(expected));
}

TEST_CASE("keys and kinds that could escape the layout are refused", "[cache]") {
  TempDir tmp("ob-cache");
  Storage s(tmp / "c");
  CHECK(s.get("result", "../../etc").status == LookupStatus::Missing);
  CHECK_FALSE(s.put("result", "../x1", entry_with("x")));
  CHECK_FALSE(s.put("../r", key_of("a"), entry_with("x")));
  CHECK_FALSE(s.put("result", "ab", entry_with("x")));  // too short to shard
  CHECK_FALSE(s.put("", key_of("a"), entry_with("x")));
  CHECK(s.writable());  // a bad name is the caller's problem, not the cache's
  CHECK(s.usage().entries == 0);
}

TEST_CASE("a hit moves the entry's mtime to now (LRU clock)", "[cache]") {
  TempDir tmp("ob-cache");
  Storage s(tmp / "c");
  std::string key = key_of("lru");
  REQUIRE(s.put("result", key, entry_with("data")));
  fs::path p = s.entry_path("result", key);
  auto old = fs::file_time_type::clock::now() - std::chrono::hours(48);
  fs::last_write_time(p, old);
  REQUIRE(fs::last_write_time(p) < fs::file_time_type::clock::now() - std::chrono::hours(47));
  REQUIRE(s.get("result", key).status == LookupStatus::Hit);
  auto age = fs::file_time_type::clock::now() - fs::last_write_time(p);
  CHECK(age < std::chrono::minutes(1));
  CHECK(age > -std::chrono::minutes(1));
}

TEST_CASE("a corrupt entry on disk is reported, removed, then missing", "[cache]") {
  TempDir tmp("ob-cache");
  Storage s(tmp / "c");
  std::string key = key_of("corrupt");
  REQUIRE(s.put("result", key, entry_with(random_bytes(3000, 2))));
  fs::path p = s.entry_path("result", key);

  SECTION("one flipped byte") {
    std::string bytes = slurp(p);
    bytes[bytes.size() / 2] ^= 0x10;
    spit(p, bytes);
    Lookup l = s.get("result", key);
    CHECK(l.status == LookupStatus::Corrupt);
    CHECK(l.problem == "checksum mismatch");
  }
  SECTION("a foreign file") {
    spit(p, "hello, I am not a cache entry at all");
    Lookup l = s.get("result", key);
    CHECK(l.status == LookupStatus::Corrupt);
    CHECK_THAT(l.problem, Catch::Contains("not an offload-build cache entry"));
  }
  SECTION("an empty file (a writer's data lost in a power failure)") {
    spit(p, "");
    Lookup l = s.get("result", key);
    CHECK(l.status == LookupStatus::Corrupt);
    CHECK_THAT(l.problem, Catch::Contains("truncated"));
  }
  CHECK_FALSE(fs::exists(p));
  CHECK(s.get("result", key).status == LookupStatus::Missing);
  REQUIRE(s.put("result", key, entry_with("fresh")));
  CHECK(s.get("result", key).status == LookupStatus::Hit);
}

TEST_CASE("a cache that cannot be created misses and never stores", "[cache]") {
  TempDir tmp("ob-cache");
  spit(tmp / "file", "a regular file where a directory should be");
  fs::path dir = tmp / "file" / "cache";  // mkdir fails with ENOTDIR, even for root

  SECTION("in this process: nothing throws, nothing is created") {
    StderrCapture err(tmp / "stderr");
    Storage s(dir);
    CHECK_FALSE(s.writable());
    CHECK(s.get("result", key_of("a")).status == LookupStatus::Missing);
    CHECK_FALSE(s.put("result", key_of("a"), entry_with("x")));
    CHECK_FALSE(s.put("result", key_of("b"), entry_with("y")));
    Counters one;
    one.hits = 1;
    s.record(one);
    CHECK(s.counters().hits == 0);
    CHECK(s.usage().entries == 0);
    CHECK(s.prune(0) == 0);
    s.clear();
    std::string text = err.text();
    // Once per process: an earlier test in this process may have used it up.
    CHECK(count_in(text, "offload-build: warning:") <= 1);
  }
  SECTION("in a fresh process: exactly one warning for many failed puts") {
    auto r = run_cache_tool({dir.string(), "writable", "put", "result", key_of("a"), "x", "put",
                             "result", key_of("b"), "y", "put", "result", key_of("c"), "z", "get",
                             "result", key_of("a"), "record-hits", "3"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "writable 0\nput 0\nput 0\nput 0\nget missing\n");
    CHECK(count_in(r.err, "offload-build: warning:") == 1);
    CHECK(r.err == "offload-build: warning: cache directory " + dir.string() +
                       " is not writable (Not a directory); building without storing results\n");
    CHECK(fs::is_regular_file(tmp / "file"));
  }
}

TEST_CASE("a read-only cache serves hits, stores nothing, warns once", "[cache]") {
  TempDir tmp("ob-cache");
  fs::path dir = tmp / "c";
  std::string key = key_of("shared");
  {
    Storage s(dir);
    REQUIRE(s.put("result", key, entry_with("team build output")));
    Counters c;
    c.hits = 5;
    s.record(c);
  }
  std::string stats_before = slurp(dir / "stats.json");
  // Make every directory r-x and every file r--, for everyone.
  auto set_tree = [&](fs::perms dirs, fs::perms files) {
    fs::permissions(tmp.path(), fs::perms(0755));
    for (const auto& e : fs::recursive_directory_iterator(dir))
      fs::permissions(e.path(), e.is_directory() ? dirs : files);
    fs::permissions(dir, dirs);
  };
  set_tree(fs::perms(0555), fs::perms(0444));

  // Can we still write there (root, CAP_DAC_OVERRIDE)? Then test as nobody.
  bool privileged = false;
  {
    int fd = ::open((dir / "probe").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      privileged = true;
      ::close(fd);
      fs::remove(dir / "probe");
    }
  }
  std::vector<std::string> args;
  if (privileged) args.push_back("--as-nobody");
  for (const char* a :
       {"writable", "get", "result", "<key>", "put", "result", "<other>", "new", "put", "result",
        "<key>", "overwrite", "get", "result", "<other>", "record-hits", "3"}) {
    std::string s = a;
    args.push_back(s == "<key>" ? key : s == "<other>" ? key_of("other") : s);
  }
  args.insert(args.begin() + (privileged ? 1 : 0), dir.string());
  auto r = run_cache_tool(args);
  set_tree(fs::perms(0755), fs::perms(0644));  // so TempDir can clean up
  if (r.exit_code == 77) OB_SKIP("cannot drop privileges with setpriv here: " << r.err);
  INFO("ran as " << (privileged ? "nobody (tests run as root)" : "this user")
                 << "; stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "writable 0\nget hit team build output\nput 0\nput 0\nget missing\n");
  CHECK(count_in(r.err, "offload-build: warning:") == 1);
  CHECK(r.err == "offload-build: warning: cache directory " + dir.string() +
                     " is not writable (Permission denied); building without storing results\n");
  // Nothing changed on disk: no counters merged, no temp files, entry intact.
  CHECK(slurp(dir / "stats.json") == stats_before);
  CHECK(files_named(dir, ".tmp.").empty());
  CHECK(Storage(dir).get("result", key).entry.files.at(0).data == "team build output");
}

TEST_CASE("a failing put removes its temp file and disables storing", "[cache]") {
  TempDir tmp("ob-cache");
  Storage s(tmp / "c");
  std::string key = key_of("blocked");
  // A non-empty directory where the entry should go: rename() fails (EISDIR)
  // after the temp file was written, for any user.
  fs::path p = s.entry_path("result", key);
  fs::create_directories(p);
  spit(p / "keep", "x");

  StderrCapture err(tmp / "stderr");
  CHECK_FALSE(s.put("result", key, entry_with("data")));
  CHECK_FALSE(s.writable());
  CHECK_FALSE(s.put("result", key_of("other"), entry_with("data")));  // disabled now
  std::string text = err.text();
  CHECK(count_in(text, "offload-build: warning:") <= 1);
  if (!text.empty()) CHECK_THAT(text, Catch::Contains("(Is a directory)"));
  CHECK(files_named(tmp / "c", ".tmp.").empty());
  CHECK(s.get("result", key).status == LookupStatus::Missing);
  CHECK(s.get("result", key_of("other")).status == LookupStatus::Missing);
  // Another Storage on the same directory is unaffected.
  Storage again(tmp / "c");
  CHECK(again.writable());
  CHECK(again.put("result", key_of("other"), entry_with("data")));
}

TEST_CASE("prune evicts least recently used entries down to the limit", "[cache]") {
  TempDir tmp("ob-cache");
  Storage s(tmp / "c");
  std::vector<std::string> keys;
  auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 10; ++i) {
    keys.push_back(key_of("k" + std::to_string(i)));
    REQUIRE(s.put("result", keys[i], entry_with(random_bytes(10000, 100 + i))));
  }
  REQUIRE(s.put("manifest", key_of("m"), entry_with(random_bytes(10000, 99))));
  // k0 oldest ... k9 newest; the manifest entry older than all.
  for (int i = 0; i < 10; ++i)
    fs::last_write_time(s.entry_path("result", keys[i]), now - std::chrono::hours(20 - i));
  fs::last_write_time(s.entry_path("manifest", key_of("m")), now - std::chrono::hours(30));
  REQUIRE(s.get("result", keys[0]).status == LookupStatus::Hit);  // k0 is now the newest

  uint64_t size = fs::file_size(s.entry_path("result", keys[0]));
  // Two bytes more: the entry records its kind, "manifest" rather than "result".
  const uint64_t total = 10 * size + fs::file_size(s.entry_path("manifest", key_of("m")));
  REQUIRE(s.usage().entries == 11);
  REQUIRE(s.usage().bytes == total);

  CHECK(s.prune(total) == 0);                // at the limit: nothing to do
  CHECK(s.prune(5 * size + size / 2) == 6);  // manifest, k1..k5
  CHECK(s.usage().entries == 5);
  CHECK(s.usage().bytes <= 5 * size + size / 2);
  CHECK_FALSE(fs::exists(s.entry_path("manifest", key_of("m"))));
  for (int i = 1; i <= 5; ++i) CHECK(s.get("result", keys[i]).status == LookupStatus::Missing);
  for (int i : {0, 6, 7, 8, 9}) CHECK(s.get("result", keys[i]).status == LookupStatus::Hit);
  CHECK(s.counters().evictions == 6);

  CHECK(s.prune(0) == 5);
  CHECK(s.usage().entries == 0);
  CHECK(s.counters().evictions == 11);
}

TEST_CASE("prune removes stale temp files but not fresh ones", "[cache]") {
  TempDir tmp("ob-cache");
  Storage s(tmp / "c");
  std::string key = key_of("t");
  REQUIRE(s.put("result", key, entry_with("x")));
  fs::path shard = s.entry_path("result", key).parent_path();
  auto now = fs::file_time_type::clock::now();
  spit(shard / (key + ".tmp.123.00000000deadbeef"), "partial");
  fs::last_write_time(shard / (key + ".tmp.123.00000000deadbeef"), now - std::chrono::minutes(11));
  spit(shard / (key + ".tmp.456.00000000cafef00d"), "being written right now");
  spit(tmp / "c/stats.json.tmp.789.0000000000000001", "{");
  fs::last_write_time(tmp / "c/stats.json.tmp.789.0000000000000001", now - std::chrono::hours(1));

  CHECK(s.usage().entries == 1);  // temps are not entries
  CHECK(s.prune(uint64_t{1} << 40) == 0);
  CHECK_FALSE(fs::exists(shard / (key + ".tmp.123.00000000deadbeef")));
  CHECK_FALSE(fs::exists(tmp / "c/stats.json.tmp.789.0000000000000001"));
  CHECK(fs::exists(shard / (key + ".tmp.456.00000000cafef00d")));
  CHECK(s.get("result", key).status == LookupStatus::Hit);
}

TEST_CASE("counters merge into stats.json and survive reopening", "[cache]") {
  TempDir tmp("ob-cache");
  Storage s(tmp / "c");
  CHECK(s.counters().hits == 0);  // no stats.json yet

  Counters a;
  a.hits = 3;
  a.misses = 2;
  a.misses_by_reason = {{"no entry", 1}, {"corrupt", 1}};
  a.corrupt = 1;
  a.stores = 2;
  a.store_failures = 1;
  a.bytes_stored = 100;
  s.record(a);
  Counters b;
  b.hits = 1;
  b.misses = 3;
  b.misses_by_reason = {{"no entry", 2}, {"inputs changed", 1}};
  b.evictions = 4;
  b.unchanged_by_reason = {{"unsupported option", 2}};
  s.record(b);
  Counters only_unchanged;  // launcher mode: a compile run unchanged counts, alone
  only_unchanged.unchanged_by_reason = {{"unsupported option", 1}, {"not clang", 1}};
  CHECK(only_unchanged.any());
  s.record(only_unchanged);

  Counters c = Storage(tmp / "c").counters();
  CHECK(c.hits == 4);
  CHECK(c.misses == 5);
  CHECK(c.misses_by_reason ==
        std::map<std::string, uint64_t>{{"no entry", 3}, {"corrupt", 1}, {"inputs changed", 1}});
  CHECK(c.corrupt == 1);
  CHECK(c.stores == 2);
  CHECK(c.store_failures == 1);
  CHECK(c.evictions == 4);
  CHECK(c.bytes_stored == 100);
  CHECK(c.unchanged_by_reason ==
        std::map<std::string, uint64_t>{{"unsupported option", 3}, {"not clang", 1}});
  CHECK(files_named(tmp / "c", ".tmp.").empty());

  spit(tmp / "c/stats.json", "{ not json");
  CHECK(s.counters().hits == 0);
  Counters one;
  one.hits = 1;
  s.record(one);
  CHECK(s.counters().hits == 1);
  CHECK(s.counters().misses == 0);
}

TEST_CASE("record from 8 concurrent processes loses no update", "[cache]") {
  TempDir tmp("ob-cache");
  fs::path dir = tmp / "c";
  { Storage init(dir); }
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int p = 0; p < 8; ++p) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      Storage s(dir);
      Counters one;
      one.hits = 1;
      one.misses_by_reason["no entry"] = 1;
      for (int i = 0; i < 100; ++i) s.record(one);
      ::_exit(s.writable() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  Counters c = Storage(dir).counters();
  CHECK(c.hits == 800);
  CHECK(c.misses_by_reason["no entry"] == 800);
}

TEST_CASE("record evicts automatically so the cache stays within its limit", "[cache]") {
  TempDir tmp("ob-cache");
  const uint64_t max = 200 << 10;
  Storage s(tmp / "c", max);
  std::string last;
  for (int i = 0; i < 60; ++i) {
    last = key_of("auto" + std::to_string(i));
    REQUIRE(s.put("result", last, entry_with(random_bytes(10000, 1000 + i))));
    Counters d;
    d.stores = 1;
    d.bytes_stored = fs::file_size(s.entry_path("result", last));
    s.record(d);
    INFO("after " << i + 1 << " stores");
    REQUIRE(s.usage().bytes <= max);
  }
  Counters c = s.counters();
  CHECK(c.stores == 60);
  CHECK(c.evictions > 0);
  CHECK(c.evictions == 60 - s.usage().entries);
  CHECK(s.get("result", last).status == LookupStatus::Hit);
}

TEST_CASE("clear removes every entry, the counters and the remembered probes", "[cache]") {
  TempDir tmp("ob-cache");
  Storage s(tmp / "c");
  for (int i = 0; i < 3; ++i) REQUIRE(s.put("result", key_of(std::to_string(i)), entry_with("x")));
  Counters c;
  c.hits = 7;
  s.record(c);
  fs::create_directories(tmp / "c/probes");
  spit(tmp / "c/probes/clang-listing-0123.json", "{}");
  s.clear();
  CHECK_FALSE(fs::exists(tmp / "c/probes"));
  CHECK(s.usage().entries == 0);
  CHECK(s.counters().hits == 0);
  CHECK(s.get("result", key_of("0")).status == LookupStatus::Missing);
  CHECK(fs::exists(tmp / "c/CACHEDIR.TAG"));
  REQUIRE(s.put("result", key_of("0"), entry_with("again")));
  CHECK(s.get("result", key_of("0")).status == LookupStatus::Hit);
}

TEST_CASE("the cache_dir setting follows the environment in order", "[cache]") {
  EnvGuard guard({"OFFLOAD_BUILD_CACHE_DIR", "XDG_CACHE_HOME", "HOME"});
  auto cache_dir = [] { return fs::path(ob::config::load()->text("cache_dir")); };
  set_env("OFFLOAD_BUILD_CACHE_DIR", "/x/ob");
  set_env("XDG_CACHE_HOME", "/x/xdg");
  set_env("HOME", "/x/home");
  CHECK(cache_dir() == fs::path("/x/ob"));
  set_env("OFFLOAD_BUILD_CACHE_DIR", "");
  CHECK(cache_dir() == fs::path("/x/xdg/offload-build"));
  set_env("OFFLOAD_BUILD_CACHE_DIR", nullptr);
  CHECK(cache_dir() == fs::path("/x/xdg/offload-build"));
  set_env("XDG_CACHE_HOME", "relative/is/invalid");
  CHECK(cache_dir() == fs::path("/x/home/.cache/offload-build"));
  set_env("XDG_CACHE_HOME", nullptr);
  CHECK(cache_dir() == fs::path("/x/home/.cache/offload-build"));
}

TEST_CASE("parse_size accepts binary units in several spellings", "[cache]") {
  const std::vector<std::pair<std::string, uint64_t>> good = {
      {"0", 0},
      {"1024", 1024},
      {"512B", 512},
      {"64K", 64 << 10},
      {"64k", 64 << 10},
      {"64KiB", 64 << 10},
      {"500M", 500ull << 20},
      {"500MB", 500ull << 20},
      {"5G", 5ull << 30},
      {"5GiB", 5ull << 30},
      {"5GB", 5ull << 30},
      {"5gib", 5ull << 30},
      {"1.5G", 3ull << 29},
      {"1.25M", 1310720},
      {"0.5K", 512},
      {"2T", 2ull << 40},
  };
  for (const auto& [text, bytes] : good) {
    INFO(text);
    auto r = parse_size(text);
    REQUIRE(r.ok());
    CHECK(*r == bytes);
  }
  for (const char* text : {"", "abc", "-1", "5X", "G", "1.5", "5 G", "1.G", ".5G",
                           "99999999999999999999", "17179869184G"}) {
    INFO(text);
    auto r = parse_size(text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ob::exit_code::usage);
    CHECK_THAT(r.error().message, Catch::Contains(std::string("'") + text + "'") &&
                                      Catch::Contains("e.g. 1024, 64K, 500M, 1.5G, 5GiB"));
  }
}

TEST_CASE("format_size prints one decimal in binary units", "[cache]") {
  CHECK(format_size(0) == "0 B");
  CHECK(format_size(512) == "512 B");
  CHECK(format_size(1023) == "1023 B");
  CHECK(format_size(1024) == "1.0 KiB");
  CHECK(format_size(1536) == "1.5 KiB");
  CHECK(format_size(12897485) == "12.3 MiB");
  CHECK(format_size((1 << 20) - 1) == "1.0 MiB");
  CHECK(format_size(5ull << 30) == "5.0 GiB");
  CHECK(format_size(3ull << 40) == "3.0 TiB");
}

TEST_CASE("unsupported options are counted by name, the most frequent kept, and zeroed", "[cache]") {
  TempDir tmp("ob-cache");
  Storage s(tmp / "c");
  Counters often;
  often.unchanged_by_reason["unsupported option"] = 5;
  often.unsupported_options["-ftime-trace"] = 5;
  s.record(often);
  for (size_t i = 0; i < Counters::kMaxNamedOptions + 8; ++i) {
    Counters one;
    one.unchanged_by_reason["unsupported option"] = 1;
    one.unsupported_options["-fopt" + std::to_string(i)] = 1;
    s.record(one);
  }
  const Counters c = s.counters();
  CHECK(c.unsupported_options.size() == Counters::kMaxNamedOptions);  // bounded
  CHECK(c.unsupported_options.at("-ftime-trace") == 5);
  CHECK(c.unchanged_by_reason.at("unsupported option") == 5 + Counters::kMaxNamedOptions + 8);
  CHECK(ob::cli::most_frequent(c.unsupported_options, 2).front() == std::pair<std::string, uint64_t>{"-ftime-trace", 5});

  std::ostringstream zeroed;
  CHECK(ob::cli::cache_zero(s.dir(), zeroed) == 0);
  CHECK_FALSE(s.counters().any());
  CHECK(s.counters().unsupported_options.empty());
}

TEST_CASE("cache stats, prune and clear commands", "[cache]") {
  TempDir tmp("ob-cache");
  fs::path dir = tmp / "c";

  SECTION("stats of a cache that does not exist shows zeros and creates nothing") {
    std::ostringstream out;
    CHECK(ob::cli::cache_stats(dir, true, out) == 0);
    auto j = nlohmann::json::parse(out.str());
    CHECK(j["entries"] == 0);
    CHECK(j["hits"] == 0);
    CHECK(j["max_size"] == uint64_t{5} << 30);  // the table's "5G"
    CHECK_FALSE(fs::exists(dir));
  }
  SECTION("stats, prune, clear on a populated cache") {
    Storage s(dir);
    for (int i = 0; i < 4; ++i)
      REQUIRE(s.put("result", key_of("s" + std::to_string(i)), entry_with(random_bytes(2000, i))));
    Counters c;
    c.hits = 3;
    c.misses = 1;
    c.misses_by_reason = {{"no entry", 1}};
    c.corrupt = 2;
    c.stores = 4;
    c.store_failures = 5;
    c.evictions = 6;
    s.record(c);
    Usage u = s.usage();

    std::ostringstream json;
    CHECK(ob::cli::cache_stats(dir, true, json, 1 << 20) == 0);
    auto j = nlohmann::json::parse(json.str());
    std::vector<std::string> keys;
    for (auto& [k, v] : j.items()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    CHECK(keys == std::vector<std::string>{"bytes", "corrupt", "dir", "engine_cache_hits", "entries", "evictions",
                                           "hits", "max_size", "misses", "misses_by_reason",
                                           "remote_executions", "remote_fallbacks",
                                           "remotes", "store_failures", "stores", "unchanged_by_reason",
                                           "unsupported_options", "whole_compiles"});
    CHECK(j["remotes"] == nlohmann::json::object());  // none used
    CHECK(j["dir"] == s.dir().string());
    CHECK(j["entries"] == 4);
    CHECK(j["bytes"] == u.bytes);
    CHECK(j["max_size"] == 1 << 20);
    CHECK(j["hits"] == 3);
    CHECK(j["misses"] == 1);
    CHECK(j["misses_by_reason"]["no entry"] == 1);
    CHECK(j["corrupt"] == 2);
    CHECK(j["stores"] == 4);
    CHECK(j["store_failures"] == 5);
    CHECK(j["evictions"] == 6);

    std::ostringstream text;
    CHECK(ob::cli::cache_stats(dir, false, text, 1 << 20) == 0);
    std::string t = text.str();
    // Every value in one column: two spaces past the longest label ("compiles run unchanged").
    CHECK_THAT(t, Catch::Contains("cache directory         " + s.dir().string() + "\n"));
    CHECK_THAT(t, Catch::Contains("entries                 4\n"));
    CHECK_THAT(t, Catch::Contains("size                    " + format_size(u.bytes) + " / 1.0 MiB\n"));
    CHECK_THAT(t, Catch::Contains("hits                    3\n"));
    CHECK_THAT(t, Catch::Contains("misses                  1\n"));
    CHECK_THAT(t, Catch::Contains("  no entry              1\n"));
    CHECK_THAT(t, Catch::Contains("hit rate                75.0%\n"));
    CHECK_THAT(t, Catch::Contains("corrupt entries         2\n"));
    CHECK_THAT(t, Catch::Contains("stores                  4\n"));
    CHECK_THAT(t, Catch::Contains("store failures          5\n"));
    CHECK_THAT(t, Catch::Contains("evictions               6\n"));

    std::ostringstream pruned;
    CHECK(ob::cli::cache_prune(dir, u.bytes / 2, pruned) == 0);
    CHECK_THAT(pruned.str(), Catch::Contains("removed 2 entries"));
    CHECK(s.usage().entries == 2);
    CHECK(s.counters().evictions == 8);

    std::ostringstream cleared;
    CHECK(ob::cli::cache_clear(dir, cleared) == 0);
    CHECK_THAT(cleared.str(), Catch::Contains("removed 2 entries"));
    CHECK(s.usage().entries == 0);
    CHECK(s.counters().hits == 0);
  }
}

TEST_CASE("the size limit holds while six processes store (eviction while storing)", "[cache][limit]") {
  // Issue 18: the limit used to be enforced only when a build ended (record()),
  // so six concurrent builds with a 1 MiB limit held 5.5 MB at the peak. Now
  // every store counts its bytes under stats.lock and evicts past a tenth of
  // the limit: the cache stays within the limit plus the entries in flight.
  TempDir tmp("ob-cache");
  const fs::path dir = tmp / "c";
  const uint64_t max = 1 << 20;
  constexpr int kWriters = 6, kEntries = 40;
  constexpr size_t kSize = 50000;  // incompressible: ~50 KB on disk each, 12 MB in all
  { Storage init(dir, max); }
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::alarm(60);
      Storage s(dir, max);
      for (int i = 0; i < kEntries; ++i)
        if (!s.put("result", key_of(std::to_string(w) + "/" + std::to_string(i)),
                   entry_with(random_bytes(kSize, uint64_t(w) * 1000 + uint64_t(i)))))
          ::_exit(1);
      ::_exit(0);  // no record(): the limit must hold without it
    }
    children.push_back(pid);
  }
  // Watch the cache's size while they run.
  Storage watcher(dir, max);
  uint64_t peak = 0, samples = 0;
  size_t running = children.size();
  std::vector<int> statuses;
  while (running > 0) {
    peak = std::max(peak, watcher.usage().bytes);
    ++samples;
    for (pid_t& pid : children) {
      int status = 0;
      if (pid > 0 && ::waitpid(pid, &status, WNOHANG) == pid) {
        statuses.push_back(status);
        pid = 0;
        --running;
      }
    }
  }
  peak = std::max(peak, watcher.usage().bytes);
  for (int status : statuses) CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  const uint64_t slack = kWriters * (kSize + kHeaderSize + 1024);  // one entry in flight per writer
  INFO("peak " << peak << " bytes over " << samples << " samples; limit " << max << " + slack " << slack);
  CHECK(peak <= max + slack);
  CHECK(peak > max / 2);  // the watcher saw the cache fill
  CHECK(watcher.usage().bytes <= max);
  CHECK(watcher.counters().evictions > 0);
}

TEST_CASE("one build storing more than the limit keeps the cache within it at every store",
          "[cache][limit]") {
  TempDir tmp("ob-cache");
  const uint64_t max = 200 << 10;
  Storage s(tmp / "c", max);
  uint64_t peak = 0;
  for (int i = 0; i < 60; ++i) {
    REQUIRE(s.put("result", key_of("one" + std::to_string(i)), entry_with(random_bytes(10000, 7000 + i))));
    peak = std::max(peak, s.usage().bytes);
  }
  INFO("peak " << peak);
  CHECK(peak <= max);  // 600 KB stored, never more than 200 KiB held
  CHECK(s.counters().evictions > 0);
}

TEST_CASE("stats, verify, prune and clear refuse a symlinked kind or shard directory alike",
          "[cache][trust]") {
  // Issue 18: `cache verify` passed a cache whose v1/result was a symlink
  // ("3 entries, 0 corrupt", exit 0) while builds refused it.
  TempDir tmp("ob-cache");
  const fs::path dir = tmp / "c", elsewhere = tmp / "elsewhere";
  fs::create_directories(elsewhere);
  {
    Storage s(dir);
    for (int i = 0; i < 3; ++i)
      REQUIRE(s.put("result", key_of("w" + std::to_string(i)), entry_with(random_bytes(500, i))));
  }
  std::string level, moved;
  SECTION("v1/result is a symlink") {
    level = "v1/result";
    moved = "result";
  }
  SECTION("a shard v1/result/xx is a symlink") {
    const std::string shard = key_of("w0").substr(0, 2);
    level = "v1/result/" + shard;
    moved = shard;
  }
  fs::rename(dir / level, elsewhere / moved);
  fs::create_symlink(elsewhere / moved, dir / level);
  const auto behind = files_named(elsewhere, "");
  REQUIRE_FALSE(behind.empty());

  const auto v = Storage(dir).verify();  // the entries themselves are fine
  CHECK(v.corrupt.empty());
  CHECK(v.not_walked == level + " is a symbolic link: not followed, no entry under it checked");
  std::ostringstream verify;
  CHECK(ob::cli::cache_verify(dir, verify) == 1);
  CHECK_THAT(verify.str(), Catch::Contains(level + " is a symbolic link: not followed, no entry under it checked"));
  CHECK_THAT(verify.str(), !Catch::Contains("0 corrupt"));

  std::ostringstream stats, json;
  CHECK(ob::cli::cache_stats(dir, false, stats) == 0);
  CHECK_THAT(stats.str(), Catch::Contains("warning: builds do not use this cache: " + level +
                                          " is a symbolic link"));
  CHECK(ob::cli::cache_stats(dir, true, json) == 0);
  auto j = nlohmann::json::parse(json.str());
  CHECK(j["not_used"] == level + " is a symbolic link");

  std::ostringstream prune;
  CHECK(ob::cli::cache_prune(dir, 0, prune) == 0);
  CHECK_THAT(prune.str(), Catch::Contains("warning: " + level + " is a symbolic link: not followed"));
  CHECK(files_named(elsewhere, "") == behind);  // nothing behind the link evicted

  std::ostringstream clear;
  CHECK(ob::cli::cache_clear(dir, clear) == 0);
  CHECK_FALSE(fs::exists(fs::symlink_status(dir / level)));  // the link is gone
  CHECK(files_named(elsewhere, "") == behind);                 // what it pointed to is not
}

TEST_CASE("verify counts an entry that is a symlink as corrupt", "[cache][trust]") {
  TempDir tmp("ob-cache");
  const fs::path dir = tmp / "c";
  Storage s(dir);
  REQUIRE(s.put("result", key_of("real"), entry_with(random_bytes(500, 1))));
  const fs::path planted = s.entry_path("result", key_of("planted"));
  fs::create_directories(planted.parent_path());
  fs::create_symlink(s.entry_path("result", key_of("real")), planted);
  const auto v = s.verify();
  CHECK(v.entries == 2);
  CHECK(v.corrupt == std::vector<std::string>{planted.string() + ": a symbolic link, not an entry"});
}
