// The engine's action cache as a layer of the local cache (exec/remote/layer.hpp).
#include "offload_build/exec/remote/layer.hpp"

namespace ob::exec {

namespace {

constexpr const char* kEntryValueKind = "cache-entry";
// Entries the layer sends at once: one BatchUpdateBlobs for 16 instead of 16
// (every UpdateActionResult stays one call: the protocol has no batch of them).
constexpr size_t kUploadBatch = 16;

class EngineBackend final : public storage::RemoteBackend {
 public:
  EngineBackend(std::shared_ptr<EngineLink> link, uint64_t max_bytes, std::shared_ptr<WorkingSet> set)
      : link_(std::move(link)), max_(max_bytes), set_(std::move(set)) {}

  storage::RemoteResult<std::optional<std::string>> get(std::string_view kind, std::string_view key) override {
    const std::string name = storage::redis_key(kind, key);
    if (set_)
      if (auto value = set_->find(name)) return std::optional<std::string>(std::move(*value));
    reapi::Client* client = usable();
    if (!client) return std::optional<std::string>();
    std::string text, error;
    room_.reset();
    if (!client->get_value(kEntryValueKind, name, max_, text, error, &room_)) {
      link_->failed(error);  // the engine's one warning; the layer takes it as a miss
      return std::optional<std::string>();
    }
    if (text.empty()) {
      link_->note_absent(name);
      return std::optional<std::string>();
    }
    return std::optional<std::string>(std::move(text));
  }

  void release_value() override { room_.reset(); }

  storage::RemoteResult<bool> put(std::string_view kind, std::string_view key, std::string_view value,
                                  bool /*overwrite*/) override {
    return store(kind, key, value);
  }

  // Values sent together: one upload of their blobs, then a result each
  // (put and remove: one value).
  storage::RemoteResult<std::vector<bool>> put_all(const std::vector<Put>& puts) override {
    reapi::Client* client = usable();
    if (!client) return std::vector<bool>(puts.size(), false);
    std::vector<std::pair<std::string, std::string>> values;
    for (const auto& p : puts) values.emplace_back(storage::redis_key(p.kind, p.key), std::string(p.value));
    std::string error;
    if (client->put_values(kEntryValueKind, values, error)) return std::vector<bool>(puts.size(), true);
    link_->failed(error);
    return std::vector<bool>(puts.size(), false);
  }

  // The action cache forgets nothing: the entry becomes a result with no output.
  storage::RemoteResult<bool> remove(std::string_view kind, std::string_view key) override {
    if (set_) set_->forget(storage::redis_key(kind, key));
    return store(kind, key, {});
  }

 private:
  bool store(std::string_view kind, std::string_view key, std::string_view value) {
    auto stored = put_all({Put{kind, key, value}});
    return stored && !(*stored).empty() && (*stored).front();
  }

  // The client when the engine is up and holds values; nullptr otherwise
  // (a client module missing is remote execution's error, said there).
  reapi::Client* usable() {
    if (link_->down()) return nullptr;
    auto client = link_->client();
    if (!client || !*client || !(*client)->stores_values()) return nullptr;
    return *client;
  }

  std::shared_ptr<EngineLink> link_;
  uint64_t max_;
  std::shared_ptr<WorkingSet> set_;  // nullptr: none
  std::shared_ptr<void> room_;       // the last value's room in the engine's cap (release_value)
};

}  // namespace

storage::RemoteConfig engine_layer_config(const RemoteExecutionConfig& engine, bool signing_key_set) {
  storage::RemoteConfig c;
  c.prefix = kEngineLayerPrefix;
  c.display = engine.display + " (action cache)";
  c.allow_unsigned = true;
  // Any client of the engine may have written an entry: what it serves stays
  // in the local cache, unless the engine is declared trusted and a key signs it.
  c.confined = !(engine.engine_cache == EngineCache::Trusted && signing_key_set);
  c.upload_batch = kUploadBatch;
  // The engine's own deadlines and time budget (reapi_budget.hpp) govern
  // its calls; the layer's counts none as slow below them.
  c.connect_timeout_ms = engine.endpoint.connect_timeout_ms;
  c.operation_timeout_ms = engine.endpoint.call_timeout_ms;
  return c;
}

std::unique_ptr<storage::RemoteBackend> make_engine_backend(std::shared_ptr<EngineLink> link, uint64_t max_bytes,
                                                            std::shared_ptr<WorkingSet> set) {
  return std::make_unique<EngineBackend>(std::move(link), max_bytes, std::move(set));
}

storage::RemoteScheme engine_layer_scheme(std::shared_ptr<EngineLink> link, std::shared_ptr<WorkingSet> set) {
  storage::RemoteScheme scheme;
  scheme.prefix = kEngineLayerPrefix;
  scheme.usage = "remote_execution with engine_storage";  // never a URL a user writes
  scheme.display = [](const storage::RemoteConfig& c) { return c.display; };
  scheme.create = [link = std::move(link), set = std::move(set)](const storage::RemoteConfig& c) {
    return make_engine_backend(link, c.max_entry_bytes, set);
  };
  return scheme;
}

}  // namespace ob::exec
