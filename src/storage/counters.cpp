// Shared counters in <dir>/stats.json, merged under an flock on <dir>/stats.lock;
// clear() (which resets them). Automatic eviction hangs off every store
// (account) and record(): docs/CACHE.md, "Where it lives".
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "offload_build/storage/storage.hpp"
#include "offload_build/util/json_text.hpp"
#include "safe_dir.hpp"

namespace ob::storage {

namespace {

// Each store adds its bytes to a tally kept in stats.lock itself (a decimal
// number, read and rewritten under the lock: no file created per store), and
// evicts once this much was stored since the last eviction: a tenth of the
// limit, so a cache pruned to 90% stays within its limit at every moment, but
// for the entries being written and not yet counted (one per process storing).
uint64_t eviction_threshold(uint64_t max_size) { return max_size / 10; }
uint64_t prune_target(uint64_t max_size) { return max_size / 10 * 9; }

// An exclusive flock on <dir>/stats.lock for this object's lifetime.
class StatsLock {
 public:
  // Not through a symlink: a dangling one would make us create its target.
  explicit StatsLock(const fs::path& dir, const std::optional<unsigned>& umask) {
    fd_ = ::open((dir / "stats.lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                 umask ? 0666 & ~*umask : 0644);
    if (fd_ < 0) return;
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
    }
  }
  ~StatsLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  StatsLock(const StatsLock&) = delete;
  StatsLock& operator=(const StatsLock&) = delete;
  bool locked() const { return fd_ >= 0; }

  // The bytes stored since the last eviction (0 when unreadable: at worst an
  // eviction comes a little late or early).
  uint64_t tally() const {
    char buf[32] = {};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    uint64_t v = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) v = v * 10 + uint64_t(buf[i] - '0');
    return v;
  }
  void set_tally(uint64_t v) {
    const std::string text = fmt::format("{:020}\n", v);  // fixed width: no truncation needed
    if (::pwrite(fd_, text.data(), text.size(), 0) != ssize_t(text.size())) return;
  }

 private:
  int fd_ = -1;
};

// RemoteCounters' fields by their JSON names: reading, writing, adding.
constexpr std::pair<const char*, uint64_t RemoteCounters::*> kRemoteFields[] = {
    {"hits", &RemoteCounters::hits},         {"misses", &RemoteCounters::misses},
    {"errors", &RemoteCounters::errors},     {"timeouts", &RemoteCounters::timeouts},
    {"rejected", &RemoteCounters::rejected}, {"uploads", &RemoteCounters::uploads},
    {"bytes_read", &RemoteCounters::bytes_read}, {"bytes_written", &RemoteCounters::bytes_written},
    {"bad_signature", &RemoteCounters::bad_signature}, {"oversized", &RemoteCounters::oversized},
    {"kept_foreign", &RemoteCounters::kept_foreign},
};

uint64_t get_count(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

Counters read_counters(const fs::path& file) {
  Counters c;
  struct stat st {};
  auto text = detail::read_at(AT_FDCWD, file.string(), 1 << 20, st);
  if (!text) return c;
  auto j = util::parse_lossless(*text);
  if (!j.is_object()) return c;
  c.hits = get_count(j, "hits");
  c.whole_compiles = get_count(j, "whole_compiles");
  c.misses = get_count(j, "misses");
  c.corrupt = get_count(j, "corrupt");
  c.stores = get_count(j, "stores");
  c.store_failures = get_count(j, "store_failures");
  c.evictions = get_count(j, "evictions");
  c.bytes_stored = get_count(j, "bytes_stored");
  c.remote_executions = get_count(j, "remote_executions");
  c.engine_cache_hits = get_count(j, "engine_cache_hits");
  c.remote_fallbacks = get_count(j, "remote_fallbacks");
  for (auto [key, into] : {std::pair{"misses_by_reason", &c.misses_by_reason},
                           std::pair{"unchanged_by_reason", &c.unchanged_by_reason},
                           std::pair{"unsupported_options", &c.unsupported_options}}) {
    if (auto it = j.find(key); it != j.end() && it->is_object()) {
      for (const auto& [reason, n] : it->items())
        if (n.is_number_unsigned()) (*into)[reason] = n.get<uint64_t>();
    }
  }
  if (auto it = j.find("remotes"); it != j.end() && it->is_object()) {
    for (const auto& [url, r] : it->items()) {
      if (!r.is_object()) continue;
      RemoteCounters& rc = c.remotes[url];
      for (const auto& [name, field] : kRemoteFields) rc.*field = get_count(r, name);
    }
  }
  return c;
}

}  // namespace

nlohmann::json counters_to_json(const Counters& c) {
  auto remotes = nlohmann::json::object();
  for (const auto& [url, r] : c.remotes)
    for (const auto& [name, field] : kRemoteFields) remotes[url][name] = r.*field;
  return {
      {"remotes", remotes},
      {"hits", c.hits},
      {"whole_compiles", c.whole_compiles},
      {"misses", c.misses},
      {"misses_by_reason", c.misses_by_reason},
      {"corrupt", c.corrupt},
      {"stores", c.stores},
      {"store_failures", c.store_failures},
      {"evictions", c.evictions},
      {"bytes_stored", c.bytes_stored},
      {"remote_executions", c.remote_executions},
      {"engine_cache_hits", c.engine_cache_hits},
      {"remote_fallbacks", c.remote_fallbacks},
      {"unchanged_by_reason", c.unchanged_by_reason},
      {"unsupported_options", c.unsupported_options},
  };
}

namespace {

std::string counters_json(const Counters& c) {
  nlohmann::json j = counters_to_json(c);
  j["version"] = 1;
  return util::dump_lossless(j, 2) + "\n";
}

// Temp file + rename, so counters() (which takes no lock) never sees half a file.
void write_counters(const fs::path& dir, const Counters& c, const std::optional<unsigned>& umask) {
  detail::Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd) detail::write_at(fd.get(), "stats.json", counters_json(c), umask);
}

}  // namespace

Counters& Counters::operator+=(const Counters& other) {
  hits += other.hits;
  whole_compiles += other.whole_compiles;
  misses += other.misses;
  for (const auto& [reason, n] : other.misses_by_reason) misses_by_reason[reason] += n;
  corrupt += other.corrupt;
  stores += other.stores;
  store_failures += other.store_failures;
  evictions += other.evictions;
  bytes_stored += other.bytes_stored;
  remote_executions += other.remote_executions;
  engine_cache_hits += other.engine_cache_hits;
  remote_fallbacks += other.remote_fallbacks;
  for (const auto& [url, r] : other.remotes) remotes[url] += r;
  for (const auto& [reason, n] : other.unchanged_by_reason) unchanged_by_reason[reason] += n;
  for (const auto& [option, n] : other.unsupported_options) unsupported_options[option] += n;
  // Bounded: the least frequent names go (the total stays in unchanged_by_reason).
  while (unsupported_options.size() > kMaxNamedOptions)
    unsupported_options.erase(std::min_element(
        unsupported_options.begin(), unsupported_options.end(),
        [](const auto& a, const auto& b) { return a.second < b.second; }));
  return *this;
}

bool Counters::any() const {
  bool remote = false;
  for (const auto& [url, r] : remotes) remote |= r.any();
  return hits || misses || corrupt || stores || store_failures || evictions || bytes_stored ||
         remote_executions || engine_cache_hits || remote_fallbacks ||
         !unchanged_by_reason.empty() || remote;
}

RemoteCounters& RemoteCounters::operator+=(const RemoteCounters& o) {
  for (const auto& [name, field] : kRemoteFields) this->*field += o.*field;
  return *this;
}

bool RemoteCounters::any() const {
  for (const auto& [name, field] : kRemoteFields)
    if (this->*field) return true;
  return false;
}

void Storage::record(const Counters& delta) {
  if (!writable_) return;
  if (!delta.any()) return;  // a no-op build: no lock, no rewrite
  StatsLock lock(dir_, trust_.umask);
  if (!lock.locked()) return;
  Counters merged = read_counters(dir_ / "stats.json");
  merged += delta;
  if (merged.bytes_stored > eviction_threshold(max_size_)) {
    // Under the lock, so only one process prunes at a time.
    merged.evictions += remove_lru(prune_target(max_size_));
    merged.bytes_stored = 0;
  }
  write_counters(dir_, merged, trust_.umask);
}

uint64_t Storage::account(uint64_t stored, std::optional<uint64_t> prune_to) {
  StatsLock lock(dir_, trust_.umask);
  if (!lock.locked()) return 0;
  const uint64_t tally = lock.tally() + stored;
  if (!prune_to && tally <= eviction_threshold(max_size_)) {
    lock.set_tally(tally);  // the common case: one pread and one pwrite
    return 0;
  }
  // Under the lock, so only one process prunes at a time.
  const uint64_t removed = remove_lru(prune_to.value_or(prune_target(max_size_)));
  lock.set_tally(0);
  Counters merged = read_counters(dir_ / "stats.json");
  merged.evictions += removed;
  write_counters(dir_, merged, trust_.umask);
  return removed;
}

Counters Storage::counters() const { return read_counters(dir_ / "stats.json"); }

void Storage::zero_counters() {
  if (!writable_) return;
  StatsLock lock(dir_, trust_.umask);
  if (!lock.locked()) return;
  std::error_code ec;
  fs::remove(dir_ / "stats.json", ec);
}

void Storage::clear() {
  if (!writable_) return;
  std::error_code ec;
  fs::path v1 = dir_ / "v1";
  // File by file first, so a concurrent writer making a new shard directory
  // cannot make the whole removal fail; then the directories.
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(v1, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (!it->is_directory(ec2)) files.push_back(it->path());
  }
  for (const auto& f : files) fs::remove(f, ec);
  fs::remove_all(v1, ec);
  fs::create_directories(v1, ec);
  fs::remove_all(dir_ / "probes", ec);  // remembered compiler answers (driver listings, rustc)
  StatsLock lock(dir_, trust_.umask);
  fs::remove(dir_ / "stats.json", ec);
  if (lock.locked()) lock.set_tally(0);
}

std::vector<std::pair<std::string, uint64_t>> most_frequent(const std::map<std::string, uint64_t>& counts,
                                                            size_t n) {
  std::vector<std::pair<std::string, uint64_t>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > n) v.resize(n);
  return v;
}

}  // namespace ob::storage
