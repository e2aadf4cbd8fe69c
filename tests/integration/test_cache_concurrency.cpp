// The cache shared by many processes: concurrent put/get/prune/record never
// shows a reader a partial or wrong entry, and writers killed at random
// moments (SIGKILL, mid-write or not) never leave an entry that fails to decode.
// Uses fork() directly: the children only touch cache::Storage and _exit.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "offload_build/storage/hash.hpp"
#include "offload_build/storage/storage.hpp"
#include "support/temp_dir.hpp"

using namespace ob::storage;
using ob::test::TempDir;

namespace {

// Data fully determined by (key, writer, iteration, size): a reader can
// rebuild exactly what the writer stored from the metadata alone.
std::string make_data(const std::string& key, int writer, int iter, size_t size) {
  std::mt19937_64 rng(xxh3(fmt::format("{}/{}/{}", key, writer, iter)));
  std::string s(size, '\0');
  bool text = (iter % 2) == 0;  // half compressible (zstd), half random (stored raw)
  for (size_t i = 0; i < size; ++i) {
    uint64_t r = rng();
    s[i] = text ? static_cast<char>('a' + r % 4) : static_cast<char>(r & 0xff);
  }
  return s;
}

Entry make_entry(const std::string& key, int writer, int iter, size_t size) {
  return Entry{
      fmt::format("{} {} {} {}", key, writer, iter, size),
      {{"out", make_data(key, writer, iter, size)}, {"log", "writer " + std::to_string(writer)}}};
}

// True when `e` is exactly what some writer stored under `key`.
bool verify(const std::string& key, const Entry& e) {
  std::istringstream meta(e.metadata);
  std::string k;
  int writer = -1, iter = -1;
  size_t size = 0;
  if (!(meta >> k >> writer >> iter >> size) || k != key) return false;
  Entry expected = make_entry(key, writer, iter, size);
  if (e.files.size() != 2) return false;
  return e.files[0].name == "out" && e.files[0].data == expected.files[0].data &&
         e.files[1].data == expected.files[1].data;
}

struct Scan {
  size_t entries = 0, bad = 0, temps = 0;
  std::vector<std::string> problems;
  std::set<std::string> temp_names;
};

Scan scan_files(const fs::path& dir) {
  Scan s;
  if (!fs::exists(dir / "v1")) return s;
  for (const auto& e : fs::recursive_directory_iterator(dir / "v1")) {
    if (!e.is_regular_file()) continue;
    std::string name = e.path().filename().string();
    if (name.find(".tmp.") != std::string::npos) {
      ++s.temps;
      s.temp_names.insert(name);
      continue;
    }
    ++s.entries;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto r = decode_entry(ss.str(), e.path().parent_path().parent_path().filename().string(), name);
    if (!r) {
      ++s.bad;
      s.problems.push_back(e.path().string() + ": " + r.error().message);
    } else if (!verify(name, *r)) {
      ++s.bad;
      s.problems.push_back(e.path().string() + ": decodes but is not what was written");
    }
  }
  return s;
}

std::string key_name(const std::string& tag, int i) { return sha256_hex(tag + std::to_string(i)); }

}  // namespace

TEST_CASE("8 processes hammering one cache never see a partial or wrong entry", "[cache]") {
  TempDir tmp("ob-cache-conc");
  fs::path dir = tmp / "c";
  { Storage init(dir); }
  constexpr int kProcs = 8;
  constexpr int kIters = 400;
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  for (int w = 0; w < kProcs; ++w) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // Child: no Catch2 here; results go to a file, status to the exit code.
      Storage s(dir, 64 << 20);
      std::mt19937_64 rng(1234 + w);
      uint64_t hits = 0, misses = 0, corrupt = 0, wrong = 0, puts = 0, failed_puts = 0;
      for (int i = 0; i < kIters; ++i) {
        // Half the traffic on 6 keys every process shares, half on its own 20.
        std::string key = rng() % 2 ? key_name("shared", int(rng() % 6))
                                    : key_name(fmt::format("own{}-", w), int(rng() % 20));
        uint64_t op = rng() % 100;
        if (op < 45) {
          size_t size = 1 + rng() % (rng() % 8 == 0 ? (1 << 20) : (32 << 10));
          if (s.put("result", key, make_entry(key, w, i, size)))
            ++puts;
          else
            ++failed_puts;
        } else if (op < 97) {
          Lookup l = s.get("result", key);
          if (l.status == LookupStatus::Hit) {
            ++hits;
            if (!verify(key, l.entry)) ++wrong;
          } else if (l.status == LookupStatus::Missing) {
            ++misses;
          } else {
            ++corrupt;
          }
        } else if (op < 99) {
          Counters d;
          d.hits = 1;
          s.record(d);
        } else {
          s.prune(4 << 20);  // entries vanish under the other processes
        }
      }
      std::ofstream(tmp / fmt::format("result{}", w))
          << hits << " " << misses << " " << corrupt << " " << wrong << " " << puts << " "
          << failed_puts << "\n";
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  uint64_t hits = 0, misses = 0, corrupt = 0, wrong = 0, puts = 0, failed_puts = 0;
  for (int w = 0; w < kProcs; ++w) {
    std::ifstream in(tmp / fmt::format("result{}", w));
    uint64_t h, m, c, x, p, f;
    REQUIRE(in >> h >> m >> c >> x >> p >> f);
    hits += h, misses += m, corrupt += c, wrong += x, puts += p, failed_puts += f;
  }
  WARN(fmt::format("concurrency: {} hits, {} misses, {} corrupt, {} wrong, {} puts, {} failed puts",
                   hits, misses, corrupt, wrong, puts, failed_puts));
  CHECK(corrupt == 0);
  CHECK(wrong == 0);
  CHECK(failed_puts == 0);
  CHECK(hits > 100);
  CHECK(puts > 100);

  Scan scan = scan_files(dir);
  for (const auto& p : scan.problems) UNSCOPED_INFO(p);
  CHECK(scan.bad == 0);
  CHECK(scan.temps == 0);  // every writer finished; nothing half-written is left
  CHECK(scan.entries > 0);
}

TEST_CASE("writers killed at random moments never leave a bad entry", "[cache]") {
  TempDir tmp("ob-cache-kill");
  fs::path dir = tmp / "c";
  { Storage init(dir); }
  constexpr int kKills = 100;
  std::mt19937_64 rng(42);
  int mid_write = 0, killed_running = 0;
  std::set<std::string> temps_seen;
  // Built before forking, so the children spend their time in put() (encode,
  // write, rename) and the kills land there. 2-6 MiB each; odd iterations are
  // random data (stored raw), whose writes take the largest share of put().
  std::vector<std::pair<std::string, Entry>> entries;
  for (int i = 0; i < 12; ++i) {
    std::string key = key_name("crash", i);
    int iter = i % 3 == 0 ? i * 2 : i * 2 + 1;  // a third compressible
    entries.emplace_back(key, make_entry(key, 1000, iter, (2 << 20) + size_t(i % 3) * (2 << 20)));
  }
  for (int k = 0; k < kKills; ++k) {
    std::fflush(nullptr);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      Storage s(dir);
      for (size_t i = size_t(k);; ++i) {
        const auto& [key, entry] = entries[i % entries.size()];
        s.put("result", key, entry);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20001));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++killed_running;

    Scan scan = scan_files(dir);
    for (const auto& p : scan.problems) UNSCOPED_INFO(p);
    REQUIRE(scan.bad == 0);
    for (const auto& name : scan.temp_names)
      if (temps_seen.insert(name).second) ++mid_write;  // a new temp: this kill hit a write
    // Every key reads as a verified hit or as missing, never corrupt.
    Storage reader(dir);
    for (int i = 0; i < 12; ++i) {
      std::string key = key_name("crash", i);
      Lookup l = reader.get("result", key);
      REQUIRE(l.status != LookupStatus::Corrupt);
      if (l.status == LookupStatus::Hit) REQUIRE(verify(key, l.entry));
    }
  }
  WARN(fmt::format("crash safety: {} kills, {} landed while a temp file was being written",
                   killed_running, mid_write));
  CHECK(killed_running == kKills);

  // Temps left by the killed writers are never entries, and prune removes
  // them once they are old enough (10 minutes).
  Scan before = scan_files(dir);
  Storage s(dir);
  CHECK(s.usage().entries == before.entries);
  auto old = fs::file_time_type::clock::now() - std::chrono::minutes(11);
  for (const auto& e : fs::recursive_directory_iterator(dir / "v1"))
    if (e.path().filename().string().find(".tmp.") != std::string::npos)
      fs::last_write_time(e.path(), old);
  s.prune(uint64_t{1} << 40);
  Scan after = scan_files(dir);
  CHECK(after.temps == 0);
  CHECK(after.entries == before.entries);
  CHECK(after.bad == 0);
}
