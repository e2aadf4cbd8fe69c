// Remote storage without servers: URL parsing and redaction, entry names, and
// the layering (verify, back-fill, disable after a failure, one warning,
// uploads) over a fake backend. The real servers: tests/integration/test_remote_storage.cpp.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <chrono>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "offload_build/storage/remote/layered.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::storage;

namespace {

RemoteConfig parse_ok(const std::string& url) {
  auto r = parse_remote_url(url);
  INFO(url << (r ? "" : ": " + r.error().message));
  REQUIRE(r);
  return *r;
}

// A shared in-memory server with failure injection.
struct FakeServer {
  std::map<std::string, std::string> values;
  int gets = 0;
  int puts = 0;
  std::optional<RemoteFailure> fail_with;
};

class FakeBackend final : public RemoteBackend {
 public:
  explicit FakeBackend(std::shared_ptr<FakeServer> s) : s_(std::move(s)) {}
  RemoteResult<std::optional<std::string>> get(std::string_view kind, std::string_view key) override {
    ++s_->gets;
    if (s_->fail_with) return *s_->fail_with;
    auto it = s_->values.find(redis_key(kind, key));
    if (it == s_->values.end()) return std::optional<std::string>{};
    return std::optional<std::string>{it->second};
  }
  RemoteResult<bool> put(std::string_view kind, std::string_view key, std::string_view value,
                         bool) override {
    ++s_->puts;
    if (s_->fail_with) return *s_->fail_with;
    s_->values[redis_key(kind, key)] = std::string(value);
    return true;
  }
  RemoteResult<bool> remove(std::string_view kind, std::string_view key) override {
    return s_->values.erase(redis_key(kind, key)) > 0;
  }

 private:
  std::shared_ptr<FakeServer> s_;
};

// Warnings written to a pipe, read back.
struct WarningPipe {
  int fds[2] = {-1, -1};
  WarningPipe() {
    REQUIRE(::pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
  }
  ~WarningPipe() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  std::string read() {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, size_t(n));
    return out;
  }
};

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

Entry sample_entry(const std::string& data) {
  return Entry{R"({"job":"x"})", {{"out.o", data}}};
}

const std::string kKey = "abcdef0123456789";

}  // namespace

TEST_CASE("remote storage URLs parse into their parts", "[remote]") {
  auto r = parse_ok("redis://alice:s3cret@cache.example:6380/2");
  CHECK(r.scheme == RemoteConfig::Scheme::Redis);
  CHECK(r.host == "cache.example");
  CHECK(r.port == 6380);
  CHECK(r.db == 2);
  CHECK(r.user == "alice");
  CHECK(r.password == "s3cret");
  CHECK(r.display == "redis://alice:***@cache.example:6380/2");

  auto p = parse_ok("redis://onlypass@localhost");
  CHECK(p.user.empty());
  CHECK(p.password == "onlypass");
  CHECK(p.port == 0);
  CHECK(p.display == "redis://:***@localhost");

  auto u = parse_ok("redis+unix:///run/redis/redis.sock?db=3|read-only");
  CHECK(u.scheme == RemoteConfig::Scheme::RedisUnix);
  CHECK(u.path == "/run/redis/redis.sock");
  CHECK(u.db == 3);
  CHECK(u.read_only);
  CHECK(parse_ok("redis+unix:/tmp/r.sock").path == "/tmp/r.sock");

  auto h = parse_ok("http://[::1]:8080/cache/ob/|layout=bazel|connect-timeout=250ms|"
                    "operation-timeout=3s|compress=false");
  CHECK(h.scheme == RemoteConfig::Scheme::Http);
  CHECK(h.host == "::1");
  CHECK(h.port == 8080);
  CHECK(h.path == "/cache/ob");
  CHECK(h.layout == RemoteConfig::Layout::Bazel);
  CHECK(h.connect_timeout_ms == 250);
  CHECK(h.operation_timeout_ms == 3000);
  CHECK_FALSE(h.compress);
  CHECK(h.display == "http://[::1]:8080/cache/ob");

  auto d = parse_ok("https://cache.example");
  CHECK(d.connect_timeout_ms == 100);
  CHECK(d.operation_timeout_ms == 2000);
  CHECK(d.compress);
  CHECK_FALSE(d.read_only);
  CHECK(d.layout == RemoteConfig::Layout::Subdirs);
}

TEST_CASE("bad remote storage URLs are usage errors that name no secret", "[remote]") {
  for (const char* bad :
       {"ftp://host/x", "redis://:hunter2@host:99999", "redis://:hunter2@host/notadb",
        "http://u:hunter2@host|layot=flat", "http://host|layout=deep", "redis://host|layout=flat",
        "redis+unix:relative.sock", "http://host|connect-timeout=soon",
        "https://host|bearer-token=hunter2|bogus", "redis://:hunter2@"}) {
    auto r = parse_remote_url(bad);
    INFO(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == exit_code::usage);
    CHECK_THAT(r.error().message, !Catch::Contains("hunter2"));
    CHECK_THAT(r.error().message, Catch::Contains("remote storage"));
  }
  CHECK_THAT(parse_remote_url("http://host|layot=flat").error().message,
             Catch::Contains("unknown attribute \"layot\""));
}

TEST_CASE("credentials come from the environment when the URL names a variable", "[remote]") {
  ::setenv("OB_TEST_REDIS_PW", "from-env", 1);
  ::setenv("OB_TEST_TOKEN", "tok-123", 1);
  auto r = parse_ok("redis://:${OB_TEST_REDIS_PW}@h");
  CHECK(r.password == "from-env");
  CHECK(r.unusable.empty());
  auto h = parse_ok("https://h/p|bearer-token=${OB_TEST_TOKEN}");
  CHECK(h.bearer_token == "tok-123");
  CHECK(h.display == "https://h/p|bearer-token=***");
  ::unsetenv("OB_TEST_REDIS_PW");
  ::unsetenv("OB_TEST_TOKEN");
  auto missing = parse_ok("https://h/p|bearer-token=${OB_TEST_TOKEN}");
  CHECK_THAT(missing.unusable, Catch::Contains("OB_TEST_TOKEN is not set"));
}

TEST_CASE("ca-file: https only, and an unreadable file skips the remote with a reason", "[remote]") {
  test::TempDir dir("ob-ca-file");
  const std::string pem = (dir / "ca.pem").string();
  { std::ofstream(pem) << "-----BEGIN CERTIFICATE-----\n"; }
  auto ok = parse_ok("https://ci:pw@h/p|ca-file=" + pem + "|read-only");
  CHECK(ok.ca_file == pem);
  CHECK(ok.unusable.empty());
  CHECK(ok.display == "https://ci:***@h/p|read-only");
  auto missing = parse_ok("https://h/p|ca-file=" + (dir / "nope.pem").string());
  CHECK_THAT(missing.unusable, Catch::Contains("ca-file " + (dir / "nope.pem").string() + " cannot be read"));
  for (const char* bad : {"http://h/p|ca-file=/x.pem", "redis://h|ca-file=/x.pem", "https://h|ca-file="}) {
    INFO(bad);
    CHECK_FALSE(parse_remote_url(bad));
  }
}

TEST_CASE("a Redis host name that does not resolve is an error, not a hang", "[remote]") {
  // An empty label: glibc refuses to make a DNS query of it, so nothing leaves
  // the machine (see the integration test's unreachable remotes).
  auto backend = make_redis_backend(parse_ok("redis://no..such..host:6379|connect-timeout=5s"));
  auto got = backend->get("result", kKey);
  REQUIRE_FALSE(got);
  CHECK(got.failure().kind == RemoteFailure::Kind::Error);
  CHECK_THAT(got.failure().message, Catch::StartsWith("connect: cannot resolve no..such..host"));
}

TEST_CASE("redaction hides passwords and tokens, parsed or not", "[remote]") {
  CHECK(redact_remote_url("redis://bob:pw@h:1/0|read-only") == "redis://bob:***@h:1/0|read-only");
  CHECK(redact_remote_url("http://pw@h/x|bearer-token=tok|layout=flat") ==
        "http://***@h/x|bearer-token=***|layout=flat");
  // Text that does not parse is never shown: where its secret ends is unknown.
  CHECK(redact_remote_url("garbage:pw@") == "(unparsable; hidden)");
  CHECK(redact_remote_url("http://h/a@b") == "(unparsable; hidden)");  // '@' past the host: refused
}

// A password holding '|', '/', '?' or '#' unencoded, a token holding a space
// or a '|': whatever the text, no part of the secret is shown or quoted.
TEST_CASE("a credential with a separator in it is never shown, parsed or refused", "[remote][secrets]") {
  for (const char* nasty :
       {"redis://:S3cret|pw@host", "redis://:S3cret/pw@host", "redis://:S3cret?pw@host",
        "redis://:S3cret#pw@host", "http://user:S3cret/pw@host/x", "http://user:S3cret?pw@host/x",
        "http://user:S3cret#pw@host/x", "https://user:S3cret|pw@host/x", "http://S3cret/pw@host",
        "https://h/p|bearer-token=S3cret|pw", "https://h/p|bearer-token=S3cret|pw|read-only",
        "http://h|S3cret", "redis+unix:S3cret@/sock", "S3cret", "redis://:S3cret@host:S3cret"}) {
    INFO(nasty);
    auto parsed = parse_remote_url(nasty);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == exit_code::usage);
    CHECK_THAT(parsed.error().message, !Catch::Contains("S3cret"));
    CHECK_THAT(parsed.error().message, Catch::Contains("(unparsable; hidden)"));
    CHECK(redact_remote_url(nasty) == "(unparsable; hidden)");
  }
  // The reason says what to do, quoting nothing.
  CHECK_THAT(parse_remote_url("redis://:S3cret/pw@host").error().message,
             Catch::Contains("percent-encoded (%2F, %3F, %23, %7C)"));
  // Percent-encoded, the same password parses, and is shown as ***.
  auto ok = parse_ok("redis://:S3cret%2Fpw%7Cx%3F@host");
  CHECK(ok.password == "S3cret/pw|x?");
  CHECK(ok.host == "host");
  CHECK(ok.literal_secret);
  CHECK(ok.display == "redis://:***@host");
  CHECK(redact_remote_url("redis://:S3cret%2Fpw%7Cx%3F@host|read-only") == "redis://:***@host|read-only");
  // The last '@' of the authority ends the userinfo, as URL parsers have it.
  auto at = parse_ok("http://u:S3c@ret@host/x");
  CHECK(at.password == "S3c@ret");
  CHECK(at.host == "host");
  CHECK(redact_remote_url("http://u:S3c@ret@host/x") == "http://u:***@host/x");
  // A credential from the environment is no literal one.
  ::setenv("OB_TEST_PW", "S3cret", 1);
  CHECK_FALSE(parse_ok("redis://user:${OB_TEST_PW}@h").literal_secret);
  ::unsetenv("OB_TEST_PW");
}

TEST_CASE("the remote list splits on spaces", "[remote]") {
  CHECK(split_remote_list("  redis://a  http://b|read-only\n") ==
        std::vector<std::string>{"redis://a", "http://b|read-only"});
  CHECK(split_remote_list("   ").empty());
}

TEST_CASE("entry names on the servers", "[remote]") {
  CHECK(redis_key("result", kKey) == "offload-build:v2:result:" + kKey);
  CHECK(http_path(RemoteConfig::Layout::Subdirs, "result", kKey) == "v2/result/ab/" + kKey);
  CHECK(http_path(RemoteConfig::Layout::Flat, "manifest", kKey) == "v2-manifest-" + kKey);
  auto bazel = http_path(RemoteConfig::Layout::Bazel, "result", kKey);
  CHECK(bazel.size() == 3 + 64);
  CHECK(bazel.substr(0, 3) == "ac/");
}

TEST_CASE("layered storage: a verified remote hit fills the local cache", "[remote]") {
  test::TempDir dir("ob-layered");
  Storage local(dir / "cache");
  auto server = std::make_shared<FakeServer>();
  server->values[redis_key("result", kKey)] = encode_entry(sample_entry("remote bytes"), "result", kKey);
  LayeredOptions options;
  options.factory = [server](const RemoteConfig&) { return std::make_unique<FakeBackend>(server); };
  options.warning_fd = -1;
  LayeredStorage layers(local, {parse_ok("redis://h")}, options);

  Lookup l = layers.get("result", kKey);
  REQUIRE(l.status == LookupStatus::Hit);
  CHECK(l.entry.files.at(0).data == "remote bytes");
  CHECK(local.get("result", kKey).status == LookupStatus::Hit);  // back-filled
  CHECK(layers.get("result", kKey).status == LookupStatus::Hit);
  CHECK(server->gets == 1);  // the second came from the local cache
  // A miss is asked for once per process.
  CHECK(layers.get("manifest", kKey).status == LookupStatus::Missing);
  CHECK(layers.get("manifest", kKey).status == LookupStatus::Missing);
  CHECK(server->gets == 2);
  auto counters = layers.remote_counters().at("redis://h");
  CHECK(counters.hits == 1);
  CHECK(counters.misses == 1);
  CHECK(counters.bytes_read > 0);
}

TEST_CASE("layered storage: corrupt or foreign remote values never reach the local cache",
          "[remote]") {
  std::string good = encode_entry(sample_entry("x"), "result", "fedcba9876543210");
  std::string truncated = good.substr(0, good.size() - 3);
  std::string flipped = good;
  flipped.back() ^= 1;
  // A poisoned value: a well-formed entry, but another key's (another job's
  // content), stored under this key.
  std::string moved = good;
  for (const std::string& bad : {truncated, flipped, moved, std::string("ccache entry, not ours"),
                                 std::string()}) {
    test::TempDir dir("ob-layered");
    Storage local(dir / "cache");
    auto server = std::make_shared<FakeServer>();
    server->values[redis_key("result", kKey)] = bad;
    server->values[redis_key("result", "fedcba9876543210")] = good;
    WarningPipe warnings;
    LayeredOptions options;
    options.factory = [server](const RemoteConfig&) { return std::make_unique<FakeBackend>(server); };
    options.warning_fd = warnings.fds[1];
    LayeredStorage layers(local, {parse_ok("redis://:pw@h|allow-unsigned")}, options);

    CHECK(layers.get("result", kKey).status == LookupStatus::Missing);
    CHECK(local.get("result", kKey).status == LookupStatus::Missing);
    // The remote stays on: the good entry is still served.
    CHECK(layers.get("result", "fedcba9876543210").status == LookupStatus::Hit);
    CHECK(server->gets == 2);
    auto c = layers.remote_counters().at("redis://:***@h|allow-unsigned");
    CHECK(c.errors == 1);
    CHECK(c.rejected == 1);
    std::string w = warnings.read();
    CHECK(count(w, "warning: remote storage redis://:***@h|allow-unsigned:") == 1);
    CHECK_THAT(w, Catch::Contains("not a valid entry"));
    CHECK(server->values.count(redis_key("result", kKey)) == 0);  // a writer removes it
    CHECK_THAT(w, !Catch::Contains("pw@"));
  }
}

TEST_CASE("layered storage: a failing remote is warned about once and then left alone",
          "[remote]") {
  test::TempDir dir("ob-layered");
  Storage local(dir / "cache");
  auto server = std::make_shared<FakeServer>();
  server->fail_with = RemoteFailure{RemoteFailure::Kind::Timeout, "GET: Timeout was reached"};
  auto second = std::make_shared<FakeServer>();
  second->values[redis_key("result", kKey)] = encode_entry(sample_entry("from the second"), "result", kKey);
  WarningPipe warnings;
  LayeredOptions options;
  options.factory = [&](const RemoteConfig& c) {
    return std::make_unique<FakeBackend>(c.host == "first" ? server : second);
  };
  options.warning_fd = warnings.fds[1];
  LayeredStorage layers(local, {parse_ok("http://first/x|allow-unsigned"),
                                parse_ok("http://second/x|allow-unsigned")}, options);

  auto l = layers.get("result", kKey);  // the first times out, the second serves
  REQUIRE(l.status == LookupStatus::Hit);
  CHECK(l.entry.files.at(0).data == "from the second");
  for (int i = 0; i < 3; ++i) CHECK(layers.get("result", "0123456789abcdef").status == LookupStatus::Missing);
  CHECK(layers.put("result", "0123456789abcdef", sample_entry("y")));  // stored locally
  layers.finish_uploads();
  CHECK(server->gets == 1);
  CHECK(server->puts == 0);
  auto c = layers.remote_counters();
  CHECK(c.at("http://first/x|allow-unsigned").timeouts == 1);
  CHECK(c.at("http://second/x|allow-unsigned").hits == 1);
  CHECK(c.at("http://second/x|allow-unsigned").misses == 1);  // asked once: a miss is remembered for the process
  std::string w = warnings.read();
  CHECK(count(w, "warning: remote storage") == 1);
  CHECK_THAT(w, Catch::Contains("(timed out)"));
}

TEST_CASE("layered storage: uploads go to every writable remote, bounded, done by finish",
          "[remote]") {
  test::TempDir dir("ob-layered");
  Storage local(dir / "cache");
  auto writer = std::make_shared<FakeServer>();
  auto plain = std::make_shared<FakeServer>();
  auto reader = std::make_shared<FakeServer>();
  LayeredOptions options;
  options.factory = [&](const RemoteConfig& c) {
    return std::make_unique<FakeBackend>(c.host == "w" ? writer : c.host == "p" ? plain : reader);
  };
  options.max_queued_bytes = 100;  // smaller than one entry: put() waits for each upload
  options.warning_fd = -1;
  LayeredStorage layers(local,
                        {parse_ok("redis://w"), parse_ok("redis://p|compress=false"),
                         parse_ok("redis://r|read-only")},
                        options);
  const std::string data(4000, 'a');
  for (int i = 0; i < 20; ++i)
    REQUIRE(layers.put("result", fmt::format("{:016x}", i), sample_entry(data)));
  layers.finish_uploads();
  CHECK(writer->values.size() == 20);
  CHECK(plain->values.size() == 20);
  CHECK(reader->puts == 0);
  const std::string& compressed = writer->values.begin()->second;
  const std::string& uncompressed = plain->values.begin()->second;
  CHECK(compressed.size() < uncompressed.size());
  for (const std::string* v : {&compressed, &uncompressed}) {
    auto e = decode_entry(*v, "result", fmt::format("{:016x}", 0));
    REQUIRE(e);
    CHECK(e->files.at(0).data == data);
  }
  auto c = layers.remote_counters();
  CHECK(c.at("redis://w").uploads == 20);
  CHECK(c.at("redis://w").bytes_written > 0);
  CHECK(c.at("redis://r|read-only").uploads == 0);
  // Recorded into the local cache's counters, once.
  layers.record({});
  CHECK(local.counters().remotes.at("redis://w").uploads == 20);
  layers.record({});
  CHECK(local.counters().remotes.at("redis://w").uploads == 20);
}

TEST_CASE("layered storage: a remote that takes uploads together gets them a batch at a time, "
          "the rest at the end or when a put waits for room",
          "[remote]") {
  // Sizes of the put_all calls the layer made.
  struct BatchBackend final : RemoteBackend {
    std::shared_ptr<FakeServer> s;
    std::vector<size_t>* calls;
    BatchBackend(std::shared_ptr<FakeServer> s, std::vector<size_t>* calls) : s(std::move(s)), calls(calls) {}
    RemoteResult<std::optional<std::string>> get(std::string_view, std::string_view) override {
      return std::optional<std::string>{};
    }
    RemoteResult<bool> put(std::string_view kind, std::string_view key, std::string_view value, bool) override {
      s->values[redis_key(kind, key)] = std::string(value);
      return true;
    }
    RemoteResult<bool> remove(std::string_view, std::string_view) override { return false; }
    RemoteResult<std::vector<bool>> put_all(const std::vector<Put>& puts) override {
      calls->push_back(puts.size());
      return RemoteBackend::put_all(puts);
    }
  };
  for (size_t room : {size_t{1} << 20, size_t{100}}) {
    test::TempDir dir("ob-layered-batch");
    Storage local(dir / "cache");
    auto server = std::make_shared<FakeServer>();
    std::vector<size_t> calls;
    LayeredOptions options;
    options.factory = [&](const RemoteConfig&) { return std::make_unique<BatchBackend>(server, &calls); };
    options.max_queued_bytes = room;  // 100: smaller than one entry, every put() waits for room
    options.warning_fd = -1;
    RemoteConfig config = parse_ok("redis://w|allow-unsigned");
    config.upload_batch = 4;
    LayeredStorage layers(local, {config}, options);
    for (int i = 0; i < 10; ++i)
      REQUIRE(layers.put("result", fmt::format("{:016x}", i), sample_entry(std::string(1000, 'a'))));
    layers.finish_uploads();
    INFO("room " << room);
    CHECK(server->values.size() == 10);
    size_t sent = 0;
    for (size_t n : calls) {
      CHECK(n >= 1);
      CHECK(n <= 4);
      sent += n;
    }
    CHECK(sent == 10);
    // With room, whole batches while the build runs, the 2 left at its end.
    if (room > 100) CHECK(calls == std::vector<size_t>{4, 4, 2});
  }
}

TEST_CASE("the remote list: command line, else environment, else manifest", "[remote]") {
  using config::Origin;
  config::Config c;
  auto m = configured_remotes(c, {"redis://m"});
  REQUIRE(m);
  REQUIRE(m->size() == 1);
  CHECK(m->at(0).host == "m");
  c.set("remote_storage", "redis://f", Origin::UserFile, "~/.config/offload-build/config:1");
  CHECK(configured_remotes(c, {"redis://m"})->at(0).host == "m");  // the manifest is above the files
  c.set("remote_storage", "redis://e1 http://e2/x", Origin::Environment, "OFFLOAD_BUILD_REMOTE_STORAGE");
  auto e = configured_remotes(c, {"redis://m"});
  REQUIRE(e);
  CHECK(e->size() == 2);
  c.set("remote_storage", "redis://c", Origin::CommandLine, "--remote-storage");
  auto cli = configured_remotes(c, {"redis://m"});
  REQUIRE(cli);
  CHECK(cli->size() == 1);
  CHECK(cli->at(0).host == "c");
  config::Config empty;
  empty.set("remote_storage", "", Origin::Environment, "OFFLOAD_BUILD_REMOTE_STORAGE");
  CHECK(configured_remotes(empty, {"redis://m"})->empty());  // set but empty: none
  config::Config secret;
  secret.set("remote_storage", "redis://:hunter2@h:0", Origin::Environment, "OFFLOAD_BUILD_REMOTE_STORAGE");
  auto bad = configured_remotes(secret, {});
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("OFFLOAD_BUILD_REMOTE_STORAGE"));
  CHECK_THAT(bad.error().message, !Catch::Contains("hunter2"));
}

TEST_CASE("layered storage: with a signing key, only entries signed with it are used", "[remote]") {
  test::TempDir dir("ob-layered");
  Storage local(dir / "cache", default_max_size(), Trust{.signing_key = "team secret"});
  REQUIRE(local.signing_key() == "team secret");
  auto server = std::make_shared<FakeServer>();
  const std::string k1 = "1111111111111111", k2 = "2222222222222222", k3 = "3333333333333333";
  server->values[redis_key("result", k1)] = encode_entry(sample_entry("signed"), "result", k1, "team secret");
  server->values[redis_key("result", k2)] = encode_entry(sample_entry("unsigned"), "result", k2);
  server->values[redis_key("result", k3)] = encode_entry(sample_entry("other key"), "result", k3, "guess");
  for (const auto& [key, ok] : {std::pair{k1, true}, std::pair{k2, false}, std::pair{k3, false}}) {
    LayeredOptions options;
    options.factory = [server](const RemoteConfig&) { return std::make_unique<FakeBackend>(server); };
    options.warning_fd = -1;
    LayeredStorage layers(local, {parse_ok("redis://h|read-only")}, options);
    INFO(key);
    Lookup l = layers.get("result", key);
    CHECK((l.status == LookupStatus::Hit) == ok);
    CHECK((local.get("result", key).status == LookupStatus::Hit) == ok);  // nothing unsigned kept
    if (!ok) CHECK(layers.remote_counters().begin()->second.bad_signature == 1);
    if (!ok) CHECK(layers.remote_counters().begin()->second.rejected == 0);
  }
}

TEST_CASE("layered storage: a writer with another key skips what it cannot check, deletes nothing, "
          "keeps the remote on", "[remote]") {
  // A client with a mistyped key meets the team's signed entries, an old
  // unsigned one and a damaged one.
  test::TempDir dir("ob-layered");
  Storage local(dir / "cache", default_max_size(), Trust{.signing_key = "mistyped"});
  auto server = std::make_shared<FakeServer>();
  const std::string team1 = "1111111111111111", team2 = "2222222222222222", old = "3333333333333333",
                    damaged = "4444444444444444", ours = "5555555555555555";
  server->values[redis_key("result", team1)] = encode_entry(sample_entry("team"), "result", team1, "team key");
  server->values[redis_key("result", team2)] = encode_entry(sample_entry("team"), "result", team2, "team key");
  server->values[redis_key("result", old)] = encode_entry(sample_entry("old"), "result", old);
  std::string bad = encode_entry(sample_entry("x"), "result", damaged, "mistyped");
  bad[bad.size() / 2] ^= 0x20;
  server->values[redis_key("result", damaged)] = bad;
  server->values[redis_key("result", ours)] = encode_entry(sample_entry("ours"), "result", ours, "mistyped");
  const auto team_value = server->values[redis_key("result", team1)];

  WarningPipe warnings;
  LayeredOptions options;
  options.factory = [server](const RemoteConfig&) { return std::make_unique<FakeBackend>(server); };
  options.warning_fd = warnings.fds[1];
  LayeredStorage layers(local, {parse_ok("redis://h")}, options);
  for (const auto& k : {team1, team2, old, damaged})
    CHECK(layers.get("result", k).status == LookupStatus::Missing);
  REQUIRE(layers.get("result", ours).status == LookupStatus::Hit);  // still on after all of that
  // The jobs are built locally and stored: the team's entries are not replaced,
  // the unsigned one is (now signed), the damaged one was removed and is stored anew.
  for (const auto& k : {team1, team2, old, damaged}) CHECK(layers.put("result", k, sample_entry("mine")));
  layers.finish_uploads();
  CHECK(server->values.at(redis_key("result", team1)) == team_value);
  CHECK(decode_entry(server->values.at(redis_key("result", team2)), "result", team2, "team key").ok());
  CHECK(decode_entry(server->values.at(redis_key("result", old)), "result", old, "mistyped").ok());
  CHECK(decode_entry(server->values.at(redis_key("result", damaged)), "result", damaged, "mistyped").ok());
  auto c = layers.remote_counters().at("redis://h");
  CHECK(c.bad_signature == 3);
  CHECK(c.rejected == 1);
  CHECK(c.hits == 1);
  CHECK(c.uploads == 2);
  CHECK(c.kept_foreign == 2);  // the team's two: another key's entries, not replaced
  std::string w = warnings.read();
  CHECK(count(w, "not signed with this build's key") == 1);  // once, for three values
  CHECK(count(w, "not a valid entry") == 1);
  CHECK(count(w, "not used for the rest of this build") == 0);
  CHECK(count(w, "warning: unsigned remote storage") == 0);  // it has a key
}

TEST_CASE("layered storage: a writable remote without a key is said once: read-only, "
          "allow-unsigned and a key are silent", "[remote]") {
  struct Case {
    std::string url;
    bool with_key;
    size_t warnings;
  };
  for (const auto& [url, with_key, expected] :
       {Case{"redis://h", false, 1}, Case{"redis://h|read-only", false, 0},
        Case{"redis://h|allow-unsigned", false, 0}, Case{"redis://h", true, 0}}) {
    INFO(url << " key " << with_key);
    test::TempDir dir("ob-layered");
    Storage local(dir / "cache", default_max_size(), Trust{.signing_key = with_key ? "k" : ""});
    auto server = std::make_shared<FakeServer>();
    WarningPipe warnings;
    LayeredOptions options;
    options.factory = [server](const RemoteConfig&) { return std::make_unique<FakeBackend>(server); };
    options.warning_fd = warnings.fds[1];
    LayeredStorage layers(local, {parse_ok(url)}, options);
    for (int i = 0; i < 3; ++i) {
      const std::string k = fmt::format("{:016x}", i);
      CHECK(layers.get("result", k).status == LookupStatus::Missing);
      CHECK(layers.put("result", k, sample_entry("x")));
    }
    layers.finish_uploads();
    std::string w = warnings.read();
    CHECK(count(w, "offload-build: warning: unsigned remote storage redis://h") == expected);
    if (expected) CHECK_THAT(w, Catch::Contains("OFFLOAD_BUILD_SIGNING_KEY"));
    if (expected) CHECK_THAT(w, Catch::Contains("|allow-unsigned"));
  }
  // Once per build, not per process, where the caller says what a build is.
  test::TempDir dir("ob-layered");
  Storage local(dir / "cache");
  int asked = 0;
  for (int process = 0; process < 2; ++process) {
    auto server = std::make_shared<FakeServer>();
    WarningPipe warnings;
    LayeredOptions options;
    options.factory = [server](const RemoteConfig&) { return std::make_unique<FakeBackend>(server); };
    options.warning_fd = warnings.fds[1];
    options.first_in_build = [&](const std::string&) { return asked++ == 0; };
    LayeredStorage layers(local, {parse_ok("redis://h")}, options);
    CHECK(layers.get("result", kKey).status == LookupStatus::Missing);
    CHECK(count(warnings.read(), "unsigned remote storage") == (process == 0 ? 1u : 0u));
  }
}

TEST_CASE("layered storage: values over max-entry-size are refused before decompression, "
          "and not uploaded", "[remote]") {
  test::TempDir dir("ob-layered");
  Storage local(dir / "cache");
  auto server = std::make_shared<FakeServer>();
  Entry big{R"({"job":"x"})", {{"out.o", std::string(3 << 20, 'a')}}};  // 3 MiB, compresses to little
  server->values[redis_key("result", kKey)] = encode_entry(big, "result", kKey);
  REQUIRE(server->values[redis_key("result", kKey)].size() < (64u << 10));
  WarningPipe warnings;
  LayeredOptions options;
  options.factory = [server](const RemoteConfig&) { return std::make_unique<FakeBackend>(server); };
  options.warning_fd = warnings.fds[1];
  LayeredStorage layers(local, {parse_ok("redis://h|max-entry-size=1M|allow-unsigned")}, options);
  CHECK(layers.get("result", kKey).status == LookupStatus::Missing);  // declared 3 MiB > 1 MiB
  CHECK(server->values.count(redis_key("result", kKey)) == 1);     // left on the server
  const std::string other = "0123456789abcdef";
  Entry noise{R"({"job":"x"})", {{"out.o", std::string()}}};
  for (int i = 0; i < (2 << 20) / 8; ++i) noise.files[0].data += fmt::format("{:08x}", i * 2654435761u);
  CHECK(layers.put("result", other, noise));  // 2 MiB that compress badly: stored locally only
  layers.finish_uploads();
  CHECK(server->values.count(redis_key("result", other)) == 0);
  auto c = layers.remote_counters().at("redis://h|allow-unsigned");
  CHECK(c.oversized == 2);
  CHECK(c.errors == 0);
  CHECK(count(warnings.read(), "max-entry-size") == 1);
  CHECK(local.get("result", other).status == LookupStatus::Hit);
}

namespace {

// Answers every call (a miss) after `delay`, recording the limit the layer
// gave it for that call: a server that is slow but never fails.
class SlowBackend final : public RemoteBackend {
 public:
  SlowBackend(std::chrono::milliseconds delay, std::vector<int64_t>& limits)
      : delay_(delay), limits_(limits) {}
  RemoteResult<std::optional<std::string>> get(std::string_view, std::string_view) override {
    limits_.push_back(call_ms(INT64_MAX));
    std::this_thread::sleep_for(delay_);
    return std::optional<std::string>{};
  }
  RemoteResult<bool> put(std::string_view, std::string_view, std::string_view, bool) override {
    limits_.push_back(call_ms(INT64_MAX));
    std::this_thread::sleep_for(delay_);
    return true;
  }
  RemoteResult<bool> remove(std::string_view, std::string_view) override { return false; }

 private:
  std::chrono::milliseconds delay_;
  std::vector<int64_t>& limits_;
};

}  // namespace

TEST_CASE("layered storage: a slow server that never fails is dropped once its build budget is spent",
          "[remote]") {
  test::TempDir dir("ob-layered");
  Storage local(dir / "cache");
  std::vector<int64_t> limits;
  WarningPipe warnings;
  LayeredOptions options;
  options.factory = [&](const RemoteConfig&) {
    return std::make_unique<SlowBackend>(std::chrono::milliseconds(300), limits);
  };
  options.warning_fd = warnings.fds[1];
  // Budget: operation-timeout + 1 s - connect-timeout = 1350 ms past
  // connect-timeout (50 ms); each call spends at least 250 ms past it.
  LayeredStorage layers(
      local, {parse_ok("redis://h|connect-timeout=50ms|operation-timeout=400ms|read-only")}, options);
  for (int i = 0; i < 20; ++i) layers.get("result", fmt::format("{:016x}", i));
  INFO(limits.size() << " calls");
  // A slower machine only makes each call slower: at most 6 calls, never 20.
  CHECK(limits.size() <= 6);
  CHECK(limits.size() >= 1);
  // Each call was given what was left of the budget, never more than that.
  for (size_t i = 1; i < limits.size(); ++i) CHECK(limits[i] < limits[i - 1]);
  CHECK(limits.front() <= 50 + 1350);
  std::string w = warnings.read();
  CHECK(count(w, "warning: remote storage") == 1);
  CHECK_THAT(w, Catch::Contains("too slow"));
  CHECK(layers.remote_counters().begin()->second.timeouts == 1);
}

TEST_CASE("layered storage: a connect-timeout longer than the budget does not drop a fast remote",
          "[remote]") {
  test::TempDir dir("ob-layered");
  Storage local(dir / "cache");
  auto server = std::make_shared<FakeServer>();
  WarningPipe warnings;
  LayeredOptions options;
  options.factory = [server](const RemoteConfig&) { return std::make_unique<FakeBackend>(server); };
  options.warning_fd = warnings.fds[1];
  LayeredStorage layers(local, {parse_ok("redis://h|connect-timeout=5s|operation-timeout=250ms|read-only")},
                        options);
  for (int i = 0; i < 5; ++i) CHECK(layers.get("result", fmt::format("{:016x}", i)).status == LookupStatus::Missing);
  CHECK(server->gets == 5);
  CHECK(warnings.read().empty());
}
