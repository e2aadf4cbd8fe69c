// Remote storage and trust, against a private redis-server: a value that
// declares 2 GB, a client with a mistyped signing key, a team moving to
// signing, the warning for a writable remote without a key, and secrets kept
// from every process offload-build starts. Asserts on programs, counters,
// server contents, warnings and the children's environments; no timing.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <map>

#include "offload_build/storage/storage.hpp"
#include "offload_build/storage/remote/remote.hpp"
#include "support/entry_bomb.hpp"
#include "support/ob_process.hpp"
#include "support/remote_build.hpp"
#include "support/servers.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// Every value on the server, by Redis key (read through the library's own
// backend: binary-safe).
std::map<std::string, std::string> server_values(const RedisServer& s) {
  auto config = storage::parse_remote_url("redis://:" + kPassword + "@127.0.0.1:" +
                                        std::to_string(s.port()));
  REQUIRE(config);
  auto backend = storage::make_redis_backend(*config);
  std::map<std::string, std::string> out;
  std::string keys = redis_cli(s, {"--raw", "KEYS", "offload-build:*"});
  for (size_t at = 0; at < keys.size();) {
    size_t end = keys.find('\n', at);
    std::string k = keys.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? keys.size() : end + 1;
    if (k.empty()) continue;
    // offload-build:v2:<kind>:<key>
    const size_t colon = k.rfind(':'), before = k.rfind(':', colon - 1);
    auto v = backend->get(k.substr(before + 1, colon - before - 1), k.substr(colon + 1));
    REQUIRE(v);
    REQUIRE(*v);
    out[k] = **v;
  }
  return out;
}

void put_value(const RedisServer& s, const std::string& redis_key, const std::string& value) {
  auto config = storage::parse_remote_url("redis://:" + kPassword + "@127.0.0.1:" +
                                        std::to_string(s.port()));
  REQUIRE(config);
  const size_t colon = redis_key.rfind(':'), before = redis_key.rfind(':', colon - 1);
  auto done = storage::make_redis_backend(*config)->put(
      redis_key.substr(before + 1, colon - before - 1), redis_key.substr(colon + 1), value, true);
  REQUIRE(done);
}

// The largest resident size of any child this test process has waited for
// (offload-build and, through it, the compilers), in MB.
long children_peak_rss_mb() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  return u.ru_maxrss / 1024;
}

}  // namespace

TEST_CASE("Redis: values declaring 2 GB cost a build nothing: the remote stays on",
          "[remote][redis][integration]") {
  TempDir tmp{"ob-bomb"};
  RedisServer server(tmp / "redis", {false, kPassword});
  const std::string url = "redis://:" + kPassword + "@127.0.0.1:" + std::to_string(server.port());
  const std::string shown = "redis://:***@127.0.0.1:" + std::to_string(server.port());
  fs::path dir = copy_example("saxpy-c", tmp / "p");
  REQUIRE(build(dir, tmp / "cache1", {url + "|allow-unsigned"}).exit_code == 0);
  auto values = server_values(server);
  REQUIRE(values.size() >= 5);
  // Every value replaced by a well-formed entry for its key that really
  // expands to 2 GB (about 61 KB each).
  for (const auto& [k, v] : values) {
    const size_t colon = k.rfind(':'), before = k.rfind(':', colon - 1);
    put_value(server, k,
              entry_bomb(k.substr(colon + 1), 2'000'000'000, k.substr(before + 1, colon - before - 1)));
  }
  fs::remove_all(dir / "build");
  auto r = build(dir, tmp / "cache2", {url + "|read-only"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
  CHECK(count_occurrences(r.err, "max-entry-size") == 1);  // one warning
  CHECK_THAT(r.err, !Catch::Contains("not used for the rest of this build"));
  auto s = remote_stats(tmp / "cache2", shown + "|read-only");
  CHECK(count_of(s, "oversized") >= 2);  // asked for more than once: the remote stayed on
  CHECK(count_of(s, "errors") == 0);
  // Had any of them been decompressed, the build would have held 2 GB.
  CHECK(children_peak_rss_mb() < 1024);
  CHECK(server_values(server).size() == values.size());  // left on the server
}

TEST_CASE("Redis: a writer with a mistyped key deletes nothing and replaces none of the team's "
          "entries: a team moving to signing replaces the unsigned ones",
          "[remote][redis][integration]") {
  TempDir tmp{"ob-signing"};
  RedisServer server(tmp / "redis", {false, kPassword});
  const std::string url = "redis://:" + kPassword + "@127.0.0.1:" + std::to_string(server.port());
  const std::string shown = "redis://:***@127.0.0.1:" + std::to_string(server.port());
  const Env team{{"OFFLOAD_BUILD_SIGNING_KEY", "team key"}};
  const Env mistyped{{"OFFLOAD_BUILD_SIGNING_KEY", "team kye"}};

  SECTION("a mistyped key") {
    fs::path ci = copy_example("saxpy-c", tmp / "ci");
    REQUIRE(build(ci, tmp / "cache-ci", {url}, {}, team).exit_code == 0);
    const auto before = server_values(server);
    REQUIRE(before.size() >= 5);

    fs::path laptop = copy_example("saxpy-c", tmp / "laptop");
    auto r = build(laptop, tmp / "cache-laptop", {url}, {}, mistyped);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
    CHECK(count_occurrences(r.err, "not signed with this build's key") == 1);
    CHECK(count_occurrences(r.err, "warning:") == 1);
    CHECK_THAT(r.err, !Catch::Contains("team kye"));
    auto s = remote_stats(tmp / "cache-laptop", shown);
    CHECK(count_of(s, "bad_signature") >= 2);  // the remote stayed on after the first
    CHECK(count_of(s, "errors") == 0);
    CHECK(count_of(s, "rejected") == 0);
    // Every entry of the team's is still there, unchanged.
    auto after = server_values(server);
    for (const auto& [k, v] : before) {
      INFO(k);
      REQUIRE(after.count(k));
      CHECK(after.at(k) == v);
    }
    // ...and serves a fresh clone with the right key.
    fs::path other = copy_example("saxpy-c", tmp / "other");
    auto served = build(other, tmp / "cache-other", {url + "|read-only"}, {}, team);
    INFO(served.err);
    CHECK_THAT(served.err, Catch::Contains("5 jobs: 5 from cache, 0 run"));
  }

  SECTION("moving to signing") {
    fs::path old = copy_example("saxpy-c", tmp / "old");
    REQUIRE(build(old, tmp / "cache-old", {url + "|allow-unsigned"}).exit_code == 0);
    const size_t n = server_values(server).size();
    fs::path ci = copy_example("saxpy-c", tmp / "ci");
    auto r = build(ci, tmp / "cache-ci", {url}, {}, team);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(count_of(remote_stats(tmp / "cache-ci", shown), "uploads") >= 5);
    // Every value is now signed with the team's key.
    auto now = server_values(server);
    CHECK(now.size() == n);
    for (const auto& [k, v] : now) {
      const size_t colon = k.rfind(':'), before = k.rfind(':', colon - 1);
      INFO(k);
      CHECK(storage::decode_entry(v, k.substr(before + 1, colon - before - 1), k.substr(colon + 1),
                                "team key").ok());
    }
  }
}

TEST_CASE("a writable remote without a key is said once per build: read-only, allow-unsigned and "
          "a key are silent: doctor says which are signed", "[remote][redis][integration]") {
  TempDir tmp{"ob-unsigned"};
  RedisServer server(tmp / "redis", {false, kPassword});
  const std::string url = "redis://:" + kPassword + "@127.0.0.1:" + std::to_string(server.port());
  fs::path dir = copy_example("saxpy-c", tmp / "p");
  struct Case {
    std::string suffix;
    Env env;
    size_t warnings;
  };
  const Env no_key{{"OFFLOAD_BUILD_SIGNING_KEY", std::nullopt}};
  for (const auto& [suffix, env, expected] :
       {Case{"", no_key, 1}, Case{"|read-only", no_key, 0}, Case{"|allow-unsigned", no_key, 0},
        Case{"", {{"OFFLOAD_BUILD_SIGNING_KEY", "k"}}, 0}}) {
    INFO(suffix);
    fs::remove_all(dir / "build");
    auto r = build(dir, tmp / ("cache" + std::to_string(expected) + suffix), {url + suffix}, {}, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(count_occurrences(r.err, "warning: unsigned remote storage") == expected);
    if (expected) CHECK_THAT(r.err, Catch::Contains("|allow-unsigned"));
  }

  auto doctor = run_ob({"--remote-storage", url, "doctor"}, {}, remote_env(no_key));
  CHECK_THAT(doctor.out, Catch::Contains("entries unsigned: anyone who can write to this server"));
  auto signed_doctor = run_ob({"--remote-storage", url, "doctor"}, {},
                              remote_env({{"OFFLOAD_BUILD_SIGNING_KEY", "k"}}));
  CHECK_THAT(signed_doctor.out, Catch::Contains("entries signed"));
  CHECK_THAT(doctor.out + signed_doctor.out, !Catch::Contains(kPassword));

  // Launcher mode: a process per compile, one warning per build (the two
  // compiles below share their parent, as the compiles of one make run do).
  write_file(tmp / "k.c", "int f(int x) {\n#pragma omp target map(tofrom: x)\n  x += 1;\n  return x;\n}\n");
  size_t said = 0;
  for (const char* obj : {"a.o", "b.o"}) {
    auto r = run_ob({"--cache-dir", (tmp / "cache-launcher").string(), "--remote-storage", url,
                     "wrap", "--", "/usr/lib/llvm-22/bin/clang", "-fopenmp",
                     "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", (tmp / "k.c").string(),
                     "-o", (tmp / obj).string()},
                    tmp.path(), remote_env(no_key));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    said += count_occurrences(r.err, "warning: unsigned remote storage");
  }
  CHECK(said == 1);
}

TEST_CASE("secrets never reach a process offload-build starts: compilers, the program run starts",
          "[remote][integration]") {
  TempDir tmp{"ob-secrets"};
  fs::path dir = tmp / "p";
  fs::create_directories(dir);
  write_file(dir / "offload.json",
             R"({"name": "envdump", "output": "envdump", "sources": ["envdump.c"], "targets": ["host"]})");
  write_file(dir / "envdump.c", R"C(#include <stdio.h>
#include <stdlib.h>
int main(void) {
  const char* names[] = {"OFFLOAD_BUILD_SIGNING_KEY", "OFFLOAD_BUILD_SIGNING_KEY_FILE",
                         "OB_TEST_REDIS_PASSWORD", "OFFLOAD_BUILD_REMOTE_STORAGE", "OB_TEST_PLAIN"};
  int on_device = 0;
#pragma omp target map(from: on_device)
  on_device = 1;
  for (int i = 0; i < 5; ++i) printf("%s=%s\n", names[i], getenv(names[i]) ? getenv(names[i]) : "(unset)");
  printf("offloaded=%d\n", on_device);
  return 0;
}
)C");
  write_file(tmp / "key", "file key\n");
  // The compiler (through a launcher compile run unchanged) writes its environment out.
  write_file(tmp / "fake-cc", "#!/bin/sh\nenv > \"$OB_TEST_ENV_OUT\"\n");
  fs::permissions(tmp / "fake-cc", fs::perms::owner_all);
  const std::string by_variable = "redis://:${OB_TEST_REDIS_PASSWORD}@127.0.0.1:1|read-only";
  const std::string inline_password = "redis://:inline-pw-77@127.0.0.1:1|read-only";

  for (const auto& [remote, remote_kept] :
       {std::pair{by_variable, true}, std::pair{inline_password, false}}) {
    INFO(remote);
    const Env env{{"OFFLOAD_BUILD_SIGNING_KEY", "the-signing-key-55"},
                  {"OB_TEST_REDIS_PASSWORD", "redis-pw-66"},
                  {"OFFLOAD_BUILD_REMOTE_STORAGE", remote},
                  {"OB_TEST_PLAIN", "visible"},
                  {"OB_TEST_ENV_OUT", (tmp / "cc.env").string()}};
    fs::remove_all(dir / "build");
    auto r = run_ob({"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "run"}, {}, env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("offloaded=1"));
    CHECK_THAT(r.out, Catch::Contains("OFFLOAD_BUILD_SIGNING_KEY=(unset)"));
    CHECK_THAT(r.out, Catch::Contains("OFFLOAD_BUILD_SIGNING_KEY_FILE=(unset)"));
    // Named by the first URL only: the second does not make it a credential.
    CHECK_THAT(r.out, Catch::Contains(remote_kept ? std::string("OB_TEST_REDIS_PASSWORD=(unset)")
                                                  : std::string("OB_TEST_REDIS_PASSWORD=redis-pw-66")));
    CHECK_THAT(r.out, Catch::Contains("OB_TEST_PLAIN=visible"));
    CHECK_THAT(r.out, Catch::Contains(remote_kept ? "OFFLOAD_BUILD_REMOTE_STORAGE=" + remote
                                                  : std::string("OFFLOAD_BUILD_REMOTE_STORAGE=(unset)")));
    CHECK_THAT(r.out + r.err, !Catch::Contains("the-signing-key-55"));
    if (remote_kept) CHECK_THAT(r.out + r.err, !Catch::Contains("redis-pw-66"));
    CHECK_THAT(r.out + r.err, !Catch::Contains("inline-pw-77"));

    fs::remove(tmp / "cc.env");
    auto cc = run_ob({"--cache-dir", (tmp / "cache").string(), "wrap", "--", (tmp / "fake-cc").string(), "-c",
                      "x.c", "-o", "x.o"},
                     tmp.path(), env);
    INFO(cc.err);
    REQUIRE(cc.exit_code == 0);
    const std::string seen = read_file(tmp / "cc.env");
    CHECK_THAT(seen, Catch::Contains("OB_TEST_PLAIN=visible"));
    CHECK_THAT(seen, !Catch::Contains("the-signing-key-55"));
    if (remote_kept) CHECK_THAT(seen, !Catch::Contains("redis-pw-66"));
    CHECK_THAT(seen, !Catch::Contains("inline-pw-77"));
    CHECK_THAT(seen, !Catch::Contains("OFFLOAD_BUILD_SIGNING_KEY"));
  }
  // The key from a file: the variable naming the file is kept from children too.
  fs::remove_all(dir / "build");
  auto f = run_ob({"-C", dir.string(), "--cache-dir", (tmp / "cache-f").string(), "run"}, {},
                  {{"OFFLOAD_BUILD_SIGNING_KEY_FILE", (tmp / "key").string()},
                   {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt}});
  INFO(f.err);
  REQUIRE(f.exit_code == 0);
  CHECK_THAT(f.out, Catch::Contains("OFFLOAD_BUILD_SIGNING_KEY_FILE=(unset)"));
}
