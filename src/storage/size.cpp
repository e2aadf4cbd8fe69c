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

#include "offload_build/storage/storage.hpp"
#include "offload_build/util/files.hpp"
#include "safe_dir.hpp"

namespace ob::storage {

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

// Why builds refuse a directory level of the cache with this lstat (as
// open_dir_at does); empty when they use it.
std::string level_problem(const struct stat& st, bool shared) {
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  return detail::distrust(st, shared);
}

using EntryFn = std::function<void(const fs::path&, const struct stat&)>;

// Every non-directory in <dir>/v1/<kind>/<shard>/ (entries, temp files, planted
// symlinks: `fn` sorts them out), each level checked as builds check it: a
// symlinked or untrusted v1, kind or shard directory is never entered (a
// planted one would lead eviction or verification elsewhere) and is named in
// `problems` ("v1/result is a symbolic link"). What is neither a directory nor
// a symlink at the kind and shard levels is no cache of ours: skipped.
void walk_cache(const fs::path& dir, bool shared, const EntryFn& fn,
                std::vector<std::string>& problems) {
  auto enter = [&](const fs::path& p, const std::string& shown) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return false;
    std::string why = level_problem(st, shared);
    if (why.empty() && shown == "v1" && !S_ISDIR(st.st_mode)) why = "is not a directory";
    if (!why.empty()) {
      problems.push_back(shown + " " + why);
      return false;
    }
    return S_ISDIR(st.st_mode);
  };
  auto children = [](const fs::path& p) {
    std::vector<fs::directory_entry> out;
    std::error_code ec;
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) out.push_back(*it);
    return out;
  };
  if (!enter(dir / "v1", "v1")) return;
  for (const auto& kind : children(dir / "v1")) {
    const std::string k = "v1/" + kind.path().filename().string();
    if (!enter(kind.path(), k)) continue;
    for (const auto& shard : children(kind.path())) {
      if (!enter(shard.path(), k + "/" + shard.path().filename().string())) continue;
      for (const auto& e : children(shard.path())) {
        struct stat st {};
        if (::lstat(e.path().c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) fn(e.path(), st);
      }
    }
  }
}

}  // namespace

Usage Storage::usage() const {
  Usage u;
  walk_cache(dir_, shared(), [&](const fs::path& p, const struct stat& st) {
    if (!S_ISREG(st.st_mode) || is_temp_name(p.filename().string())) return;
    ++u.entries;
    u.bytes += uint64_t(st.st_size);
  }, u.not_walked);
  return u;
}

Storage::Verification Storage::verify(const Validator& validate) const {
  Verification v;
  std::vector<std::string> levels;
  walk_cache(dir_, shared(), [&](const fs::path& p, const struct stat& st) {
    if (is_temp_name(p.filename().string())) return;
    const bool link = S_ISLNK(st.st_mode);
    if (!link && !S_ISREG(st.st_mode)) return;  // no entry of ours; builds never open it
    ++v.entries;
    const std::string key = p.filename().string();
    const std::string kind = p.parent_path().parent_path().filename().string();
    auto bad = [&](const std::string& problem) { v.corrupt.push_back(p.string() + ": " + problem); };
    // A build finds it corrupt (and removes it): never followed.
    if (link) return bad("a symbolic link, not an entry");
    if (std::string d = detail::distrust(st, shared()); !d.empty()) return bad("the entry " + d);
    struct stat now {};
    auto bytes = detail::read_at(AT_FDCWD, p.string(), kHeaderSize + kMaxPayloadSize, now);
    if (!bytes) return bad("unreadable, or larger than any entry can be");
    auto decoded = decode_entry(*bytes, kind, key, trust_.signing_key);
    if (!decoded) return bad(decoded.error().message);
    if (validate)
      if (std::string problem = validate(kind, *decoded); !problem.empty()) bad(problem);
  }, levels);
  // Each level builds refuse: said as for v1 itself, and `cache verify` fails.
  for (const std::string& level : levels) {
    if (!v.not_walked.empty()) v.not_walked += "; ";
    const bool top = level.rfind("v1 ", 0) == 0;
    v.not_walked += level + (level.ends_with("symbolic link") ? ": not followed, " : ": not entered, ") +
                    (top ? "no entry checked" : "no entry under it checked");
  }
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
    if (S_ISLNK(st.st_mode)) {  // planted in place of an entry: a build would remove it too
      ::unlink(p.c_str());
      return;
    }
    if (!S_ISREG(st.st_mode)) return;
    items.push_back({p, uint64_t(st.st_size), to_ns(st.st_mtim)});
    total += uint64_t(st.st_size);
  };
  std::vector<std::string> not_walked;  // said by `cache stats` and `verify`
  walk_cache(dir_, shared(), visit, not_walked);
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
  return account(0, max_size);
}


std::string format_size(uint64_t bytes) { return util::format_bytes(bytes); }

}  // namespace ob::storage
