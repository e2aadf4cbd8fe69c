// Remote storage, as in ccache: a backend is one class with get / put /
// remove of encoded entries (the same bytes as the local cache's files), each
// failing with a reason, error or timeout. Backends: Redis (redis_storage.cpp)
// and HTTP (http_storage.cpp). They know nothing of entries, jobs or other
// backends; the layering (local first, remotes in order, verify, back-fill,
// disable after a failure, uploads) is in layered.cpp alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "offload_build/util/result.hpp"

namespace ob::storage {

// The default cap on one remote value, stored and uncompressed (max-entry-size).
inline constexpr uint64_t kDefaultMaxRemoteEntryBytes = 64ull << 20;  // 64 MiB

// One configured remote: `URL|attribute=value|...` (docs/CACHE.md). The
// shared fields, then those of the builtin backends; a backend added later
// keeps its own attributes in `options` (backend_registry.hpp).
struct RemoteConfig {
  enum class Scheme { Redis, RedisUnix, Http, Https, Other };
  enum class Layout { Subdirs, Flat, Bazel };  // HTTP only
  std::string prefix;             // the registered scheme it parsed as: "redis://", "redis+unix:"
  Scheme scheme = Scheme::Other;  // the builtin backends' own
  std::string host;               // redis, http(s); brackets removed from IPv6
  int port = 0;                   // 0: the scheme's default
  std::string path;               // redis+unix: the socket; http(s): the prefix, "" or "/x/y"
  int db = 0;                     // redis
  std::string user;               // from the URL (after ${VAR} expansion)
  std::string password;
  std::string bearer_token;       // http(s): bearer-token attribute
  std::string ca_file;            // https: ca-file attribute (PEM CA certificates to trust)
  bool has_password = false;      // for redaction: the URL carried one
  bool literal_secret = false;    // a credential written in the text, not as ${VAR}
  bool read_only = false;
  bool allow_unsigned = false;    // no warning for a writable remote without a signing key
  // What it serves goes to the local cache only, and so does whatever is built
  // from it (Lookup::confined): the engine's layer, which any client of the
  // engine may write, unless the engine is trusted and a signing key is set.
  bool confined = false;
  int connect_timeout_ms = 100;
  int operation_timeout_ms = 2000;
  bool compress = true;           // send zstd-compressed entries (as stored locally)
  // max-entry-size: the most bytes a value read from this remote may have, and
  // the most its entry may declare uncompressed; bigger ones are refused before
  // they are allocated or decompressed, and entries bigger are not uploaded.
  uint64_t max_entry_bytes = kDefaultMaxRemoteEntryBytes;
  Layout layout = Layout::Subdirs;
  // Uploads handed to the backend at once (RemoteBackend::put_all): 1 for
  // the URL schemes; the engine's layer sends its values together.
  size_t upload_batch = 1;
  std::map<std::string, std::string, std::less<>> options;  // another backend's attributes
  std::string display;            // the URL with every credential replaced by ***
  // Why this remote cannot be used although it parsed (a credential's
  // environment variable is unset): it is skipped with this warning.
  std::string unusable;
};

// Parse one URL of a builtin backend (backend_registry.hpp). Errors quote
// nothing of the text ("remote storage (unparsable; hidden): REASON").
Result<RemoteConfig> parse_remote_url(std::string_view text);
// The one form in which remote storage text is shown anywhere (config, doctor,
// -v, messages, stats): `text` with the password of its URL and every secret
// attribute's value replaced by ***; text that does not parse is never shown,
// only "(unparsable; hidden)".
std::string redact_remote_url(std::string_view text);
// OFFLOAD_BUILD_REMOTE_STORAGE: space-separated URLs.
std::vector<std::string> split_remote_list(std::string_view text);

// Why a backend call failed.
struct RemoteFailure {
  enum class Kind { Error, Timeout };
  Kind kind = Kind::Error;
  std::string message;
};

template <class T>
class RemoteResult {
 public:
  RemoteResult(T value) : v_(std::move(value)) {}             // NOLINT(implicit)
  RemoteResult(RemoteFailure failure) : v_(std::move(failure)) {}  // NOLINT(implicit)
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& operator*() { return std::get<0>(v_); }
  const RemoteFailure& failure() const { return std::get<1>(v_); }

 private:
  std::variant<T, RemoteFailure> v_;
};

// A remote backend. Not thread-safe: one connection each; the layer makes one
// for lookups and one per upload thread. `kind` and `key` are [A-Za-z0-9_-].
class RemoteBackend {
 public:
  virtual ~RemoteBackend() = default;
  // The value, or nullopt when the remote has none.
  virtual RemoteResult<std::optional<std::string>> get(std::string_view kind,
                                                       std::string_view key) = 0;
  // Done with the value get() last returned: a backend that counts what it
  // holds at once (the engine's cap on what it sends, reapi::HeldBytes)
  // keeps its room until then (at the latest until the next get). The layer
  // calls it when it has verified, stored or dropped the value.
  virtual void release_value() {}
  // Store `value`; false when it existed and `overwrite` is false.
  virtual RemoteResult<bool> put(std::string_view kind, std::string_view key,
                                 std::string_view value, bool overwrite) = 0;
  // Remove; false when there was nothing.
  virtual RemoteResult<bool> remove(std::string_view kind, std::string_view key) = 0;
  // Store several values, each overwriting: whether each was stored. A
  // backend that can send them together overrides it.
  struct Put {
    std::string_view kind, key, value;
  };
  virtual RemoteResult<std::vector<bool>> put_all(const std::vector<Put>& puts) {
    std::vector<bool> stored;
    for (const auto& p : puts) {
      auto done = put(p.kind, p.key, p.value, true);
      if (!done) return done.failure();
      stored.push_back(*done);
    }
    return stored;
  }

  // The most the next calls may take, each: the layer sets it before every
  // call from what is left of this remote's time budget for the build
  // (layered.cpp). A backend ends each call by the earlier of its own
  // timeouts and this (connecting keeps its connect-timeout).
  void limit_calls_to(int64_t ms) { call_limit_ms_ = ms; }

 protected:
  // `own_ms` (the backend's timeout for a call), or less when the layer said so.
  int64_t call_ms(int64_t own_ms) const { return std::min(own_ms, call_limit_ms_); }

 private:
  int64_t call_limit_ms_ = INT64_MAX;
};

std::unique_ptr<RemoteBackend> make_redis_backend(const RemoteConfig& config);
std::unique_ptr<RemoteBackend> make_http_backend(const RemoteConfig& config);
// The backend of the scheme `config` parsed as (builtin registry).
std::unique_ptr<RemoteBackend> make_remote_backend(const RemoteConfig& config);

// Where entries live on a remote, for the docs, tests and `doctor`:
// Redis key "offload-build:v2:<kind>:<key>" (v: the entry format version);
// HTTP path below the prefix "v2/<kind>/<key[0:2]>/<key>" (subdirs),
// "v2-<kind>-<key>" (flat) or
// "ac/<sha256 of the Redis key>" (bazel).
std::string redis_key(std::string_view kind, std::string_view key);
std::string http_path(RemoteConfig::Layout layout, std::string_view kind, std::string_view key);

}  // namespace ob::storage
