// The on-disk cache: self-describing entries (magic, format version, XXH3
// checksum, zstd payload) stored by key, written atomically, shared safely by
// many processes, bounded in size with least-recently-used eviction.
// Nothing here knows about jobs or compilers; src/cache/job_cache.cpp does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "offload_build/config/config.hpp"
#include "offload_build/util/result.hpp"
#include "offload_build/util/size_text.hpp"

namespace ob::storage {

namespace fs = std::filesystem;
namespace detail {
class Fd;
}

// The max_size setting's default (its row in config/settings.cpp).
inline uint64_t default_max_size() { return config::default_size("max_size"); }

// Entry format (see src/storage/entry.cpp for the byte layout).
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr size_t kHeaderSize = 72;
// The largest uncompressed payload an entry may hold. encode_entry refuses
// nothing, but put() does not store larger entries and decode_entry rejects them.
inline constexpr uint64_t kMaxPayloadSize = 2ull << 30;  // 2 GiB

// One stored value: free-form metadata (JSON text) and named files.
struct EntryFile {
  std::string name;
  std::string data;
};
struct Entry {
  std::string metadata;
  std::vector<EntryFile> files;
};

// Serialization, shared by every storage backend (local and remote), so one
// signing key protects both. An entry is bound to the `kind` and `key` it is
// stored under (recorded inside the checksummed and signed bytes): decoding
// it under any other name fails. With a non-empty `signing_key` encode_entry
// signs with HMAC-SHA256 and decode_entry refuses entries not signed with that
// key; with an empty one signatures are neither made nor checked.
// decode_entry fails (never throws, never crashes) on truncated,
// foreign-magic, other-version, checksum-bad, unsigned, wrongly signed or
// misplaced input, saying which in the error message.
// `compress` false stores the payload as is (remote storage's compress=false).
std::string encode_entry(const Entry& entry, std::string_view kind, std::string_view key,
                         std::string_view signing_key = {}, bool compress = true);
// The uncompressed payload's size, checked against kMaxPayloadSize.
uint64_t payload_size(const Entry& entry);
// Why decode_entry refused its input: damage (anything the checksum, the
// format or the binding to kind/key catches), no signature where a key is
// set, a signature made with another key (a valid entry of someone else's),
// or a declared payload over `max_payload` (refused before anything is
// decompressed).
enum class EntryFault { Damaged, Unsigned, OtherKey, TooLarge };
// `max_payload`: the largest uncompressed payload accepted (remote values:
// the remote's max-entry-size). The binding is checked as soon as the first
// decompressed bytes arrive, so a misplaced value costs no full decompression.
// `fault`, when given, says which kind of failure an error is.
Result<Entry> decode_entry(std::string_view bytes, std::string_view kind, std::string_view key,
                           std::string_view signing_key = {},
                           uint64_t max_payload = kMaxPayloadSize, EntryFault* fault = nullptr);

// Whom the cache trusts (docs/CACHE.md, "Trust"). By default a cache is
// private: every directory and entry must belong to this user (or root) and be
// writable by no one else, or the cache is not used (one warning). A shared
// cache is opted into with an explicit umask (OFFLOAD_BUILD_CACHE_UMASK, as
// ccache's `umask`): then group-writable directories and entries of one of our
// groups are trusted too, and what we create gets that umask.
struct Trust {
  std::string signing_key;          // OFFLOAD_BUILD_SIGNING_KEY or the file in _FILE
  std::optional<unsigned> umask;    // OFFLOAD_BUILD_CACHE_UMASK (octal): a shared cache
  std::string problem;              // a setting that could not be used: the cache is off

  // From the settings in force (cache_umask, signing_key, signing_key_file);
  // problems (unreadable key file, bad umask) land in `problem`.
  static Trust from_config(const config::Config& config);
};

// One remote storage's counters (keyed by its redacted URL in Counters).
struct RemoteCounters {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;       // failures other than timeouts, and values that failed verification
  uint64_t timeouts = 0;
  uint64_t rejected = 0;     // of the errors: values that were not a valid entry for the key
  uint64_t bad_signature = 0;  // values not signed with our key: skipped, left on the server
  uint64_t oversized = 0;    // values over max-entry-size: skipped, left on the server
  uint64_t kept_foreign = 0;  // uploads not made: the server holds another key's entry there
  uint64_t uploads = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;

  RemoteCounters& operator+=(const RemoteCounters& other);
  bool any() const;
};

// Counters kept in the cache directory and shown by `cache stats`.
struct Counters {
  uint64_t hits = 0;
  // Launcher compiles served from their whole entry (of `hits`, each counted once per job).
  uint64_t whole_compiles = 0;
  uint64_t misses = 0;
  std::map<std::string, uint64_t> misses_by_reason;  // "no entry", "corrupt", ...
  uint64_t corrupt = 0;      // entries found unreadable (then removed)
  uint64_t stores = 0;
  uint64_t store_failures = 0;
  uint64_t evictions = 0;
  uint64_t bytes_stored = 0;  // added by record(): evicts past a tenth of the limit (put() keeps its own tally)
  std::map<std::string, RemoteCounters> remotes;  // by redacted URL
  // Remote execution (docs/DISTRIBUTED.md): jobs the engine executed, jobs
  // its action cache served, jobs sent and run locally after all.
  uint64_t remote_executions = 0;
  uint64_t engine_cache_hits = 0;
  uint64_t remote_fallbacks = 0;
  // Launcher mode: compiles run unchanged, by reason ("unsupported option", ...).
  std::map<std::string, uint64_t> unchanged_by_reason;
  // Of those, "unsupported option" by the option's name (as its frontend names it):
  // the kMaxNamedOptions most frequent are kept.
  std::map<std::string, uint64_t> unsupported_options;
  static constexpr size_t kMaxNamedOptions = 32;

  Counters& operator+=(const Counters& other);
  bool any() const;  // anything counted (misses_by_reason only splits misses)
};

// The `n` largest counts, largest first (ties in name order): the unsupported
// options a launcher's -v and `cache stats` name.
std::vector<std::pair<std::string, uint64_t>> most_frequent(const std::map<std::string, uint64_t>& counts,
                                                            size_t n);

// The counters as JSON: stats.json's fields (without its version) and
// `cache stats --json`'s (with the directory's size added there).
nlohmann::json counters_to_json(const Counters& c);

struct Usage {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  // Directory levels not walked, as builds refuse them ("v1/result is a
  // symbolic link"): the same walk for stats, verify, prune and clear.
  std::vector<std::string> not_walked;
};

enum class LookupStatus { Hit, Missing, Corrupt };

struct Lookup {
  LookupStatus status = LookupStatus::Missing;
  Entry entry;              // when Hit
  std::string problem;      // when Corrupt: what was wrong
  // When Hit: served by a remote whose entries never reach remote storage
  // (RemoteConfig::confined: the engine's layer), nor what is built from them.
  bool confined = false;
};

class Storage {
 public:
  // Open (creating if possible) the cache at `dir`. Never fails: a directory
  // that cannot be created or written makes a read-only or disabled cache.
  // Without `trust`: a private cache with no signing key (Trust::from_config
  // gives the settings' trust).
  Storage(fs::path dir, uint64_t max_size = default_max_size(), Trust trust = {});

  const fs::path& dir() const { return dir_; }
  bool writable() const { return writable_; }
  // False when the cache is refused (owner or permissions, see Trust): get()
  // then finds nothing and put() stores nothing.
  bool trusted() const { return distrust_.empty(); }
  const std::string& distrust_reason() const { return distrust_; }
  bool shared() const { return trust_.umask.has_value(); }
  const std::string& signing_key() const { return trust_.signing_key; }
  uint64_t max_size() const { return max_size_; }

  // Where `key` of `kind` lives: <dir>/v1/<kind>/<key[0:2]>/<key>. Keys and
  // kinds are [A-Za-z0-9_-], the key at least 3 characters; get() of an
  // invalid one is Missing and put() of one returns false (without a warning).
  fs::path entry_path(std::string_view kind, std::string_view key) const;

  // Look up `key` (hex) in `kind` ("result", "manifest"). A hit refreshes the
  // entry's time for LRU; a corrupt entry is removed (when writable) and reported.
  Lookup get(std::string_view kind, std::string_view key);

  // The entry's bytes as stored (what a remote holds: the engine's working
  // set, exec/remote/working_set.hpp), unchecked; nullopt when there is none.
  std::optional<std::string> get_encoded(std::string_view kind, std::string_view key);

  // Store atomically (temp file in the same directory + rename), then count the
  // bytes and evict past the limit (account_store). Returns false and warns
  // once per process (stderr) when the cache cannot be written.
  bool put(std::string_view kind, std::string_view key, const Entry& entry);
  // The same with the entry already encoded (remote storage: one encoding for
  // every layer; a verified remote value written back as received).
  bool put_encoded(std::string_view kind, std::string_view key, std::string_view bytes);

  // Remove the entry `key` of `kind` (found unusable by the caller: metadata
  // that does not validate). Counted by the caller as corrupt.
  void discard(std::string_view kind, std::string_view key);

  // Add this process's counters to the shared ones (under a file lock), then
  // evict if the cache grew past its limit.
  void record(const Counters& delta);
  Counters counters() const;
  // Zero the counters (`cache stats --zero`, as ccache -z); entries stay.
  void zero_counters();
  Usage usage() const;

  // Decode every entry (`cache verify`): how many there are and which are bad
  // (owner and permissions, format, checksum, where it is stored, signature
  // with a key, then `validate`: the metadata problem, empty when fine).
  struct Verification {
    uint64_t entries = 0;
    std::vector<std::string> corrupt;  // "path: problem"
    // Directory levels not walked, and why ("v1/result is a symbolic link: not
    // followed, no entry under it checked"); empty when every level was.
    std::string not_walked;
  };
  using Validator = std::function<std::string(std::string_view kind, const Entry&)>;
  Verification verify(const Validator& validate = {}) const;

  // The once-per-process warning, now, if the cache cannot be written or is
  // not trusted: a build that only hits never tries to store, yet the user
  // should know.
  void warn_if_unwritable() const;

  // Remove least-recently-used entries until the cache is at most `max_size`
  // (and stale temp files left by killed processes). Returns entries removed.
  uint64_t prune(uint64_t max_size);
  // Remove every entry and zero the counters.
  void clear();

 private:
  void mark_unwritable(const std::string& reason);
  // Under stats.lock: add `stored` bytes (a store's, on disk) to the tally
  // kept in stats.lock, then evict least-recently-used entries down to `prune_to`,
  // or, without one, down to 90% of the limit once a tenth of the limit was
  // stored since the last eviction: the limit holds while builds run.
  // Returns the entries removed (counted as evictions).
  uint64_t account(uint64_t stored, std::optional<uint64_t> prune_to);
  uint64_t remove_lru(uint64_t max_size);  // prune without touching the counters

  void check_trust();
  detail::Fd open_shard(std::string_view kind, std::string_view key, bool create);

  fs::path dir_;
  uint64_t max_size_;
  Trust trust_;
  std::string distrust_;  // why the cache is not trusted; empty when it is
  bool writable_ = false;
  std::string unwritable_reason_;  // strerror text of the failure, for the warning
};

// Small safe-file helpers for what lives next to the entries (probe memos):
// read a regular file not through a symlink, owned by us (or root) and not
// writable by others (unless `shared`); write one atomically (unpredictable
// temp name, O_EXCL | O_NOFOLLOW, rename) into `dir`, creating `dir` (one
// level) when missing. Both fail quietly (nullopt / false).
std::optional<std::string> read_trusted_file(const fs::path& path, bool shared);
bool write_file_atomically(const fs::path& dir, std::string_view name, std::string_view bytes,
                           std::optional<unsigned> umask = std::nullopt);

// Sizes for --max-size and max_size (util/size_text.hpp).
using util::parse_size;
// "512 B", "12.3 MiB", "5.0 GiB" (binary units, one decimal).
std::string format_size(uint64_t bytes);

}  // namespace ob::storage
