// A project's working set in the engine (docs/DISTRIBUTED.md): the entries
// one manifest build used from the local cache's layers (results and
// direct-mode manifests, as encoded), kept in the engine's action cache as
// one value (a pack in its CAS), named by what a fresh checkout of the same
// project knows before it looks anything up (working_set_name). The next
// build that misses its local cache fetches the pack once (one
// GetActionResult and one ByteStream read) and the engine layer
// (exec/remote/layer.hpp) serves the entries it holds from it, instead of
// one GetActionResult each. A hint, never a truth: every value it serves is
// checked by the layer as any remote value is (bound to its kind and key,
// signed where a key is set), every job's key is the cache's as ever, and an
// entry it lacks (a source changed since) is asked of the engine alone.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "offload_build/exec/remote/link.hpp"

namespace ob::exec {

namespace fs = std::filesystem;

// The most a pack may hold (stored and fetched).
inline constexpr uint64_t kMaxWorkingSetBytes = 64ull << 20;

// The pack's bytes: "ob-working-set-1\n", then per entry (sorted by name) its
// name's and value's lengths (decimal, a space, each ending in '\n') and the
// two; nullopt when they would exceed `max_bytes`.
std::optional<std::string> encode_working_set(const std::map<std::string, std::string>& values,
                                              uint64_t max_bytes = kMaxWorkingSetBytes);
// The entries of a pack; nullopt when it is not one (truncated, damaged).
std::optional<std::map<std::string, std::string>> decode_working_set(std::string_view pack);

// The set's name: a hash of what names the project and its build (the
// manifest, its targets, each source's place in the project and content),
// not of where it is. Engines keep the first result stored for an action
// (Bazel's worker never replaces one): a set is named by what it is for, so
// that a changed checkout has a name of its own rather than a stale set.
// With a signing key the name holds a digest of it too: a set stored first by
// a client with another key (or none) cannot squat the team's.
std::string working_set_name(std::string_view identity, std::string_view signing_key = {});

class WorkingSet {
 public:
  // `memo_dir`: where the local cache remembers the last pack it stored or
  // fetched (its digest), so that an unchanged set is not sent again.
  WorkingSet(std::shared_ptr<EngineLink> link, std::string name, std::optional<fs::path> memo_dir);
  WorkingSet(const WorkingSet&) = delete;
  WorkingSet& operator=(const WorkingSet&) = delete;

  // Whether the pack is fetched at the first lookup: this cache never stored
  // nor fetched one of this name (a fresh checkout, a new machine). Otherwise
  // it is fetched after kLazyLookups lookups the local cache missed (a few
  // misses do not fetch the whole set).
  bool eager() const;
  static constexpr size_t kLazyLookups = 16;
  // Fetch the pack (once; any thread, the others wait). A failing engine is
  // its one warning and no pack.
  void load();
  // The value named `name` (storage::redis_key) when the pack holds it.
  std::optional<std::string> find(const std::string& name);
  // A value the layer refused or removed: not served again.
  void forget(const std::string& name);
  // Whether save() would store anything: no pack of this name was fetched in
  // this build, nor stored or fetched by this cache before (an engine keeps
  // the first result stored for an action: a set is stored once per name).
  bool wanted() const;
  // Store the set of `values` (names as above) when wanted() and not over
  // kMaxWorkingSetBytes (then left out).
  void save(const std::map<std::string, std::string>& values);

  size_t served() const { return served_; }
  size_t loaded() const;  // entries in the pack fetched (0: none)

 private:
  std::string memo_text() const;
  void remember(const std::string& digest) const;

  std::shared_ptr<EngineLink> link_;
  std::string name_;
  std::optional<fs::path> memo_dir_;
  size_t lazy_after_ = 0;
  std::atomic<size_t> asked_{0};
  mutable std::mutex mu_;
  bool loaded_ = false;
  std::string loaded_digest_;
  std::map<std::string, std::string> values_;
  std::atomic<size_t> served_{0};
};

}  // namespace ob::exec
