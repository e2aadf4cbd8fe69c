// The build's engine (exec/engine_link.hpp) and the engine's action cache as
// a layer of the local cache (exec/engine_storage.hpp), over a fake client:
// one open, one warning, values kept and served, an engine that cannot hold
// them silent.
#include <catch2/catch.hpp>

#include <map>

#include "offload_build/exec/engine_link.hpp"
#include "offload_build/exec/engine_storage.hpp"
#include "offload_build/storage/remote/remote.hpp"

using namespace ob;

namespace {

// An engine's action cache in memory; `down` fails every call.
struct FakeEngine {
  std::map<std::string, std::string> values;
  bool update_enabled = true;
  bool down = false;
  bool reachable = true;
  int opens = 0, capability_calls = 0, gets = 0;
};

struct FakeClient : reapi::Client {
  explicit FakeClient(FakeEngine& e) : e(e) {}
  bool capabilities(reapi::Capabilities& caps, std::string& error) override {
    ++e.capability_calls;
    if (!e.reachable) error = "cannot connect within 5000 ms";
    caps.update_enabled = e.update_enabled;
    return e.reachable;
  }
  bool run(const reapi::Action&, reapi::ActionResult&, std::string&) override { return false; }
  bool get_value(const std::string& kind, const std::string& key, uint64_t max_bytes, std::string& text,
                 std::string& error) override {
    ++e.gets;
    text.clear();
    if (e.down) {
      error = "GetActionResult: UNAVAILABLE";
      return false;
    }
    auto it = e.values.find(kind + " " + key);
    if (it != e.values.end() && it->second.size() <= max_bytes) text = it->second;
    return true;
  }
  bool put_value(const std::string& kind, const std::string& key, const std::string& text,
                 std::string& error) override {
    if (e.down) {
      error = "UpdateActionResult: UNAVAILABLE";
      return false;
    }
    e.values[kind + " " + key] = text;
    return true;
  }
  bool stores_values() const override { return e.update_enabled; }
  void cancel() override {}
  FakeEngine& e;
};

struct Fixture {
  FakeEngine engine;
  exec::EngineScheme scheme;
  std::vector<std::string> warnings;
  std::shared_ptr<exec::EngineLink> link;
  Fixture() {
    scheme.prefix = "fake://";
    scheme.open = [this](const reapi::Endpoint&) -> Result<std::unique_ptr<reapi::Client>> {
      ++engine.opens;
      return std::unique_ptr<reapi::Client>(new FakeClient(engine));
    };
    exec::RemoteExecutionConfig config;
    config.scheme = &scheme;
    config.display = "fake://pool";
    link = std::make_shared<exec::EngineLink>(
        exec::EngineLink::Setup{config, [this](const std::string& line) { warnings.push_back(line); }, {}});
  }
  std::unique_ptr<storage::RemoteBackend> backend() { return exec::make_engine_backend(link, 1 << 20); }
};

}  // namespace

TEST_CASE("engine layer: entries stored are served, by any backend over one engine opened once",
          "[remote-execution][engine-storage]") {
  Fixture f;
  auto a = f.backend();
  auto b = f.backend();  // the layer makes one per lookup and upload thread
  auto miss = a->get("result", "k1");
  REQUIRE(miss.ok());
  CHECK(!*miss);
  REQUIRE(a->put("result", "k1", "entry bytes", false).ok());
  auto hit = b->get("result", "k1");
  REQUIRE(hit.ok());
  REQUIRE(*hit);
  CHECK(**hit == "entry bytes");
  // Named by the entry's Redis key: a manifest of the same key is another value.
  CHECK(f.engine.values.count("cache-entry " + storage::redis_key("result", "k1")) == 1);
  CHECK(!*b->get("manifest", "k1"));
  // Removed: a result with no output, so none.
  REQUIRE(a->remove("result", "k1").ok());
  CHECK(!*b->get("result", "k1"));
  CHECK(f.engine.opens == 1);
  CHECK(f.engine.capability_calls == 1);
  CHECK(f.warnings.empty());
  auto layer = exec::engine_layer_config(f.link->config());
  CHECK(layer.display == "fake://pool (action cache)");
  CHECK(layer.prefix == exec::kEngineLayerPrefix);
}

TEST_CASE("engine layer: an engine clients may not write holds nothing and is never asked",
          "[remote-execution][engine-storage]") {
  Fixture f;
  f.engine.update_enabled = false;
  auto backend = f.backend();
  auto put = backend->put("result", "k1", "entry bytes", false);
  REQUIRE(put.ok());
  CHECK(!*put);
  CHECK(!*backend->get("result", "k1"));
  CHECK(f.engine.values.empty());
  CHECK(f.engine.gets == 0);
  CHECK(f.warnings.empty());
}

TEST_CASE("engine layer: a failing engine costs one warning, then every lookup is a miss without a call",
          "[remote-execution][engine-storage]") {
  Fixture f;
  auto backend = f.backend();
  REQUIRE(backend->put("result", "k1", "entry bytes", false).ok());
  f.engine.down = true;
  auto failed = backend->get("result", "k1");
  REQUIRE(failed.ok());  // a miss for the layer: the engine's warning is the one said
  CHECK(!*failed);
  const int gets = f.engine.gets;
  CHECK(!*backend->get("result", "k1"));
  CHECK(!*f.backend()->put("result", "k2", "more", false));
  CHECK(f.engine.gets == gets);
  REQUIRE(f.warnings.size() == 1);
  CHECK(f.warnings[0] == "remote_execution fake://pool: GetActionResult: UNAVAILABLE; this build's remaining "
                         "jobs run locally");
  CHECK(f.link->down());
}

TEST_CASE("engine layer: an engine that cannot be reached is warned about once and never asked",
          "[remote-execution][engine-storage]") {
  Fixture f;
  f.engine.reachable = false;
  auto backend = f.backend();
  CHECK(!*backend->get("result", "k1"));
  CHECK(!*f.backend()->get("result", "k2"));
  auto client = f.link->client();
  REQUIRE(client);
  CHECK(*client == nullptr);
  CHECK(f.engine.capability_calls == 1);
  REQUIRE(f.warnings.size() == 1);
  CHECK(f.warnings[0] == "remote_execution fake://pool: cannot connect within 5000 ms; the build runs locally");
}
