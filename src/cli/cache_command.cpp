// The `cache` subcommands: stats, clear, prune.
#include "offload_build/cli/cache_command.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "offload_build/cache/entry_metadata.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"
#include "offload_build/util/strings.hpp"
#include "offload_build/util/json_text.hpp"

namespace ob::cli {

namespace {

// Label and value lines, every value starting in one column (two spaces past
// the longest label), and headings.
class Rows {
 public:
  void add(std::string label, std::string value) { lines_.push_back({std::move(label), std::move(value), true}); }
  void heading(std::string text) { lines_.push_back({std::move(text), {}, false}); }
  void print(std::ostream& out) const {
    size_t width = 0;
    for (const auto& l : lines_)
      if (l.has_value) width = std::max(width, l.label.size());
    for (const auto& l : lines_)
      out << (l.has_value ? fmt::format("{:<{}}{}\n", l.label, width + 2, l.value) : l.label + "\n");
  }

 private:
  struct Line {
    std::string label, value;
    bool has_value;
  };
  std::vector<Line> lines_;
};

constexpr size_t kOptionsShown = 5;  // unsupported options named in `cache stats`

// A cache path that exists but is not a directory: an error naming it (exit 2).
std::optional<int> not_a_directory(const fs::path& dir, std::ostream& out) {
  std::error_code ec;
  if (!fs::exists(dir, ec) || fs::is_directory(dir, ec)) return std::nullopt;
  out << fmt::format(
      "offload-build: error: cache directory {} is not a directory; pass --cache-dir DIR (or set "
      "OFFLOAD_BUILD_CACHE_DIR) to a directory, or remove the file\n",
      util::shorten(dir.string(), 300));
  return exit_code::usage;
}

// The cache for clear/prune: nullopt (after saying why) when there is nothing
// to change or it cannot be changed; `code` is then the exit code.
std::optional<storage::Storage> open_for_change(const fs::path& dir, uint64_t limit,
                                              const storage::Trust& trust, std::string_view verb,
                                              std::ostream& out, int& code) {
  std::error_code ec;
  code = exit_code::ok;
  if (auto c = not_a_directory(dir, out)) {
    code = *c;
    return std::nullopt;
  }
  if (!fs::exists(dir, ec)) {
    out << fmt::format("cache directory {} does not exist; nothing to {}\n", dir.string(), verb);
    return std::nullopt;
  }
  std::optional<storage::Storage> storage(std::in_place, dir, limit, trust);
  if (!storage->trusted()) {
    out << fmt::format("offload-build: error: cache directory {} is not used by builds ({}); "
                       "nothing removed\n",
                       storage->dir().string(), storage->distrust_reason());
    code = exit_code::failure;
    return std::nullopt;
  }
  if (!storage->writable()) {
    out << fmt::format("offload-build: error: cache directory {} is not writable; nothing removed\n",
                       storage->dir().string());
    code = exit_code::failure;
    return std::nullopt;
  }
  return storage;
}

}  // namespace

int cache_stats(const fs::path& dir, bool json, std::ostream& out, uint64_t max_size,
                const storage::Trust& trust) {
  if (auto code = not_a_directory(dir, out)) return *code;
  // Looking must not create the directory.
  std::error_code ec;
  storage::Counters c;
  storage::Usage u;
  std::string problem;  // why builds do not use it
  fs::path shown = fs::absolute(dir, ec).lexically_normal();
  if (ec) shown = dir;
  if (fs::exists(dir, ec)) {
    storage::Storage storage(dir, max_size, trust);
    c = storage.counters();
    u = storage.usage();  // never through a symlinked or untrusted level
    problem = storage.distrust_reason();
    if (problem.empty()) problem = util::join(u.not_walked, "; ");
  }
  if (json) {
    nlohmann::json j = storage::counters_to_json(c);
    j.erase("bytes_stored");  // eviction's own tally since the last prune; "bytes" is the size
    j["dir"] = shown.string();
    j["entries"] = u.entries;
    j["bytes"] = u.bytes;
    j["max_size"] = max_size;
    if (!problem.empty()) j["not_used"] = problem;
    out << util::dump_replacing(j) << "\n";
    return exit_code::ok;
  }
  if (!problem.empty()) out << fmt::format("warning: builds do not use this cache: {}\n", problem);
  Rows rows;
  rows.add("cache directory", shown.string());
  rows.add("entries", std::to_string(u.entries));
  rows.add("size", storage::format_size(u.bytes) + " / " + storage::format_size(max_size));
  rows.add("hits", std::to_string(c.hits));
  if (c.whole_compiles) rows.add("  compiles served whole", std::to_string(c.whole_compiles));  // launcher mode
  rows.add("misses", std::to_string(c.misses));
  for (const auto& [reason, n] : c.misses_by_reason) rows.add("  " + reason, std::to_string(n));
  uint64_t lookups = c.hits + c.misses;
  rows.add("hit rate", lookups ? fmt::format("{:.1f}%", 100.0 * double(c.hits) / double(lookups)) : "-");
  rows.add("corrupt entries", std::to_string(c.corrupt));
  rows.add("stores", std::to_string(c.stores));
  rows.add("store failures", std::to_string(c.store_failures));
  rows.add("evictions", std::to_string(c.evictions));
  for (const auto& [url, r] : c.remotes) {
    rows.heading("remote storage " + url);
    rows.add("  hits", std::to_string(r.hits));
    rows.add("  misses", std::to_string(r.misses));
    rows.add("  errors", fmt::format("{} ({} invalid entries)", r.errors, r.rejected));
    rows.add("  timeouts", std::to_string(r.timeouts));
    rows.add("  skipped", fmt::format("{} not signed with this key, {} over max-entry-size",
                                      r.bad_signature, r.oversized));
    rows.add("  uploads", r.kept_foreign ? fmt::format("{} ({} not made: another key's entry there)",
                                                       r.uploads, r.kept_foreign)
                                          : std::to_string(r.uploads));
    rows.add("  bytes read", storage::format_size(r.bytes_read));
    rows.add("  bytes written", storage::format_size(r.bytes_written));
  }
  if (c.remote_executions || c.engine_cache_hits || c.remote_fallbacks) {
    rows.heading("remote execution");
    rows.add("  executed by the engine", std::to_string(c.remote_executions));
    rows.add("  engine cache hits", std::to_string(c.engine_cache_hits));
    rows.add("  run locally after all", std::to_string(c.remote_fallbacks));
  }
  uint64_t unchanged = 0;
  for (const auto& [reason, n] : c.unchanged_by_reason) unchanged += n;
  rows.add("compiles run unchanged", std::to_string(unchanged));  // launcher mode
  for (const auto& [reason, n] : c.unchanged_by_reason) {
    rows.add("  " + reason, std::to_string(n));
    if (reason != toolchain::frontend::unchanged::kOption) continue;
    for (const auto& [option, count] : most_frequent(c.unsupported_options, kOptionsShown))
      rows.add("    " + option, std::to_string(count));
  }
  rows.print(out);
  return exit_code::ok;
}

int cache_clear(const fs::path& dir, std::ostream& out, const storage::Trust& trust) {
  int code;
  auto storage = open_for_change(dir, storage::default_max_size(), trust, "clear", out, code);
  if (!storage) return code;
  storage::Usage before = storage->usage();
  for (const auto& level : before.not_walked)  // removed, never followed
    out << fmt::format("warning: {}: removed without following it\n", level);
  storage->clear();
  out << fmt::format("cleared {}: removed {} entries ({})\n", storage->dir().string(),
                     before.entries, storage::format_size(before.bytes));
  return exit_code::ok;
}

int cache_prune(const fs::path& dir, std::optional<uint64_t> max_size, std::ostream& out,
                const storage::Trust& trust) {
  uint64_t limit = max_size.value_or(storage::default_max_size());
  int code;
  auto opened = open_for_change(dir, limit, trust, "prune", out, code);
  if (!opened) return code;
  storage::Storage& storage = *opened;
  storage::Usage before = storage.usage();
  for (const auto& level : before.not_walked)
    out << fmt::format("warning: {}: not followed, nothing under it pruned (builds do not use "
                       "this cache; `offload-build cache clear` removes it)\n",
                       level);
  uint64_t removed = storage.prune(limit);
  storage::Usage after = storage.usage();
  out << fmt::format(
      "pruned {} to {}: removed {} entries ({}); {} entries ({}) remain\n", storage.dir().string(),
      storage::format_size(limit), removed,
      storage::format_size(before.bytes > after.bytes ? before.bytes - after.bytes : 0),
      after.entries, storage::format_size(after.bytes));
  return exit_code::ok;
}

int cache_verify(const fs::path& dir, std::ostream& out, const storage::Trust& trust) {
  if (auto code = not_a_directory(dir, out)) return *code;
  const storage::Storage storage(dir, storage::default_max_size(), trust);
  if (!storage.trusted())
    out << fmt::format("warning: builds do not use this cache: {}\n", storage.distrust_reason());
  if (!storage.signing_key().empty()) out << "checking signatures (a signing key is set)\n";
  const auto v = storage.verify(&cache::entry_problem);
  for (const auto& bad : v.corrupt) out << "corrupt: " << bad << '\n';
  if (!v.not_walked.empty()) {
    out << fmt::format("offload-build: error: cache {}: {}\n", dir.string(), v.not_walked);
    return exit_code::failure;
  }
  out << "cache " << dir.string() << ": " << v.entries << " entries, " << v.corrupt.size()
      << " corrupt\n";
  return v.corrupt.empty() ? 0 : 1;
}

}  // namespace ob::cli

namespace ob::cli {

int cache_zero(const fs::path& dir, std::ostream& out, const storage::Trust& trust) {
  int code;
  auto storage = open_for_change(dir, storage::default_max_size(), trust, "zero", out, code);
  if (!storage) return code;
  storage->zero_counters();
  out << fmt::format("zeroed the counters of {} (entries kept)\n", storage->dir().string());
  return exit_code::ok;
}

}  // namespace ob::cli
