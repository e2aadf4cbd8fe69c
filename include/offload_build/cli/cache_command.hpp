// `offload-build cache stats [--json] | clear | prune [--max-size SIZE]`.
// Each returns the process exit code and prints only to `out`. The caller
// resolves the directory (the cache_dir setting, manifest "cache_dir"), the
// size limit (--max-size, the max_size setting, manifest) and whom the cache
// trusts (storage::Trust::from_config; by default a private, unsigned cache).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>
#include <filesystem>
#include <optional>
#include <ostream>

#include "offload_build/run/launcher.hpp"
#include "offload_build/storage/storage.hpp"

namespace ob::cli {

namespace fs = std::filesystem;

// Directory, entries, size / max, hits, misses (by reason), hit rate, corrupt,
// stores, store failures, evictions. With `json`, one object:
// {"dir","entries","bytes","max_size","hits","misses","misses_by_reason",
//  "corrupt","stores","store_failures","evictions","remotes","unchanged_by_reason",
//  "unsupported_options"}; "remotes" maps
// each remote storage's redacted URL to {"hits","misses","errors","timeouts",
// "rejected","bad_signature","oversized","kept_foreign","uploads","bytes_read",
// "bytes_written"}.
// Does not create `dir`.
int cache_stats(const fs::path& dir, bool json, std::ostream& out,
                uint64_t max_size = storage::default_max_size(), const storage::Trust& trust = {});

// Zero the counters, keeping the entries (`cache stats --zero`, as ccache -z).
int cache_zero(const fs::path& dir, std::ostream& out, const storage::Trust& trust = {});
// The `n` largest counts, largest first (ties in name order; storage.hpp).
using storage::most_frequent;
// Decode every entry; exit 1 (listing them) when any is corrupt.
int cache_verify(const fs::path& dir, std::ostream& out, const storage::Trust& trust = {});

// Remove every entry and zero the counters.
int cache_clear(const fs::path& dir, std::ostream& out, const storage::Trust& trust = {});

// Evict least-recently-used entries down to `max_size` (default: the
// max_size setting's), and stale temporary files.
int cache_prune(const fs::path& dir, std::optional<uint64_t> max_size, std::ostream& out,
                const storage::Trust& trust = {});

}  // namespace ob::cli
