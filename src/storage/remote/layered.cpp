// LayeredStorage: local first, remotes in order, verify, back-fill, disable a
// remote after its first failure, bounded uploads in parallel with the build.
#include "offload_build/storage/remote/layered.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/util/strings.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "offload_build/util/call_budget.hpp"
#include "offload_build/util/secrets.hpp"

namespace ob::storage {

struct LayeredStorage::Remote {
  RemoteConfig config;
  // Connections for lookups, one per lookup in progress (lookups run on
  // several threads), made on first use and kept for the next lookup.
  std::mutex lookups_mu;
  std::vector<std::unique_ptr<RemoteBackend>> idle_lookups;
  std::atomic<bool> disabled{false};
  std::atomic<bool> warned{false};
  std::atomic<bool> used{false};  // the unsigned-remote warning was considered
  std::atomic<int64_t> slow_ms{0};  // time requests spent past their allowances, this process

  std::mutex notes_mu;
  std::set<std::string> notes;  // once-per-process warnings said, by code

  mutable std::mutex mu;  // guards everything below
  RemoteCounters counters;
  struct Upload {
    std::string kind, key;
    std::shared_ptr<const std::string> bytes;
  };
  std::deque<Upload> queue;
  size_t queued_bytes = 0;
  size_t waiting = 0;  // put() calls waiting for room: the queue is sent now
  bool closing = false;
  std::condition_variable wake;   // the upload thread: work or closing
  std::condition_variable space;  // put(): room in the queue, or drained
  std::thread worker;
};

// A remote value is an entry for exactly this kind and key, signed with the
// local cache's key when one is set: the same check as a local entry's.
Result<Entry> verify_remote_value(std::string_view kind, std::string_view key,
                                  std::string_view bytes, std::string_view signing_key,
                                  uint64_t max_entry_bytes, EntryFault* fault) {
  if (bytes.size() > max_entry_bytes) {
    if (fault) *fault = EntryFault::TooLarge;
    return Error::failure(fmt::format("{} bytes, over max-entry-size ({} bytes)", bytes.size(),
                                      max_entry_bytes));
  }
  return decode_entry(bytes, kind, key, signing_key, max_entry_bytes, fault);
}

LayeredStorage::LayeredStorage(Storage& local, std::vector<RemoteConfig> remotes,
                               LayeredOptions options)
    : local_(local), options_(std::move(options)) {
  for (auto& config : remotes) {
    auto r = std::make_unique<Remote>();
    r->config = std::move(config);
    if (!r->config.unusable.empty()) disable(*r, r->config.unusable);  // not counted: no server asked
    leaks_ |= !r->config.read_only && !r->config.confined;
    remotes_.push_back(std::move(r));
  }
}

LayeredStorage::~LayeredStorage() { finish_uploads(); }

bool LayeredStorage::writable() const {
  {
    std::lock_guard lock(local_mu_);
    if (local_.writable()) return true;
  }
  for (const auto& r : remotes_)
    if (!r->config.read_only && !r->disabled) return true;
  return false;
}

// A remote's time budget for one build (util/call_budget.hpp), as the
// engine's: each request is allowed what a healthy server takes (250 ms,
// connect-timeout where less), what requests spend past it adds up, each
// call may take only what is left of the budget (as the backend's own
// limit), and once it is spent the remote is dropped for the build. So a
// server that answers every request slowly, never failing one, costs a
// build about operation-timeout + 1 s, not a timeout per request. Lookups
// and uploads draw on the same budget.
template <class Call>
auto LayeredStorage::timed(Remote& r, RemoteBackend& backend, Call call) {
  const int64_t healthy = util::healthy_call_ms(r.config.connect_timeout_ms);
  const util::BudgetRule rule = util::budget_rule(r.config.operation_timeout_ms, healthy);
  const int64_t budget = rule.budget_ms;
  // The backend takes the lesser of this and its own timeouts.
  const int64_t limit = rule.limit_ms(std::numeric_limits<int64_t>::max(), r.slow_ms.load(), healthy);
  backend.limit_calls_to(limit);
  const auto start = std::chrono::steady_clock::now();
  auto result = call(backend);
  const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - start).count();
  const int64_t slow = (r.slow_ms += util::BudgetRule::cost_ms(ms, healthy));
  auto too_slow = [&] {
    return RemoteFailure{RemoteFailure::Kind::Timeout,
                         fmt::format("too slow: its requests took {} ms past what a healthy server takes "
                                     "({} ms a request) in all, the most one build waits for one remote "
                                     "(operation-timeout + 1 s)",
                                     slow, healthy)};
  };
  // Cut short by what was left of the budget, not by its own timeout: say so.
  if (!result && result.failure().kind == RemoteFailure::Kind::Timeout &&
      limit < r.config.operation_timeout_ms)
    return decltype(result)(too_slow());
  if (result && slow >= budget && !r.disabled) fail(r, too_slow());
  return result;
}

void LayeredStorage::say(const std::string& line) const {
  if (options_.warning_fd < 0) return;
  ssize_t ignored = ::write(options_.warning_fd, line.data(), line.size());  // one write: whole
  (void)ignored;
}

void LayeredStorage::disable(Remote& remote, const std::string& why) {
  remote.disabled = true;
  remote.space.notify_all();
  if (remote.warned.exchange(true)) return;
  say(fmt::format(
      "offload-build: warning: remote storage {}: {}; not used for the rest of this build\n",
      remote.config.display, why));
}

void LayeredStorage::note_once(Remote& remote, const std::string& code, const std::string& text) {
  {
    std::lock_guard lock(remote.notes_mu);
    if (!remote.notes.insert(code).second) return;
  }
  if (options_.first_in_build && !options_.first_in_build(remote.config.display + " " + code)) return;
  say(fmt::format("offload-build: warning: {}remote storage {}: {}\n",
                  code == "unsigned" ? "unsigned " : "", remote.config.display, text));
}

// A writable remote without a signing key: whoever can write to the server
// decides what every client builds. Said once per build (silenced by
// |allow-unsigned), when the remote is first used.
void LayeredStorage::warn_if_unsigned(Remote& remote) {
  if (remote.used.exchange(true)) return;
  if (remote.config.read_only || remote.config.allow_unsigned || !local_.signing_key().empty()) return;
  note_once(remote, "unsigned",
            "its entries are stored and read unsigned: anyone who can write to this server can "
            "change what builds get. Set OFFLOAD_BUILD_SIGNING_KEY (the same on every client; "
            "docs/CACHE.md#what-is-checked-and-the-trust-model), or add |allow-unsigned to the URL to accept this");
}

void LayeredStorage::fail(Remote& remote, const RemoteFailure& failure) {
  const bool timeout = failure.kind == RemoteFailure::Kind::Timeout;
  {
    std::lock_guard lock(remote.mu);
    ++(timeout ? remote.counters.timeouts : remote.counters.errors);
  }
  disable(remote, failure.message + (timeout ? " (timed out)" : ""));
}

// A value that failed verification is skipped and the remote stays on. Only a
// damaged one is removed (by a writer, so that the next build that misses can
// store a good one). A valid entry signed with another key, or none, is left
// alone: it may be a team mate's, and a client with a mistyped key must not
// delete a team's entries. One warning per kind of problem.
void LayeredStorage::reject(Remote& remote, RemoteBackend& backend, std::string_view kind,
                            std::string_view key, const std::string& why, EntryFault fault) {
  const std::string id = fmt::format("{} {}", kind, key.substr(0, 16));
  if (fault == EntryFault::Unsigned || fault == EntryFault::OtherKey) {
    {
      std::lock_guard lock(remote.mu);
      ++remote.counters.bad_signature;
    }
    note_once(remote, "signature",
              fmt::format("the value for {} is not signed with this build's key ({}); skipped "
                          "and left on the server (counted as bad_signature in `cache stats`; "
                          "said once)", id, why));
    return;
  }
  if (fault == EntryFault::TooLarge) {
    {
      std::lock_guard lock(remote.mu);
      ++remote.counters.oversized;
    }
    note_once(remote, "oversized",
              fmt::format("the value for {} is too large ({}); skipped (max-entry-size=SIZE "
                          "raises the limit; said once)", id, why));
    return;
  }
  {
    std::lock_guard lock(remote.mu);
    ++remote.counters.rejected;
    ++remote.counters.errors;
  }
  std::string removed;
  if (!remote.config.read_only) {
    auto gone = timed(remote, backend, [&](RemoteBackend& b) { return b.remove(kind, key); });
    if (!gone) {
      fail(remote, gone.failure());
      return;
    }
    if (*gone) removed = "; removed";
  }
  note_once(remote, "damaged",
            fmt::format("the value for {} is not a valid entry ({}){} (said once)", id, why, removed));
}

Lookup LayeredStorage::get_local(std::string_view kind, std::string_view key) {
  std::lock_guard lock(local_mu_);
  return local_.get(kind, key);
}

bool LayeredStorage::put_local(std::string_view kind, std::string_view key, const Entry& entry) {
  std::lock_guard lock(local_mu_);
  return local_.put(kind, key, entry);
}

// The mark beside an entry that must not leave the local cache (its kind and
// key in the `confined` kind: an empty entry).
namespace {
std::string confined_name(std::string_view kind, std::string_view key) { return fmt::format("{}-{}", kind, key); }

// The backend told when the value its get returned is gone (RemoteBackend::release_value).
struct ValueHeld {
  RemoteBackend& backend;
  ~ValueHeld() { backend.release_value(); }
};
}  // namespace

void LayeredStorage::mark_confined(std::string_view kind, std::string_view key) {
  if (local_.writable()) local_.put(kConfinedKind, confined_name(kind, key), Entry{std::string(kConfinedKind), {}});
}

bool LayeredStorage::marked_confined(std::string_view kind, std::string_view key) {
  std::lock_guard lock(local_mu_);
  return local_.get(kConfinedKind, confined_name(kind, key)).status == LookupStatus::Hit;
}

bool LayeredStorage::put_confined(std::string_view kind, std::string_view key, const Entry& entry) {
  std::lock_guard lock(local_mu_);
  if (!local_.put(kind, key, entry)) return false;
  mark_confined(kind, key);
  return true;
}

void LayeredStorage::discard(std::string_view kind, std::string_view key) {
  std::lock_guard lock(local_mu_);
  local_.discard(kind, key);
}

void LayeredStorage::note_used(std::string_view kind, std::string_view key) {
  if (!options_.note_used) return;
  std::lock_guard lock(used_mu_);
  used_.emplace(kind, key);
}

std::set<std::pair<std::string, std::string>> LayeredStorage::used() const {
  std::lock_guard lock(used_mu_);
  return used_;
}

Lookup LayeredStorage::get(std::string_view kind, std::string_view key) {
  Lookup local = get_local(kind, key);
  if (local.status == LookupStatus::Hit) {
    note_used(kind, key);
    if (leaks_) local.confined = marked_confined(kind, key);
  }
  if (local.status == LookupStatus::Hit || remotes_.empty()) return local;
  // Asked already in this process, and no remote had it (storing a miss reads
  // its manifest entry again): no second round trip.
  std::string id = fmt::format("{}/{}", kind, key);
  {
    std::lock_guard lock(misses_mu_);
    if (remote_misses_.count(id)) return local;
  }
  for (auto& rp : remotes_) {
    Remote& r = *rp;
    if (r.disabled) continue;
    warn_if_unsigned(r);
    std::unique_ptr<RemoteBackend> backend;  // this lookup's own connection
    {
      std::lock_guard lock(r.lookups_mu);
      if (!r.idle_lookups.empty()) {
        backend = std::move(r.idle_lookups.back());
        r.idle_lookups.pop_back();
      }
    }
    if (!backend) backend = options_.factory(r.config);
    auto hit = fetch(r, *backend, kind, key);
    {
      std::lock_guard lock(r.lookups_mu);
      r.idle_lookups.push_back(std::move(backend));
    }
    if (hit) {
      note_used(kind, key);
      return std::move(*hit);
    }
  }
  std::lock_guard lock(misses_mu_);
  remote_misses_.insert(std::move(id));
  return local;
}

std::optional<Lookup> LayeredStorage::fetch(Remote& r, RemoteBackend& backend, std::string_view kind,
                                            std::string_view key) {
  const ValueHeld held{backend};  // destroyed after the value
  auto got = timed(r, backend, [&](RemoteBackend& b) { return b.get(kind, key); });
  if (!got) {
    fail(r, got.failure());
    return std::nullopt;
  }
  if (!*got) {
    std::lock_guard lock(r.mu);
    ++r.counters.misses;
    return std::nullopt;
  }
  const std::string& bytes = **got;
  {
    std::lock_guard lock(r.mu);
    r.counters.bytes_read += bytes.size();
  }
  EntryFault fault = EntryFault::Damaged;
  auto entry = verify_remote_value(kind, key, bytes, local_.signing_key(), r.config.max_entry_bytes,
                                   &fault);
  if (!entry) {
    got = std::optional<std::string>();  // gone, and its room with it, before the removal's call
    backend.release_value();
    reject(r, backend, kind, key, entry.error().message, fault);
    return std::nullopt;
  }
  {
    std::lock_guard lock(r.mu);
    ++r.counters.hits;
  }
  {
    std::lock_guard lock(local_mu_);
    if (local_.writable() && local_.put_encoded(kind, key, bytes) && r.config.confined)  // verified: as received
      mark_confined(kind, key);
  }
  Lookup hit;
  hit.status = LookupStatus::Hit;
  hit.entry = std::move(*entry);
  hit.confined = r.config.confined;
  return hit;
}

bool LayeredStorage::put(std::string_view kind, std::string_view key, const Entry& entry) {
  if (payload_size(entry) > kMaxPayloadSize) return false;  // too big to cache anywhere
  auto bytes = std::make_shared<const std::string>(encode_entry(entry, kind, key, local_.signing_key()));
  bool stored = false;
  {
    std::lock_guard lock(local_mu_);
    stored = local_.writable() && local_.put_encoded(kind, key, *bytes);
    if (stored && leaks_) local_.discard(kConfinedKind, confined_name(kind, key));  // ours now, not the engine's
  }
  if (stored) note_used(kind, key);
  std::shared_ptr<const std::string> plain;  // for remotes with compress=false
  for (auto& rp : remotes_) {
    Remote& r = *rp;
    if (r.config.read_only || r.disabled) continue;
    warn_if_unsigned(r);
    if (!r.config.compress && !plain)
      plain = std::make_shared<const std::string>(encode_entry(entry, kind, key, local_.signing_key(), false));
    auto value = r.config.compress ? bytes : plain;
    if (value->size() > r.config.max_entry_bytes) {  // the server would refuse it to others anyway
      std::lock_guard lock(r.mu);
      ++r.counters.oversized;
      continue;
    }
    std::unique_lock lock(r.mu);
    if (!r.worker.joinable()) r.worker = std::thread([this, &r] { upload_loop(r); });
    // Bounded: wait while the queue is full (never for a disabled remote).
    auto room = [&] {
      return r.disabled || r.queue.empty() || r.queued_bytes + value->size() <= options_.max_queued_bytes;
    };
    if (!room()) {
      ++r.waiting;
      r.wake.notify_one();  // a batch short of full goes now
      r.space.wait(lock, room);
      --r.waiting;
    }
    if (r.disabled) continue;
    r.queued_bytes += value->size();
    r.queue.push_back({std::string(kind), std::string(key), std::move(value)});
    r.wake.notify_one();
    stored = true;
  }
  return stored;
}

void LayeredStorage::upload_loop(Remote& r) {
  std::unique_ptr<RemoteBackend> backend;  // its own connection
  // A remote that takes uploads together gets them a batch at a time; what
  // is left goes when the build ends, or when a put() waits for room.
  const size_t batch = std::max<size_t>(1, r.config.upload_batch);
  std::unique_lock lock(r.mu);
  for (;;) {
    r.wake.wait(lock, [&] {
      return r.closing || r.queue.size() >= batch || (!r.queue.empty() && r.waiting > 0);
    });
    if (r.queue.empty()) return;  // closing and drained
    std::vector<Remote::Upload> ups;
    while (!r.queue.empty() && ups.size() < batch) {
      ups.push_back(std::move(r.queue.front()));
      r.queue.pop_front();
      r.queued_bytes -= ups.back().bytes->size();
    }
    r.space.notify_all();
    if (r.disabled) continue;  // dropped: the remote failed
    lock.unlock();
    if (!backend) backend = options_.factory(r.config);
    std::vector<const Remote::Upload*> sent;
    std::vector<RemoteBackend::Put> puts;
    for (const auto& up : ups)
      if (!r.disabled && replaceable(r, *backend, up.kind, up.key)) {
        sent.push_back(&up);
        puts.push_back({up.kind, up.key, *up.bytes});
      }
    RemoteResult<std::vector<bool>> done = std::vector<bool>{};
    if (!puts.empty() && !r.disabled) {
      done = timed(r, *backend, [&](RemoteBackend& b) { return b.put_all(puts); });
      if (!done) fail(r, done.failure());
    }
    lock.lock();
    if (done)
      for (size_t i = 0; i < sent.size() && i < (*done).size(); ++i)
        if ((*done)[i]) {
          ++r.counters.uploads;
          r.counters.bytes_written += sent[i]->bytes->size();
        }
  }
}

// With a signing key, a value on the server that is someone else's valid
// entry (signed with another key: perhaps a team mate's with the right key,
// ours mistyped) or over max-entry-size is not replaced by our upload; an
// unsigned one is (a team moving to signing), and so is a damaged one or our
// own (a manifest entry gains candidates). Without a key nothing can be told
// apart: the upload replaces whatever is there.
bool LayeredStorage::replaceable(Remote& r, RemoteBackend& backend, std::string_view kind,
                                 std::string_view key) {
  if (local_.signing_key().empty()) return true;
  const ValueHeld held{backend};  // destroyed after the value
  auto existing = timed(r, backend, [&](RemoteBackend& b) { return b.get(kind, key); });
  if (!existing) {
    fail(r, existing.failure());
    return false;
  }
  if (!*existing) return true;
  EntryFault fault = EntryFault::Damaged;
  if (verify_remote_value(kind, key, **existing, local_.signing_key(), r.config.max_entry_bytes, &fault))
    return true;
  if (fault != EntryFault::OtherKey && fault != EntryFault::TooLarge) return true;
  std::lock_guard lock(r.mu);
  ++r.counters.kept_foreign;
  return false;
}

void LayeredStorage::finish_uploads() {
  for (auto& rp : remotes_) {
    Remote& r = *rp;
    {
      std::lock_guard lock(r.mu);
      if (!r.worker.joinable()) continue;
      r.closing = true;
    }
    r.wake.notify_all();
    r.worker.join();
    std::lock_guard lock(r.mu);
    r.closing = false;  // a later put() starts a new thread
  }
}

std::map<std::string, RemoteCounters> LayeredStorage::remote_counters() const {
  std::map<std::string, RemoteCounters> out;
  for (const auto& r : remotes_) {
    std::lock_guard lock(r->mu);
    out[r->config.display] += r->counters;
  }
  return out;
}

void LayeredStorage::record(const Counters& delta) {
  finish_uploads();
  Counters all = delta;
  for (auto& [url, c] : remote_counters())
    if (c.any()) all.remotes[url] += c;
  for (auto& r : remotes_) {
    std::lock_guard lock(r->mu);
    r->counters = {};  // recorded once
  }
  std::lock_guard lock(local_mu_);
  local_.record(all);
}

std::string probe_remote(const RemoteConfig& config, const BackendFactory& factory) {
  if (!config.unusable.empty()) return "not used: " + config.unusable;
  auto backend = factory(config);
  auto start = std::chrono::steady_clock::now();
  auto got = backend->get("doctor", "probe-offload-build");
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!got)
    return fmt::format("{}: {}", got.failure().kind == RemoteFailure::Kind::Timeout ? "timed out" : "error",
                       got.failure().message);
  return fmt::format("reachable ({:.1f} ms to read; {})", ms,
                     config.read_only ? "read-only" : "read-write");
}

void hide_remote_credentials(const config::Config& config) {
  // Every source's URLs, in force or not: each registers the ${VAR}s it names.
  for (const auto& value : config.all("remote_storage")) {
    for (const auto& u : split_remote_list(value.text)) {
      auto parsed = parse_remote_url(u);
      // A credential written out, or text we cannot read (it may hold one).
      if (value.origin == config::Origin::Environment && (!parsed || parsed->literal_secret))
        util::hide_from_children("OFFLOAD_BUILD_REMOTE_STORAGE");
    }
  }
}

Result<std::vector<RemoteConfig>> configured_remotes(const config::Config& config,
                                                     const std::vector<std::string>& manifest) {
  std::vector<std::string> urls;
  std::string where;
  if (auto v = config.get("remote_storage",
                          manifest.empty() ? std::nullopt : std::optional(util::join(manifest, " ")),
                          "the manifest's remote_storage")) {
    where = v->origin == config::Origin::CommandLine || v->origin == config::Origin::Manifest ||
                    v->origin == config::Origin::Environment
                ? v->where
                : fmt::format("remote_storage ({})", v->where);
    urls = split_remote_list(v->text);
  }
  std::vector<RemoteConfig> out;
  for (size_t i = 0; i < urls.size(); ++i) {
    auto parsed = parse_remote_url(urls[i]);
    if (!parsed)
      return Error::usage(fmt::format("{}{}: {}", where,
                                      urls.size() > 1 ? fmt::format(", URL {} of {}", i + 1, urls.size()) : "",
                                      parsed.error().message));
    out.push_back(std::move(*parsed));
  }
  return out;
}

}  // namespace ob::storage
