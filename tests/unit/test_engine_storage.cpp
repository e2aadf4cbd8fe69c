// The build's engine (exec/remote/link.hpp) and the engine's action cache as
// a layer of the local cache (exec/remote/layer.hpp), over a fake client:
// one open, one warning, values kept and served, an engine that cannot hold
// them silent.
#include <catch2/catch.hpp>

#include <map>

#include "offload_build/exec/remote/link.hpp"
#include "offload_build/exec/remote/layer.hpp"
#include "offload_build/exec/remote/working_set.hpp"
#include "offload_build/storage/remote/layered.hpp"
#include "offload_build/storage/remote/remote.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using ob::test::TempDir;

namespace {

// An engine's action cache in memory; `down` fails every call.
struct FakeEngine {
  std::map<std::string, std::string> values;
  bool update_enabled = true;
  bool down = false;
  bool reachable = true;
  int opens = 0, capability_calls = 0, gets = 0;
  std::vector<size_t> batches;  // put_values: how many values each call stored
  std::vector<std::weak_ptr<void>> rooms;  // get_value's, each
  size_t rooms_held() const {
    size_t n = 0;
    for (const auto& r : rooms) n += !r.expired();
    return n;
  }
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
                 std::string& error, std::shared_ptr<void>* room) override {
    ++e.gets;
    if (room) {  // as the client's HeldBytes: room while the caller keeps it
      *room = std::make_shared<int>(0);
      e.rooms.push_back(*room);
    }
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
  bool put_values(const std::string& kind, const std::vector<std::pair<std::string, std::string>>& values,
                  std::string& error) override {
    e.batches.push_back(values.size());
    return reapi::Client::put_values(kind, values, error);
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
  // The layer is a scheme of the build's backend registry: its config makes
  // a backend over the same engine (no second open).
  storage::RemoteBackendRegistry registry = storage::RemoteBackendRegistry::builtin();
  CHECK(!registry.find(layer.prefix));
  registry.add({exec::engine_layer_scheme(f.link)});
  auto c = storage::make_remote_backend(layer, registry)->get("result", "k2");
  REQUIRE(c.ok());
  CHECK(!*c);
  CHECK(f.engine.opens == 1);
}

TEST_CASE("engine layer: the local cache's uploads reach the engine together, a batch per call",
          "[remote-execution][engine-storage]") {
  Fixture f;
  TempDir dir("ob-engine-batch");
  storage::Storage local(dir / "cache");
  auto layer = exec::engine_layer_config(f.link->config());
  CHECK(layer.upload_batch == 16);
  storage::LayeredOptions options;
  options.factory = [&](const storage::RemoteConfig&) { return f.backend(); };
  options.warning_fd = -1;
  storage::LayeredStorage layers(local, {layer}, options);
  for (int i = 0; i < 40; ++i)
    REQUIRE(layers.put("result", "k" + std::to_string(i), storage::Entry{"{}", {{"o", std::string(100, 'x')}}}));
  layers.finish_uploads();
  // 16, 16, then the 8 left when the build ends: 3 calls, not 40.
  CHECK(f.engine.batches == std::vector<size_t>{16, 16, 8});
  CHECK(f.engine.values.size() == 40);
  CHECK(layers.remote_counters().at(layer.display).uploads == 40);
  CHECK(f.warnings.empty());
}

// What the engine sends counts against the build's cap (reapi::HeldBytes)
// until the layer is done with it, not only while it is read: before, a
// value's room went back when the read returned, and lookups verifying or
// removing 60 MiB values held ~450 MB against a 256 MiB cap.
TEST_CASE("engine layer: a value's room in the engine's cap is kept until the layer has verified and stored or dropped it",
          "[remote-execution][engine-storage]") {
  Fixture f;
  auto a = f.backend();
  REQUIRE(a->put("result", "k1", "entry bytes", false).ok());
  auto got = a->get("result", "k1");
  REQUIRE(got.ok());
  CHECK(f.engine.rooms_held() == 1);  // the caller still has the value
  a->release_value();
  CHECK(f.engine.rooms_held() == 0);
  (void)a->get("result", "k1");
  (void)a->get("result", "k1");  // at the latest the next get gives the last one back
  CHECK(f.engine.rooms_held() == 1);

  TempDir dir("ob-engine-room");
  storage::Storage local(dir / "cache");
  storage::LayeredOptions options;
  options.factory = [&](const storage::RemoteConfig&) { return f.backend(); };
  options.warning_fd = -1;
  storage::LayeredStorage layers(local, {exec::engine_layer_config(f.link->config())}, options);
  const storage::Entry entry{"{}", {{"o", std::string(100, 'x')}}};
  f.engine.values["cache-entry " + storage::redis_key("result", "good")] = storage::encode_entry(entry, "result", "good", "");
  f.engine.values["cache-entry " + storage::redis_key("result", "bad")] = "not an entry";
  const size_t before = f.engine.rooms.size();
  CHECK(layers.get("result", "good").status == storage::LookupStatus::Hit);
  CHECK(layers.get("result", "bad").status != storage::LookupStatus::Hit);  // damaged: removed, a miss
  CHECK(f.engine.rooms.size() == before + 2);
  CHECK(f.engine.rooms_held() == 1);  // only `a`'s: the layer's lookups gave theirs back
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

// The project's working set (exec/remote/working_set.hpp): one value for every entry
// a build used, so that the next build that misses its local cache makes one
// call, not one per entry.
TEST_CASE("working set: a pack decodes to what was encoded, and anything else to none", "[engine-storage]") {
  const std::map<std::string, std::string> values{{"ob:result:k1", std::string("a\n\0b", 4)}, {"ob:manifest:k2", ""}};
  auto pack = exec::encode_working_set(values);
  REQUIRE(pack);
  auto back = exec::decode_working_set(*pack);
  REQUIRE(back);
  CHECK(*back == values);
  CHECK(exec::decode_working_set(pack->substr(0, pack->size() - 1)) == std::nullopt);  // truncated
  CHECK(exec::decode_working_set("ob-working-set-1\n99999999999\n1\nx") == std::nullopt);
  CHECK(exec::decode_working_set("ob-working-set-1\n-1\n1\nx") == std::nullopt);
  CHECK(exec::decode_working_set("another format") == std::nullopt);
  CHECK(exec::decode_working_set("ob-working-set-1\n")->empty());
  CHECK(exec::encode_working_set(values, 20) == std::nullopt);  // over the cap: none
  CHECK(exec::working_set_name("p\nhost") == exec::working_set_name("p\nhost"));
  CHECK(exec::working_set_name("p\nhost") != exec::working_set_name("p\nsm_90"));
  // A signing key names its writers' own set: another key's (or none) is another set.
  CHECK(exec::working_set_name("p\nhost", "team") != exec::working_set_name("p\nhost"));
  CHECK(exec::working_set_name("p\nhost", "team") != exec::working_set_name("p\nhost", "teem"));
  CHECK(exec::working_set_name("p\nhost", "team") == exec::working_set_name("p\nhost", "team"));
}

TEST_CASE("working set: the next build's cache serves every entry from one value, and a cache stores a set once",
          "[remote-execution][engine-storage]") {
  Fixture f;
  TempDir first, fresh;
  const std::string name = exec::working_set_name("project\nhost");
  std::map<std::string, std::string> used;
  for (int i = 0; i < 40; ++i)
    used[storage::redis_key("result", "key" + std::to_string(i))] = "value " + std::to_string(i);
  {
    exec::WorkingSet set(f.link, name, first.path());
    CHECK(set.eager());  // this cache never had one
    set.save(used);
    REQUIRE(f.engine.values.count("working-set " + name) == 1);
    f.engine.values.erase("working-set " + name);
    CHECK_FALSE(set.wanted());
    set.save(used);  // the same set again: remembered, not sent
    auto more = used;
    more["ob:result:another"] = "value";
    set.save(more);  // nor a changed one: an engine keeps the first result of an action
    CHECK(f.engine.values.count("working-set " + name) == 0);
  }
  exec::WorkingSet(f.link, name, fresh.path()).save(used);  // stored again by another cache
  REQUIRE(f.engine.values.count("working-set " + name) == 1);

  // A fresh checkout's build: one call for the set, none per entry.
  TempDir third;
  auto set = std::make_shared<exec::WorkingSet>(f.link, name, third.path());
  const int gets = f.engine.gets;
  auto backend = exec::make_engine_backend(f.link, 1 << 20, set);
  for (int i = 0; i < 40; ++i) {
    auto hit = backend->get("result", "key" + std::to_string(i));
    REQUIRE(hit.ok());
    REQUIRE(*hit);
    CHECK(**hit == "value " + std::to_string(i));
  }
  CHECK(f.engine.gets == gets + 1);
  CHECK(set->served() == 40);
  // What the set lacks (a source changed since) is asked of the engine alone.
  CHECK(!*backend->get("result", "other"));
  CHECK(f.engine.gets == gets + 2);
  // A value the layer refused is not served from the set again.
  REQUIRE(backend->remove("result", "key0").ok());
  CHECK(!*backend->get("result", "key0"));
  CHECK(f.warnings.empty());
}

TEST_CASE("working set: a cache that had one fetches it only after many misses, and a damaged one serves nothing",
          "[remote-execution][engine-storage]") {
  Fixture f;
  TempDir memo;
  const std::string name = exec::working_set_name("project\nhost");
  std::map<std::string, std::string> used{{storage::redis_key("result", "abc"), "value"}};
  exec::WorkingSet(f.link, name, memo.path()).save(used);
  auto set = std::make_shared<exec::WorkingSet>(f.link, name, memo.path());
  CHECK_FALSE(set->eager());
  // An edit's few misses are asked one by one: the whole set is not fetched for them.
  for (size_t i = 0; i < exec::WorkingSet::kLazyLookups; ++i)
    CHECK(set->find(storage::redis_key("result", "abc")) == std::nullopt);
  CHECK(set->loaded() == 0);
  CHECK(set->find(storage::redis_key("result", "abc")) == "value");
  CHECK(set->loaded() == 1);

  f.engine.values["working-set " + name] = "ob-working-set-1\n5\n";
  TempDir other;
  auto damaged = std::make_shared<exec::WorkingSet>(f.link, name, other.path());
  CHECK(damaged->find(storage::redis_key("result", "abc")) == std::nullopt);
  CHECK(damaged->loaded() == 0);
  CHECK(f.warnings.empty());
}
