// Remote storage against real servers: a private redis-server (TCP with a
// password, and a unix socket) and nginx serving WebDAV, each on 127.0.0.1
// in a temporary directory, stopped by PID (tests/support/servers.hpp).
// Every case asserts on the program that comes out, the jobs that ran, the
// cache counters and the warnings; none depends on timing to pass.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include <nlohmann/json.hpp>

#include "offload_build/storage/storage.hpp"
#include "support/ob_process.hpp"
#include "support/remote_build.hpp"
#include "support/servers.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kSaxpyOk = "saxpy: n=1048576 y[10]=21.000000 max_err=0 OK\non_device=yes\n";

void require_sound(const fs::path& cache) {
  auto v = run_ob({"--cache-dir", cache.string(), "cache", "verify"});
  INFO(v.out << v.err);
  REQUIRE(v.exit_code == 0);
}

void check_runs(const fs::path& dir) {
  auto r = run_tool({(dir / "build/saxpy").string()}, dir,
                    {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == kSaxpyOk);
}

// `run --verify` (OMP_TARGET_OFFLOAD=MANDATORY, the runtime's log read back)
// with nothing built: every job served.
void check_served_and_offloaded(const fs::path& dir, const fs::path& cache,
                                const std::string& remote, Env env = {}) {
  fs::remove_all(dir / "build");  // a fresh checkout
  auto r = build(dir, cache, {remote}, {"run", "--verify"}, env);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("5 jobs: 5 from cache, 0 run"));
  CHECK_THAT(r.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch"));
  CHECK_THAT(r.out, Catch::Contains("max_err=0 OK"));
  CHECK_THAT(r.err, !Catch::Contains("warning"));
}

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

}  // namespace

TEST_CASE("Redis: a warm remote fills empty local caches, read-only clients, a wrong password",
          "[remote][redis][integration]") {
  TempDir tmp{"ob-redis"};
  RedisServer server(tmp / "redis", {false, kPassword});
  const std::string port = std::to_string(server.port());
  // The password from the environment, as a CI secret would be.
  const std::string url = "redis://:${OB_TEST_REDIS_PASSWORD}@127.0.0.1:" + port;
  const std::string shown = "redis://:***@127.0.0.1:" + port;
  const Env secret{{"OB_TEST_REDIS_PASSWORD", kPassword}};

  // Machine 1, the CI writer: a cold build stores every job remotely too.
  fs::path one = copy_example("saxpy-c", tmp / "machine1");
  auto cold = build(one, tmp / "cache1", {url}, {"-v"}, secret);
  INFO(cold.err);
  REQUIRE(cold.exit_code == 0);
  CHECK_THAT(cold.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
  CHECK_THAT(cold.err, Catch::Contains("remote storage " + shown));  // -v names it, redacted
  CHECK_THAT(cold.err, !Catch::Contains(kPassword));
  auto writer = remote_stats(tmp / "cache1", shown);
  CHECK(count_of(writer, "uploads") >= 5);
  CHECK(count_of(writer, "errors") == 0);
  const int keys = dbsize(server);
  CHECK(keys >= 5);

  // Machine 2, a laptop: empty local cache, read-only, the same checkout
  // path (fresh clone): nothing runs, the program offloads.
  fs::path two = one;
  const std::string reader_url = url + "|read-only";
  check_served_and_offloaded(two, tmp / "cache2", reader_url, secret);
  auto reader = remote_stats(tmp / "cache2", shown + "|read-only");
  CHECK(count_of(reader, "hits") >= 5);
  CHECK(count_of(reader, "bytes_read") > 0);
  CHECK(cache_stats(tmp / "cache2")["entries"].get<int>() >= 5);  // back-filled
  require_sound(tmp / "cache2");

  // A read-only client that builds something new stores nothing remotely.
  write_file(two / "saxpy.c", read_file(two / "saxpy.c") + "\n/* a local change */\n");
  auto changed = build(two, tmp / "cache2", {reader_url}, {}, secret);
  INFO(changed.err);
  REQUIRE(changed.exit_code == 0);
  CHECK(dbsize(server) == keys);
  check_runs(two);

  // A wrong password: one warning, naming no password; the build goes on.
  fs::remove_all(two / "build");
  const std::string report = (tmp / "report.json").string();
  auto wrong = build(two, tmp / "cache3", {"redis://:not-it@127.0.0.1:" + port},
                     {"-v", "--report", report}, secret);
  INFO(wrong.err);
  REQUIRE(wrong.exit_code == 0);
  CHECK_THAT(read_file(report), !Catch::Contains("not-it"));
  auto dry = build(two, tmp / "cache3", {"redis://:not-it@127.0.0.1:" + port}, {"--dry-run"});
  CHECK(dry.exit_code == 0);
  CHECK_THAT(dry.out + dry.err, !Catch::Contains("not-it"));
  CHECK(count_occurrences(wrong.err, "warning: remote storage") == 1);
  CHECK_THAT(wrong.err, Catch::Contains("remote storage redis://:***@127.0.0.1:" + port));
  CHECK_THAT(wrong.err, !Catch::Contains("not-it"));
  CHECK(count_of(remote_stats(tmp / "cache3", shown), "errors") == 1);
  check_runs(two);

  // doctor reads from each remote and redacts it.
  auto doctor = run_ob({"--remote-storage", url, "--remote-storage",
                        "redis://:not-it@127.0.0.1:" + port, "doctor"},
                       {}, remote_env(secret));
  CHECK_THAT(doctor.out, Catch::Contains(shown + ": reachable"));
  CHECK_THAT(doctor.out, Catch::Contains(shown + ": error"));
  CHECK_THAT(doctor.out + doctor.err, !Catch::Contains(kPassword));
  CHECK_THAT(doctor.out + doctor.err, !Catch::Contains("not-it"));
}

TEST_CASE("Redis over a unix socket: concurrent builds share one remote",
          "[remote][redis][integration]") {
  TempDir tmp{"ob-redis-unix"};
  RedisServer server(tmp / "redis", {true, ""});
  const std::string url = "redis+unix://" + server.socket().string() + "|allow-unsigned";
  fs::path a = copy_example("saxpy-c", tmp / "a");
  fs::path b = copy_example("saxpy-c", tmp / "b");
  process::Captured ra, rb;
  std::thread other([&] { rb = build(b, tmp / "cache-b", {url}); });
  ra = build(a, tmp / "cache-a", {url});
  other.join();
  for (auto* r : {&ra, &rb}) {
    INFO(r->err);
    CHECK(r->exit_code == 0);
    CHECK_THAT(r->err, !Catch::Contains("warning"));
  }
  check_runs(a);
  check_runs(b);
  for (const char* cache : {"cache-a", "cache-b"}) {
    auto s = remote_stats(tmp / cache, url);
    CHECK(count_of(s, "errors") == 0);
    CHECK(count_of(s, "uploads") >= 5);
  }
  // What they stored serves a third machine entirely.
  check_served_and_offloaded(a, tmp / "cache-c", url);
  CHECK(count_of(remote_stats(tmp / "cache-c", url), "hits") >= 5);
}

TEST_CASE("HTTP (nginx WebDAV): writer, read-only reader, corrupt and foreign entries",
          "[remote][http][integration]") {
  TempDir tmp{"ob-http"};
  fs::path dir = copy_example("saxpy-c", tmp / "p");

  SECTION("basic auth: the right password stores, a wrong one is one warning") {
    write_file(tmp / "htpasswd", "ci:{PLAIN}" + kPassword + "\n");
    NginxServer server(tmp / "nginx", "auth_basic cache; auth_basic_user_file " +
                                          (tmp / "htpasswd").string() + ";");
    const std::string hostport = "127.0.0.1:" + std::to_string(server.port());
    auto writer = build(dir, tmp / "cache1", {"http://ci:${OB_TEST_HTTP_PW}@" + hostport + "/ob|allow-unsigned"},
                        {}, {{"OB_TEST_HTTP_PW", kPassword}});
    INFO(writer.err);
    REQUIRE(writer.exit_code == 0);
    CHECK_THAT(writer.err, !Catch::Contains("warning"));
    CHECK(files_under(server.root() / "ob/v2").size() >= 5);
    CHECK(count_of(remote_stats(tmp / "cache1", "http://ci:***@" + hostport + "/ob|allow-unsigned"),
                   "uploads") >= 5);

    fs::remove_all(dir / "build");
    auto wrong = build(dir, tmp / "cache2", {"http://ci:wrong-pw@" + hostport + "/ob"});
    INFO(wrong.err);
    REQUIRE(wrong.exit_code == 0);
    CHECK(count_occurrences(wrong.err, "warning: remote storage http://ci:***@" + hostport + "/ob") == 1);
    CHECK_THAT(wrong.err, Catch::Contains("HTTP status 401"));
    CHECK_THAT(wrong.err, !Catch::Contains("wrong-pw"));
    CHECK_THAT(wrong.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
    check_runs(dir);
  }

  NginxServer server(tmp / "nginx");
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());

  SECTION("bazel layout: ac/<sha256>, served to an empty cache") {
    const std::string url = base + "/team|layout=bazel";
    auto cold = build(dir, tmp / "cache1", {url});
    INFO(cold.err);
    REQUIRE(cold.exit_code == 0);
    auto stored = files_under(server.root() / "team/ac");
    CHECK(stored.size() >= 5);
    for (const auto& f : stored) CHECK(f.filename().string().size() == 64);
    check_served_and_offloaded(dir, tmp / "cache2", url + "|read-only");
    auto s = remote_stats(tmp / "cache2", base + "/team|read-only");
    CHECK(count_of(s, "hits") >= 5);
    CHECK(count_of(s, "uploads") == 0);
  }

  SECTION("corrupt and foreign values are refused, counted, and rebuilt locally") {
    const std::string url = base + "/ob";
    REQUIRE(build(dir, tmp / "cache1", {url}).exit_code == 0);
    auto stored = files_under(server.root() / "ob/v2");
    REQUIRE(stored.size() >= 5);
    for (size_t i = 0; i < stored.size(); ++i) {
      std::string d = read_file(stored[i]);
      if (i % 3 == 0) d[d.size() / 2] ^= 0x40;                   // flipped bit
      else if (i % 3 == 1) d.resize(d.size() / 2);                 // truncated
      else d = "\x89PNG foreign bytes under our key";               // not ours
      write_file(stored[i], d);
    }
    fs::remove_all(dir / "build");
    auto r = build(dir, tmp / "cache2", {url});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(count_occurrences(r.err, "warning: remote storage " + url) == 1);  // said once
    CHECK_THAT(r.err, Catch::Contains("not a valid entry"));
    CHECK_THAT(r.err, !Catch::Contains("not used for the rest of this build"));
    CHECK_THAT(r.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
    check_runs(dir);
    require_sound(tmp / "cache2");
    auto s = remote_stats(tmp / "cache2", url);
    // The remote stayed on: every value asked for was refused and removed by
    // this writer, and replaced by what it built (each decodes again).
    CHECK(count_of(s, "rejected") >= 2);
    CHECK(count_of(s, "errors") == count_of(s, "rejected"));
    CHECK(count_of(s, "hits") == 0);
    CHECK(count_of(s, "uploads") >= 5);
    auto now = files_under(server.root() / "ob/v2");
    CHECK(now.size() == stored.size());
    for (const auto& f : now) {
      const std::string kind = f.parent_path().parent_path().filename().string();
      CHECK(storage::decode_entry(read_file(f), kind, f.filename().string()).ok());
    }
  }
}

TEST_CASE("unreachable remotes: refused, never answering or unresolvable, each warned once, the build goes on",
          "[remote][integration]") {
  TempDir tmp{"ob-remote-dead"};
  BlackHole http_hole, redis_hole;
  const int refused = free_port();
  // A host name that cannot resolve without asking anyone: an empty label
  // ("..") is not a valid DNS name, so glibc's resolver refuses to encode a
  // query for it (ns_name_pton) after reading /etc/hosts: no packet leaves
  // the machine, whatever its DNS servers are. (A name under .invalid would
  // be sent to the configured DNS server.) The Redis one carries a password:
  // the warning must not show it.
  const std::string nowhere = "no..such..host";
  const std::vector<std::string> remotes{
      "redis://127.0.0.1:" + std::to_string(refused),
      "http://127.0.0.1:" + std::to_string(http_hole.port()) + "/x|operation-timeout=300ms",
      "redis://127.0.0.1:" + std::to_string(redis_hole.port()) + "|operation-timeout=300ms",
      // A generous connect-timeout (it covers resolving): failing to
      // resolve must be the error, not a slow resolver on a loaded machine.
      "redis://:" + kPassword + "@" + nowhere + ":6379|connect-timeout=5s",
      "http://" + nowhere + "/x|connect-timeout=5s",
      // A resolver that never answers (the shim below blocks for this name):
      // connect-timeout (100 ms) bounds it, for hiredis as for libcurl. Were
      // it unbounded, this build would hang and the test fail.
      "redis://slow..dns:6379", "http://slow..dns/x"};
  write_file(tmp / "slow_dns.c", R"(#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <string.h>
#include <unistd.h>
int getaddrinfo(const char* node, const char* service, const struct addrinfo* hints,
                struct addrinfo** res) {
  if (node && strcmp(node, "slow..dns") == 0)
    for (;;) sleep(1000);
  int (*real)(const char*, const char*, const struct addrinfo*, struct addrinfo**) =
      (int (*)(const char*, const char*, const struct addrinfo*, struct addrinfo**))dlsym(
          RTLD_NEXT, "getaddrinfo");
  return real(node, service, hints, res);
}
)");
  const fs::path shim = tmp / "slow_dns.so";
  auto cc = run_tool({"/usr/bin/cc", "-shared", "-fPIC", "-o", shim.string(),
                      (tmp / "slow_dns.c").string(), "-ldl"});
  INFO(cc.err);
  REQUIRE(cc.exit_code == 0);
  fs::path dir = copy_example("saxpy-c", tmp / "p");
  auto r = build(dir, tmp / "cache", remotes, {}, {{"LD_PRELOAD", shim.string()}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
  CHECK(count_occurrences(r.err, "warning: remote storage") == 7);
  CHECK(count_occurrences(r.err, "(timed out)") == 4);
  CHECK(count_occurrences(r.err, "warning: remote storage redis://slow..dns:6379: connect: resolving slow..dns took longer than 100 ms (timed out)") == 1);
  CHECK(count_occurrences(r.err, "warning: remote storage http://slow..dns/x: GET: ") == 1);
  CHECK(count_occurrences(r.err, "warning: remote storage redis://:***@" + nowhere + ":6379: connect: cannot resolve " + nowhere) == 1);
  CHECK(count_occurrences(r.err, "warning: remote storage http://" + nowhere + "/x: GET: Couldn't resolve host") == 1);
  CHECK_THAT(r.err, !Catch::Contains(kPassword));
  check_runs(dir);
  auto s = cache_stats(tmp / "cache")["remotes"];
  INFO(s.dump());
  CHECK(count_of(s["redis://127.0.0.1:" + std::to_string(refused)], "errors") == 1);
  CHECK(count_of(s["http://127.0.0.1:" + std::to_string(http_hole.port()) + "/x"], "timeouts") == 1);
  CHECK(count_of(s["redis://127.0.0.1:" + std::to_string(redis_hole.port())], "timeouts") == 1);
  CHECK(count_of(s["redis://:***@" + nowhere + ":6379"], "errors") == 1);
  CHECK(count_of(s["http://" + nowhere + "/x"], "errors") == 1);
  CHECK(count_of(s["redis://slow..dns:6379"], "timeouts") == 1);
  CHECK(count_of(s["http://slow..dns/x"], "timeouts") == 1);
}

TEST_CASE("a Redis server killed in the middle of a build", "[remote][redis][integration]") {
  TempDir tmp{"ob-redis-kill"};
  RedisServer server(tmp / "redis", {false, ""});
  const std::string url = "redis://127.0.0.1:" + std::to_string(server.port());
  fs::path dir = copy_example("saxpy-c", tmp.path());
  std::atomic<bool> done{false};
  process::Captured r;
  std::thread builder([&] {
    r = build(dir, tmp / "cache", {url});
    done = true;
  });
  // Kill it once the first upload has landed (or when the build ended first:
  // then the build saw a healthy server, and must still be right).
  while (!done && dbsize(server, "") < 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server.process().stop(SIGKILL);
  builder.join();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(count_occurrences(r.err, "warning: remote storage") <= 1);
  check_runs(dir);
  require_sound(tmp / "cache");
}

TEST_CASE("launcher mode with a remote: a compile on an empty cache is served from Redis",
          "[remote][redis][launcher][integration]") {
  TempDir tmp{"ob-launch-remote"};
  RedisServer server(tmp / "redis", {false, ""});
  const std::string url = "redis://127.0.0.1:" + std::to_string(server.port());
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", tmp / "saxpy.c");
  const std::vector<std::string> compile{
      OB_BINARY, "/usr/bin/clang-22", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
      "-O2", "-c", "saxpy.c", "-o", "saxpy.o"};
  auto env = [&](const char* cache) {
    return Env{{"OFFLOAD_BUILD_CACHE_DIR", (tmp / cache).string()},
               {"OFFLOAD_BUILD_REMOTE_STORAGE", url},
               {"OFFLOAD_BUILD_EXPLAIN", "1"},
               {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
               {"MAKEFLAGS", std::nullopt}};
  };
  auto first = run_tool(compile, tmp.path(), env("cache1"));
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const std::string object = read_file(tmp / "saxpy.o");
  fs::remove(tmp / "saxpy.o");
  auto second = run_tool(compile, tmp.path(), env("cache2"));
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(count_occurrences(second.err, ": hit") == 4);  // host-ir, device, package, host
  CHECK(read_file(tmp / "saxpy.o") == object);
  CHECK(count_of(remote_stats(tmp / "cache2", url), "hits") >= 4);
}

TEST_CASE("HTTPS (nginx, TLS with a self-signed certificate): ca-file trusts a private CA",
          "[remote][http][integration]") {
  TempDir tmp{"ob-https"};
  const Certificate ca = make_self_signed_certificate(tmp / "tls");
  write_file(tmp / "htpasswd", "ci:{PLAIN}" + kPassword + "\n");
  NginxServer server(tmp / "nginx",
                     "auth_basic cache; auth_basic_user_file " + (tmp / "htpasswd").string() + ";",
                     &ca);
  const std::string hostport = "127.0.0.1:" + std::to_string(server.port());
  // The password in the URL itself: every message must still hide it. The
  // connect timeout covers the TLS handshake: generous, for a loaded machine.
  const std::string url = "https://ci:" + kPassword + "@" + hostport + "/ob|connect-timeout=5s";
  const std::string shown = "https://ci:***@" + hostport + "/ob";
  fs::path dir = copy_example("saxpy-c", tmp / "p");

  // Without ca-file the system's CAs do not vouch for it: one warning, built locally.
  auto untrusted = build(dir, tmp / "cache0", {url}, {"-v"});
  INFO(untrusted.err);
  REQUIRE(untrusted.exit_code == 0);
  // "SSL peer certificate ... was not OK" (or, on a machine with no CA
  // bundle at all, "Problem with the SSL CA cert").
  CHECK(count_occurrences(untrusted.err, "warning: remote storage " + shown + ": GET: ") == 1);
  CHECK(count_occurrences(untrusted.err, "warning: remote storage") == 1);
  CHECK_THAT(untrusted.err, Catch::Contains("SSL"));
  CHECK_THAT(untrusted.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));
  CHECK_THAT(untrusted.err, !Catch::Contains(kPassword));
  CHECK(files_under(server.root()).empty());
  CHECK(count_of(remote_stats(tmp / "cache0", shown), "errors") == 1);
  check_runs(dir);

  // With it: the writer stores every job over TLS, and a fresh clone with an
  // empty local cache is served (hits counted, nothing run).
  const std::string trusted = url + "|ca-file=" + ca.cert.string();
  fs::remove_all(dir / "build");
  auto writer = build(dir, tmp / "cache1", {trusted + "|allow-unsigned"}, {"-v"});
  INFO(writer.err);
  REQUIRE(writer.exit_code == 0);
  CHECK_THAT(writer.err, !Catch::Contains("warning"));
  CHECK_THAT(writer.err, !Catch::Contains(kPassword));
  CHECK(files_under(server.root() / "ob/v2").size() >= 5);
  check_served_and_offloaded(dir, tmp / "cache2", trusted + "|read-only");
  auto reader = remote_stats(tmp / "cache2", shown + "|read-only");
  CHECK(count_of(reader, "hits") >= 5);
  CHECK(count_of(reader, "errors") == 0);

  // doctor reaches it through the private CA, and shows no password either.
  auto doctor = run_ob({"--remote-storage", trusted, "doctor"}, {}, remote_env());
  CHECK_THAT(doctor.out, Catch::Contains(shown + ": reachable"));
  CHECK_THAT(doctor.out + doctor.err, !Catch::Contains(kPassword));
}

TEST_CASE("HTTP: two machines share one server, and signed entries refuse a poisoned one",
          "[remote][http][integration]") {
  TempDir tmp{"ob-http-machines"};
  NginxServer server(tmp / "nginx");
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/team";
  const std::string key = "team-signing-secret";
  const Env signing{{"OFFLOAD_BUILD_SIGNING_KEY", key}};

  // Machine 1, the CI writer, signs what it stores.
  fs::path one = copy_example("saxpy-c", tmp / "machine1");
  auto cold = build(one, tmp / "cache1", {url}, {}, signing);
  INFO(cold.err);
  REQUIRE(cold.exit_code == 0);
  CHECK_THAT(cold.err, Catch::Contains("5 jobs: 0 from cache, 5 run"));

  // Machine 2: another checkout path, its own empty cache, read-only, the
  // same key: no command runs, and its program is machine 1's byte for byte.
  fs::path two = copy_example("saxpy-c", tmp / "machine2/work/src");
  check_served_and_offloaded(two, tmp / "cache2", url + "|read-only", signing);
  CHECK(read_file(two / "build/saxpy") == read_file(one / "build/saxpy"));
  CHECK(count_of(remote_stats(tmp / "cache2", url + "|read-only"), "hits") >= 5);

  // A writer without the key poisons the link's entry: well formed, under its
  // valid key, with other content (an attacker can write this much).
  const fs::path results = server.root() / "team/v2/result";
  fs::path poisoned;
  for (const auto& f : files_under(results)) {
    const std::string k = f.filename().string();
    auto e = storage::decode_entry(read_file(f), "result", k, key);
    REQUIRE(e);
    if (e->files.empty() || e->files[0].name != "saxpy") continue;
    e->files[0].data = "#!/bin/sh\necho poisoned\n";
    write_file(f, storage::encode_entry(*e, "result", k));  // unsigned
    poisoned = f;
  }
  REQUIRE_FALSE(poisoned.empty());

  // Signing on: refused (one warning, counted), the link runs locally, the
  // program is right, and nothing of the poisoned value is kept.
  fs::path three = copy_example("saxpy-c", tmp / "machine3");
  auto on = build(three, tmp / "cache3", {url + "|read-only"}, {}, signing);
  INFO(on.err);
  REQUIRE(on.exit_code == 0);
  CHECK(count_occurrences(on.err, "warning: remote storage " + url + "|read-only") == 1);
  CHECK_THAT(on.err, Catch::Contains("not signed with this build's key"));
  CHECK_THAT(on.err, Catch::Contains("5 jobs: 4 from cache, 1 run"));
  check_runs(three);
  CHECK(count_of(remote_stats(tmp / "cache3", url + "|read-only"), "bad_signature") == 1);
  CHECK(count_of(remote_stats(tmp / "cache3", url + "|read-only"), "rejected") == 0);
  require_sound(tmp / "cache3");

  // Signing off: a well-formed entry under a valid key is all that is
  // checked, so the poisoned program is used (docs/CACHE.md says so).
  fs::path four = copy_example("saxpy-c", tmp / "machine4");
  auto off = build(four, tmp / "cache4", {url + "|read-only"}, {},
                   {{"OFFLOAD_BUILD_SIGNING_KEY", std::nullopt}});
  INFO(off.err);
  REQUIRE(off.exit_code == 0);
  CHECK_THAT(off.err, Catch::Contains("5 jobs: 5 from cache, 0 run"));
  CHECK(run_tool({(four / "build/saxpy").string()}, four).out == "poisoned\n");
}
