// Keeping the cache bounded: usage, least-recently-used pruning, and the size
// syntax of --max-size.
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <ctime>
#include <functional>

#include <fmt/format.h>

#include <fcntl.h>

#include "offload_build/cache/storage.hpp"
#include "safe_dir.hpp"

namespace ob::cache {

namespace {

// Temp files older than this were left by killed writers.
constexpr int64_t kStaleTempNs = int64_t{10} * 60 * 1'000'000'000;

int64_t to_ns(const timespec& t) { return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return to_ns(t);
}

bool is_temp_name(const std::string& name) { return name.find(".tmp.") != std::string::npos; }

// Every regular file in `dir` (not recursive). Files that vanish while we look
// are skipped: other processes prune and rename concurrently.
void for_each_file(const fs::path& dir,
                   const std::function<void(const fs::path&, const struct stat&)>& fn) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    fn(it->path(), st);
  }
}

// Every file in <v1>/<kind>/<shard>/.
void for_each_cache_file(const fs::path& v1,
                         const std::function<void(const fs::path&, const struct stat&)>& fn) {
  std::error_code ec;
  // Nor through a symlinked v1: `cache stats` and `verify` say so instead.
  if (!fs::is_directory(fs::symlink_status(v1, ec))) return;
  fs::directory_iterator kinds(v1, ec), end;
  for (; !ec && kinds != end; kinds.increment(ec)) {
    // Never through a symlink: a planted one would lead eviction elsewhere.
    std::error_code ec2;
    if (!fs::is_directory(kinds->symlink_status(ec2))) continue;
    fs::directory_iterator shards(kinds->path(), ec2);
    for (; !ec2 && shards != end; shards.increment(ec2)) {
      std::error_code ec3;
      if (!fs::is_directory(shards->symlink_status(ec3))) continue;
      for_each_file(shards->path(), fn);
    }
  }
}

}  // namespace

Usage Storage::usage() const {
  Usage u;
  for_each_cache_file(dir_ / "v1", [&](const fs::path& p, const struct stat& st) {
    if (is_temp_name(p.filename().string())) return;
    ++u.entries;
    u.bytes += uint64_t(st.st_size);
  });
  return u;
}

Storage::Verification Storage::verify(const Validator& validate) const {
  Verification v;
  struct stat v1 {};
  if (::lstat((dir_ / "v1").c_str(), &v1) == 0 && !S_ISDIR(v1.st_mode))
    v.not_walked = S_ISLNK(v1.st_mode) ? "v1 is a symbolic link: not followed, no entry checked"
                                       : "v1 is not a directory: no entry checked";
  for_each_cache_file(dir_ / "v1", [&](const fs::path& p, const struct stat& st) {
    if (is_temp_name(p.filename().string())) return;
    ++v.entries;
    const std::string key = p.filename().string();
    const std::string kind = p.parent_path().parent_path().filename().string();
    auto bad = [&](const std::string& problem) { v.corrupt.push_back(p.string() + ": " + problem); };
    if (std::string d = detail::distrust(st, shared()); !d.empty()) return bad("the entry " + d);
    struct stat now {};
    auto bytes = detail::read_at(AT_FDCWD, p.string(), kHeaderSize + kMaxPayloadSize, now);
    if (!bytes) return bad("unreadable, or larger than any entry can be");
    auto decoded = decode_entry(*bytes, kind, key, trust_.signing_key);
    if (!decoded) return bad(decoded.error().message);
    if (validate)
      if (std::string problem = validate(kind, *decoded); !problem.empty()) bad(problem);
  });
  return v;
}

uint64_t Storage::remove_lru(uint64_t max_size) {
  struct Item {
    fs::path path;
    uint64_t size;
    int64_t mtime;
  };
  std::vector<Item> items;
  uint64_t total = 0;
  const int64_t stale_before = now_ns() - kStaleTempNs;
  auto visit = [&](const fs::path& p, const struct stat& st) {
    if (is_temp_name(p.filename().string())) {
      if (to_ns(st.st_mtim) < stale_before) ::unlink(p.c_str());
      return;
    }
    items.push_back({p, uint64_t(st.st_size), to_ns(st.st_mtim)});
    total += uint64_t(st.st_size);
  };
  for_each_cache_file(dir_ / "v1", visit);
  // Counter files left by a process killed inside record().
  for_each_file(dir_, [&](const fs::path& p, const struct stat& st) {
    if (is_temp_name(p.filename().string()) && to_ns(st.st_mtim) < stale_before)
      ::unlink(p.c_str());
  });

  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.mtime != b.mtime ? a.mtime < b.mtime : a.path < b.path;
  });
  uint64_t removed = 0;
  for (const Item& item : items) {
    if (total <= max_size) break;
    // Gone already (another process pruned it) is as good as removed by us.
    if (::unlink(item.path.c_str()) == 0)
      ++removed;
    else if (errno != ENOENT)
      continue;
    total -= item.size;
  }
  return removed;
}

uint64_t Storage::prune(uint64_t max_size) {
  if (!writable_) return 0;
  uint64_t removed = remove_lru(max_size);
  if (removed > 0) {
    Counters delta;
    delta.evictions = removed;
    record(delta);
  }
  return removed;
}

Result<uint64_t> parse_size(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Error::usage(fmt::format(
        "invalid size '{}'{}: expected a whole or decimal number with an optional unit K, M, G "
        "or T (binary: 1K = 1024 bytes; KiB/KB, MiB/MB, ... mean the same), e.g. 1024, 64K, "
        "500M, 1.5G, 5GiB",
        text, why.empty() ? "" : " (" + why + ")"));
  };
  size_t i = 0;
  uint64_t whole = 0;
  size_t digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
    if (__builtin_mul_overflow(whole, 10u, &whole) ||
        __builtin_add_overflow(whole, uint64_t(text[i] - '0'), &whole))
      return bad("too large");
  }
  std::string_view fraction;
  if (i < text.size() && text[i] == '.') {
    size_t start = ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    }
    fraction = text.substr(start, i - start);
    if (fraction.empty()) return bad("");
  }
  if (digits == 0) return bad("");
  std::string unit;
  for (char c : text.substr(i))
    unit.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  for (auto [letter, s] : {std::pair{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}}) {
    std::string l(1, letter);
    if (unit == l || unit == l + "B" || unit == l + "IB") shift = s;
  }
  if (shift < 0) return bad("unknown unit '" + std::string(text.substr(i)) + "'");
  uint64_t bytes = 0;
  if (whole > (~uint64_t{0} >> shift)) return bad("too large");
  bytes = whole << shift;
  // Fraction: digits / 10^n of the unit, rounded down. Six digits count
  // (num < 2^20, so num << 40 cannot overflow).
  uint64_t num = 0, den = 1;
  for (size_t k = 0; k < fraction.size() && k < 6; ++k) {
    num = num * 10 + uint64_t(fraction[k] - '0');
    den *= 10;
  }
  if (num != 0) {
    if (shift == 0) return bad("a fraction of a byte");
    if (__builtin_add_overflow(bytes, (num << shift) / den, &bytes)) return bad("too large");
  }
  return bytes;
}

std::string format_size(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  size_t u = 0;
  // Move up while the rounded value would print as 1024.0 or more.
  while (u + 1 < std::size(kUnits) && v >= 1023.95) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

}  // namespace ob::cache
