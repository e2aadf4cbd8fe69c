// The cache's storage as the job cache sees it: the local directory first,
// then each remote in order. The one place that knows there are layers:
// a remote value is verified before use and written back to the local cache;
// a remote that fails (error or timeout) is warned about once and not used
// again in this process; a value that is not a valid entry for us is skipped
// with one warning (a damaged one removed by a writer; one signed with another
// key, or unsigned, left alone) and the remote stays on; a stored entry is sent to every writable remote by one
// upload thread per remote, in parallel with the build, through a bounded
// queue that finish_uploads() drains. get, put and discard may be called
// from several threads at once (the executor's concurrent lookups): each
// concurrent lookup of a remote has its own connection, and the local cache
// is used by one thread at a time.
#pragma once

#include <functional>
#include <optional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "offload_build/storage/storage.hpp"
#include "offload_build/storage/remote/remote.hpp"

namespace ob::storage {

// The local cache's kind of marks (LayeredStorage::put_confined): an entry
// whose metadata is this name, under the marked entry's kind and key.
inline constexpr std::string_view kConfinedKind = "confined";

using BackendFactory = std::function<std::unique_ptr<RemoteBackend>(const RemoteConfig&)>;
// make_remote_backend(config), named so that backend_registry.hpp's overload
// (config, registry) seen in the same unit does not make it ambiguous.
using MakeBackendFn = std::unique_ptr<RemoteBackend>(const RemoteConfig&);

struct LayeredOptions {
  BackendFactory factory = static_cast<MakeBackendFn*>(make_remote_backend);  // tests give fakes
  // Upload queue bound per remote: past it, put() waits for the upload thread.
  size_t max_queued_bytes = 64u << 20;
  // Where the once-per-remote warnings go (one write(2) each); -1: nowhere.
  int warning_fd = 2;
  // For warnings said once per build rather than once per process (launcher
  // mode: a process per compile): true when `code` was not said yet in this
  // build. Unset: once per process.
  std::function<bool(const std::string& code)> first_in_build;
  // Remember the kind and key of every entry get() found and put() stored
  // locally (used(): the engine's working set, exec/remote/working_set.hpp).
  bool note_used = false;
};

class LayeredStorage {
 public:
  LayeredStorage(Storage& local, std::vector<RemoteConfig> remotes = {},
                 LayeredOptions options = {});
  ~LayeredStorage();  // finishes the uploads
  LayeredStorage(const LayeredStorage&) = delete;
  LayeredStorage& operator=(const LayeredStorage&) = delete;

  // The local cache itself, for what is not a lookup of the build (records,
  // stats): not while lookups may run. During a build use get_local/put_local.
  Storage& local() { return local_; }
  // The local layer alone (entries that are hints, never shared: `place`).
  Lookup get_local(std::string_view kind, std::string_view key);
  bool put_local(std::string_view kind, std::string_view key, const Entry& entry);
  // put_local of an entry that must never reach remote storage (served by a
  // confined remote, or built from one: Lookup::confined), marked so in the
  // local cache: a later local hit of it is confined too.
  bool put_confined(std::string_view kind, std::string_view key, const Entry& entry);
  // Whether the local cache's entry is so marked.
  bool marked_confined(std::string_view kind, std::string_view key);
  // Whether a put() can store anywhere: the local cache or a writable remote.
  bool writable() const;
  // Whether any remote storage is layered over the local cache.
  bool has_remotes() const { return !remotes_.empty(); }
  void warn_if_unwritable() const { local_.warn_if_unwritable(); }

  // Local first, then each usable remote in order. A remote value is returned
  // only after it decoded as the entry for (kind, key), and is then stored
  // locally. A corrupt local entry that no remote replaces stays Corrupt.
  Lookup get(std::string_view kind, std::string_view key);
  // Store locally and queue the upload to every writable remote.
  bool put(std::string_view kind, std::string_view key, const Entry& entry);
  // An entry found unusable above the storage (metadata that does not
  // validate): removed from the local cache, where a remote value was written
  // back (a remote's copy is refused by the same check next time).
  void discard(std::string_view kind, std::string_view key);

  // Wait for the queued uploads (bounded by each remote's timeouts).
  void finish_uploads();
  // finish_uploads(), then add `delta` and the remotes' counters to the
  // local cache's shared counters.
  void record(const Counters& delta);
  // The entries found or stored so far, as (kind, key) (LayeredOptions::note_used).
  std::set<std::pair<std::string, std::string>> used() const;
  // This process's per-remote counters so far (by redacted URL).
  std::map<std::string, RemoteCounters> remote_counters() const;

 private:
  struct Remote;
  void disable(Remote& remote, const std::string& why);  // and warn, once
  void fail(Remote& remote, const RemoteFailure& failure);  // count, disable, warn
  void reject(Remote& remote, RemoteBackend& backend, std::string_view kind, std::string_view key, const std::string& why,
              EntryFault fault);
  void say(const std::string& line) const;  // one write(2) to warning_fd
  void note_once(Remote& remote, const std::string& code, const std::string& text);
  void warn_if_unsigned(Remote& remote);
  void upload_loop(Remote& remote);
  template <class Call>
  auto timed(Remote& remote, RemoteBackend& backend, Call call);  // within the build's budget
  bool replaceable(Remote& remote, RemoteBackend& backend, std::string_view kind, std::string_view key);
  // A value from `remote` (fetched with `backend`): verified, written back locally.
  std::optional<Lookup> fetch(Remote& remote, RemoteBackend& backend, std::string_view kind,
                              std::string_view key);

  void mark_confined(std::string_view kind, std::string_view key);  // under local_mu_

  Storage& local_;
  LayeredOptions options_;
  bool leaks_ = false;  // a writable remote not confined: local hits are checked for a confined mark
  std::vector<std::unique_ptr<Remote>> remotes_;
  mutable std::mutex local_mu_;  // the local Storage: one thread at a time
  std::mutex misses_mu_;
  std::set<std::string> remote_misses_;  // "kind/key" no remote had, this process (misses_mu_)
  void note_used(std::string_view kind, std::string_view key);
  mutable std::mutex used_mu_;
  std::set<std::pair<std::string, std::string>> used_;  // (used_mu_)
};

// The one check a remote value passes before anything uses it: the entry
// format (magic, version, checksum, payload). `kind` and `key` are what the
// value was asked for (entries bound to their key are checked here too).
// A value over `max_entry_bytes` (as received, or declared uncompressed) is
// refused before it is decompressed; `fault` says why a value was refused.
Result<Entry> verify_remote_value(std::string_view kind, std::string_view key,
                                  std::string_view bytes, std::string_view signing_key = {},
                                  uint64_t max_entry_bytes = kDefaultMaxRemoteEntryBytes,
                                  EntryFault* fault = nullptr);

// `doctor`: read one probe key from the remote and say what happened:
// "reachable (1.2 ms; read-write)", or the failure, error or timeout.
std::string probe_remote(const RemoteConfig& config, const BackendFactory& factory = static_cast<MakeBackendFn*>(make_remote_backend));

// Keep every credential of the remote_storage setting, from every source
// (--remote-storage, $OFFLOAD_BUILD_REMOTE_STORAGE, the config files), from
// child processes: the variables their `${VAR}` forms name, and the variable
// itself when it holds a password or token. Parses only; errors are the
// build's to report. Called once at each entry (cli::dispatch, launcher
// mode's launch()) before any command starts; configured_remotes does not
// repeat it (its own parsing hides the `${VAR}` forms of the list it uses).
void hide_remote_credentials(const config::Config& config);
// The remotes configured for a build: the remote_storage setting in force
// (config/config.hpp: --remote-storage, then $OFFLOAD_BUILD_REMOTE_STORAGE
// when set (empty: none)), with `manifest` in the manifest's place. An
// unparsable URL is an error naming where it came from.
Result<std::vector<RemoteConfig>> configured_remotes(const config::Config& config,
                                                     const std::vector<std::string>& manifest);

}  // namespace ob::storage
