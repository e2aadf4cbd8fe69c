// The remote backend registry's seam: a backend defined here, outside
// src/storage/remote, with its own scheme, URL form, attributes and secret,
// parsed, redacted, displayed and created through the registry alone.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <memory>

#include "offload_build/storage/remote/backend_registry.hpp"
#include "offload_build/util/secrets.hpp"

using namespace ob;
using namespace ob::storage;

namespace {

// fake://SHELF: values in a map; its own attributes `slots=N` and the secret `key=`.
class FakeBackend final : public RemoteBackend {
 public:
  explicit FakeBackend(const RemoteConfig& c) : shelf_(c.host), key_(c.options.at("key")) {}
  RemoteResult<std::optional<std::string>> get(std::string_view kind, std::string_view key) override {
    auto it = values_.find(name(kind, key));
    if (it == values_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  RemoteResult<bool> put(std::string_view kind, std::string_view key, std::string_view value,
                         bool overwrite) override {
    auto [it, fresh] = values_.try_emplace(name(kind, key), value);
    if (!fresh && overwrite) it->second = value;
    return fresh || overwrite;
  }
  RemoteResult<bool> remove(std::string_view kind, std::string_view key) override {
    return values_.erase(name(kind, key)) > 0;
  }
  std::string shelf_, key_;

 private:
  std::string name(std::string_view kind, std::string_view key) const {
    return shelf_ + "/" + std::string(kind) + "/" + std::string(key);
  }
  std::map<std::string, std::string> values_;
};

RemoteScheme fake_scheme() {
  RemoteScheme s;
  s.prefix = "fake://";
  s.usage = "fake://SHELF";
  s.parse_url = [](std::string_view rest, RemoteConfig& c) -> UrlProblem {
    if (rest.empty()) return "fake:// wants a shelf";
    c.host = std::string(rest);
    return std::nullopt;
  };
  s.attributes = {"slots", "key"};
  s.secret_attributes = {"key"};
  s.parse_attribute = [](std::string_view name, std::string_view value, RemoteConfig& c) -> UrlProblem {
    if (name == "slots" && !parse_remote_int(value, 100)) return "slots wants 0 to 100";
    c.options[std::string(name)] = expand_remote_value(value, c);
    return std::nullopt;
  };
  s.display = [](const RemoteConfig& c) { return "fake://" + c.host; };
  s.create = [](const RemoteConfig& c) -> std::unique_ptr<RemoteBackend> {
    return std::make_unique<FakeBackend>(c);
  };
  return s;
}

RemoteBackendRegistry with_fake() {
  RemoteBackendRegistry r = RemoteBackendRegistry::builtin();
  r.add({fake_scheme()});
  return r;
}

}  // namespace

TEST_CASE("a backend registered outside remote_url.cpp parses, redacts and is created", "[remote]") {
  const auto registry = with_fake();
  ::setenv("OB_TEST_FAKE_KEY", "sesame-42", 1);
  auto c = parse_remote_url("fake://pantry|slots=7|key=${OB_TEST_FAKE_KEY}|read-only|compress=off",
                            registry);
  ::unsetenv("OB_TEST_FAKE_KEY");
  INFO((c ? "" : c.error().message));
  REQUIRE(c);
  CHECK(c->prefix == "fake://");
  CHECK(c->host == "pantry");
  CHECK(c->options.at("slots") == "7");
  CHECK(c->options.at("key") == "sesame-42");
  CHECK(c->read_only);  // the common attributes stay shared
  CHECK_FALSE(c->compress);
  CHECK(c->display == "fake://pantry|read-only|key=***");
  CHECK(util::hidden_from_children("OB_TEST_FAKE_KEY"));  // its secret's variable

  auto backend = make_remote_backend(*c, registry);
  auto* fake = dynamic_cast<FakeBackend*>(backend.get());
  REQUIRE(fake);
  CHECK(fake->key_ == "sesame-42");
  REQUIRE(backend->put("result", "abcd", "bytes", false));
  auto got = backend->get("result", "abcd");
  REQUIRE(got);
  CHECK(*got == std::optional<std::string>("bytes"));

  // Text that does not parse is not shown at all.
  CHECK(redact_remote_url("fake://pantry|key=sesame-42|slots=x", registry) == "(unparsable; hidden)");
  CHECK(redact_remote_url("fake://pantry|key=sesame-42|slots=3", registry) == "fake://pantry|key=***|slots=3");
  auto bad = parse_remote_url("fake://pantry|key=sesame-42|slots=x", registry);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == exit_code::usage);
  CHECK_THAT(bad.error().message, Catch::Contains("slots wants 0 to 100"));
  CHECK_THAT(bad.error().message, !Catch::Contains("sesame-42"));
  auto unknown = parse_remote_url("fake://pantry|layout=flat", registry);
  REQUIRE_FALSE(unknown);
  CHECK_THAT(unknown.error().message,
             Catch::Contains("unknown attribute \"layout\"; known: read-only, connect-timeout, "
                             "operation-timeout, max-entry-size, compress, allow-unsigned, slots, key"));
  CHECK_THAT(parse_remote_url("fake://", registry).error().message,
             Catch::Contains("fake:// wants a shelf"));
}

TEST_CASE("the builtin registry knows only its own backends", "[remote]") {
  const auto registry = with_fake();
  auto none = parse_remote_url("fake://pantry");
  REQUIRE_FALSE(none);
  CHECK_THAT(none.error().message,
             Catch::Contains("unsupported URL; use redis://HOST[:PORT][/DB], redis+unix:///SOCKET, "
                             "http://HOST[:PORT]/PREFIX or https://..."));
  CHECK_THAT(parse_remote_url("ftp://h", registry).error().message,
             Catch::Contains("https://... or fake://SHELF"));
  // The fake's attributes are its own: not accepted by the builtin schemes.
  CHECK_FALSE(parse_remote_url("redis://h|slots=3", registry));
  // A config of a scheme the registry lacks: a backend whose calls fail, no crash.
  auto c = parse_remote_url("fake://pantry|key=k", registry);
  REQUIRE(c);
  auto orphan = make_remote_backend(*c);
  REQUIRE(orphan);
  auto got = orphan->get("result", "abcd");
  REQUIRE_FALSE(got);
  CHECK_THAT(got.failure().message, Catch::Contains("no backend for \"fake://\""));
}
