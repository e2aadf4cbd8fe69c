// The engine's action cache as a layer of the local cache (docs/CACHE.md,
// docs/DISTRIBUTED.md): with remote_execution set and engine_cache use or
// trusted, every entry the cache stores (a compile's, a package's, a link's,
// its direct-mode manifest) is also kept in the engine, as the one output of
// an action no worker runs (reapi::Client::get_value, named by the entry's
// Redis key), and a lookup the local cache misses asks it. So a fresh
// checkout is served by the engine as it is by Redis: every job, with no
// dependency scan, in one GetActionResult per entry; the jobs remote
// execution never sends (packages, ptxas assembles, links) too. Only an
// engine that lets clients write its action cache (update_enabled) holds
// entries; with any other the layer is silent. The layer shares the build's
// engine (exec/remote/link.hpp): its failure is the engine's one warning.
#pragma once

#include <memory>

#include "offload_build/exec/remote/link.hpp"
#include "offload_build/exec/remote/working_set.hpp"
#include "offload_build/storage/remote/backend_registry.hpp"
#include "offload_build/storage/remote/remote.hpp"

namespace ob::exec {

// What a RemoteConfig of the engine layer starts with (its `prefix`).
inline constexpr const char* kEngineLayerPrefix = "engine-action-cache:";

// The layer's entry among the remotes (after those of remote_storage): its
// display, the engine's with " (action cache)"; entries unsigned allowed
// (they are as trusted as the engine's own results: engine_cache). Confined
// (storage::RemoteConfig::confined: what it serves, and what is built from
// it, never goes to remote storage) unless engine_cache is trusted and
// `signing_key_set`.
storage::RemoteConfig engine_layer_config(const RemoteExecutionConfig& engine, bool signing_key_set = false);

// The backend for that entry, over `link` (any number: they share it), and
// `set` when the build has a working set (exec/remote/working_set.hpp): a value it
// holds is served from it, without a call.
std::unique_ptr<storage::RemoteBackend> make_engine_backend(std::shared_ptr<EngineLink> link, uint64_t max_bytes,
                                                            std::shared_ptr<WorkingSet> set = nullptr);

// The layer as an entry of the backend registry (storage/remote/backend_registry.hpp):
// engine_layer_config's prefix, its backends make_engine_backend's over
// `link` and `set`. A build's registry is the builtin one with it added.
storage::RemoteScheme engine_layer_scheme(std::shared_ptr<EngineLink> link, std::shared_ptr<WorkingSet> set = nullptr);

}  // namespace ob::exec
