// The Redis and HTTP backends against hostile servers (tests/support/
// fake_server.hpp, scripted on 127.0.0.1): a reply trickled a byte a second,
// a value declared or sent bigger than max-entry-size, a 2^31-element array,
// an upload the server never acknowledges. Each call must end within its
// deadline (asserted with bounds a broken implementation misses by minutes)
// and hold no more than the cap (peak RSS measured by the test).
#include <catch2/catch.hpp>

#include <time.h>

#include <chrono>
#include <fstream>
#include <string>

#include "offload_build/storage/remote/remote.hpp"
#include "support/fake_server.hpp"

using namespace ob;
using namespace ob::storage;
using namespace ob::test;
using namespace std::chrono_literals;

namespace {

const std::string kKey = "abcdef0123456789";

RemoteConfig config(const std::string& url) {
  auto r = parse_remote_url(url);
  REQUIRE(r);
  return *r;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

// Peak RSS of this process in MB since the last reset_peak_rss().
long peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  return -1;
}
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

struct Cost {
  double seconds = 0, cpu_seconds = 0;
  long rss_grown_mb = 0;
};
std::ostream& operator<<(std::ostream& o, const Cost& c) {
  return o << "took " << c.seconds << " s, " << c.cpu_seconds << " s of CPU, peak RSS grew "
           << c.rss_grown_mb << " MB";
}

// backend.get(), timed, with the CPU it used and how much the peak RSS grew.
RemoteResult<std::optional<std::string>> measured_get(RemoteBackend& backend, Cost& cost) {
  reset_peak_rss();
  const long before = peak_rss_mb();
  const double cpu = thread_cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  auto got = backend.get("result", kKey);
  cost = {seconds_since(start), thread_cpu_seconds() - cpu, peak_rss_mb() - before};
  return got;
}

// A Redis server answering every command with `answer(words)`.
void redis_loop(FakeConnection& c, const std::function<bool(FakeConnection&, const std::vector<std::string>&)>& answer) {
  for (;;) {
    auto words = c.read_redis_command();
    if (words.empty() || !answer(c, words)) return;
  }
}

std::string redis_url(const FakeServer& s, const std::string& attributes = "") {
  return "redis://127.0.0.1:" + std::to_string(s.port()) + attributes;
}
std::string http_url(const FakeServer& s, const std::string& attributes = "") {
  return "http://127.0.0.1:" + std::to_string(s.port()) + "/c" + attributes;
}

}  // namespace

TEST_CASE("Redis backend: a reply trickled a byte a second ends at operation-timeout", "[remote][hostile]") {
  FakeServer server([](FakeConnection& c) {
    redis_loop(c, [](FakeConnection& c, const auto&) {
      return c.trickle("$1000\r\n" + std::string(1000, 'x') + "\r\n", 1000ms);
    });
  });
  auto backend = make_redis_backend(config(redis_url(server, "|operation-timeout=2s")));
  Cost cost;
  auto got = measured_get(*backend, cost);
  INFO(cost);
  REQUIRE_FALSE(got);
  CHECK(got.failure().kind == RemoteFailure::Kind::Timeout);
  CHECK(got.failure().message == "GET: no whole reply within operation-timeout (2000 ms)");
  CHECK(cost.seconds >= 1.9);
  CHECK(cost.seconds < 10);  // before the fix: as long as the server went on (1000 s here)
}

TEST_CASE("Redis backend: every call has one deadline, AUTH and uploads included", "[remote][hostile]") {
  // The password's AUTH is answered at once, a second of silence, then
  // every later reply trickled: the whole call must still end in time.
  FakeServer server([](FakeConnection& c) {
    redis_loop(c, [](FakeConnection& c, const auto& words) {
      if (words[0] == "AUTH") return c.trickle("+OK\r\n", 300ms);  // 1.5 s of the 2 s
      return c.trickle("+" + std::string(1000, 'O') + "\r\n", 1000ms);
    });
  });
  auto backend = make_redis_backend(config(redis_url(server, "|operation-timeout=2s").insert(8, ":pw@")));
  for (bool overwrite : {true, false}) {  // SET alone; EXISTS and SET
    const auto start = std::chrono::steady_clock::now();
    auto put = backend->put("result", kKey, std::string(100000, 'v'), overwrite);
    const double took = seconds_since(start);
    INFO("took " << took << " s");
    REQUIRE_FALSE(put);
    CHECK(put.failure().kind == RemoteFailure::Kind::Timeout);
    CHECK_THAT(put.failure().message, Catch::Contains("within operation-timeout (2000 ms)"));
    CHECK(took < 10);
  }
  CHECK(server.connections() == 2);  // each failure drops the connection
}

TEST_CASE("Redis backend: a value over max-entry-size or an array is refused at its header",
          "[remote][hostile]") {
  // The header, then bytes for as long as the client reads them (or silence).
  struct Case {
    std::string header;
    bool flood;
    std::string why;
  };
  for (const auto& [header, flood, why] : {
           // Before the fix: 4.6 GB of RSS (three copies of 1.5 GB).
           Case{"$1500000000\r\n", true,
                "GET: the value is 1500000000 bytes, more than max-entry-size (67108864 bytes)"},
           // Before the fix: 41 s, 4.7 s of CPU in hiredis.
           Case{"*2147483647\r\n", false, "GET: an array reply (*), where one value was expected"}}) {
    FakeServer server([&](FakeConnection& c) {
      redis_loop(c, [&](FakeConnection& c, const auto&) {
        if (!c.send(header)) return false;
        if (flood) c.flood(std::string(1 << 16, 'z'));
        else c.hold();
        return false;
      });
    });
    auto backend = make_redis_backend(config(redis_url(server, "|operation-timeout=30s")));
    Cost cost;
    auto got = measured_get(*backend, cost);
    INFO(header << ": " << cost);
    REQUIRE_FALSE(got);
    CHECK(got.failure().kind == RemoteFailure::Kind::Error);
    CHECK(got.failure().message == why);
    CHECK(cost.seconds < 5);  // refused at once, not at the 30 s timeout
    CHECK(cost.cpu_seconds < 0.5);
    CHECK(cost.rss_grown_mb < 300);
  }
}

TEST_CASE("Redis backend: a value over max-entry-size is not uploaded: a right reply in pieces is read",
          "[remote][hostile]") {
  std::atomic<int> sets{0};
  FakeServer server([&](FakeConnection& c) {
    redis_loop(c, [&](FakeConnection& c, const auto& words) {
      if (words[0] == "SET") {
        ++sets;
        return c.send("+OK\r\n");
      }
      return c.trickle("$3\r\nabc\r\n", 20ms);  // a byte per packet
    });
  });
  auto backend = make_redis_backend(config(redis_url(server, "|max-entry-size=1K")));
  auto big = backend->put("result", kKey, std::string(1025, 'v'), true);
  REQUIRE(big);
  CHECK_FALSE(*big);
  auto fits = backend->put("result", kKey, std::string(1024, 'v'), true);
  REQUIRE(fits);
  CHECK(*fits);
  CHECK(sets == 1);
  auto got = backend->get("result", kKey);
  REQUIRE(got);
  REQUIRE(*got);
  CHECK(**got == "abc");
}

TEST_CASE("HTTP backend: bodies over max-entry-size are refused, declared or sent", "[remote][hostile]") {
  SECTION("a Content-Length of 1.5 GB, and bytes for as long as they are read") {
    FakeServer server([](FakeConnection& c) {
      if (c.read_http_head().empty()) return;
      if (c.send("HTTP/1.1 200 OK\r\nContent-Length: 1500000000\r\n\r\n")) c.flood(std::string(1 << 16, 'z'));
    });
    auto backend = make_http_backend(config(http_url(server, "|operation-timeout=30s")));
    Cost cost;
    auto got = measured_get(*backend, cost);
    INFO(cost);
    REQUIRE_FALSE(got);
    CHECK(got.failure().message ==
          "GET: the value is 1500000000 bytes, more than max-entry-size (67108864 bytes)");
    CHECK(cost.seconds < 5);
    CHECK(cost.rss_grown_mb < 300);  // before the fix: the whole 1.5 GB (capped at 2 GiB)
  }
  SECTION("a chunked body without end") {
    FakeServer server([](FakeConnection& c) {
      if (c.read_http_head().empty()) return;
      if (!c.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
      c.flood("10000\r\n" + std::string(0x10000, 'z') + "\r\n");
    });
    auto backend = make_http_backend(config(http_url(server, "|operation-timeout=30s|max-entry-size=8M")));
    Cost cost;
    auto got = measured_get(*backend, cost);
    INFO(cost);
    REQUIRE_FALSE(got);
    CHECK(got.failure().message == "GET: the value is more than max-entry-size (8388608 bytes)");
    CHECK(cost.rss_grown_mb < 300);  // before the fix: 2 GiB
  }
}

TEST_CASE("HTTP backend: a trickled body or an unacknowledged upload ends at the deadline",
          "[remote][hostile]") {
  FakeServer server([](FakeConnection& c) {
    const std::string head = c.read_http_head();
    if (head.rfind("GET ", 0) == 0) {
      if (c.send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")) c.trickle(std::string(1000, 'x'), 1000ms);
    } else if (!head.empty()) {
      c.trickle("HTTP/1.1 201 Created\r\n" + std::string(1000, 'X'), 1000ms);  // body unread
    }
  });
  auto backend = make_http_backend(config(http_url(server, "|operation-timeout=2s")));
  Cost cost;
  auto got = measured_get(*backend, cost);
  INFO("GET " << cost);
  REQUIRE_FALSE(got);
  CHECK(got.failure().kind == RemoteFailure::Kind::Timeout);
  CHECK(cost.seconds < 10);
  for (bool overwrite : {true, false}) {
    const auto start = std::chrono::steady_clock::now();
    auto put = backend->put("result", kKey, std::string(4 << 20, 'v'), overwrite);
    const double took = seconds_since(start);
    INFO("PUT took " << took << " s");
    REQUIRE_FALSE(put);
    CHECK(put.failure().kind == RemoteFailure::Kind::Timeout);
    CHECK(took < 10);
  }
  auto big = backend->put("result", kKey, std::string(65 << 20, 'v'), true);  // over 64M: not sent
  REQUIRE(big);
  CHECK_FALSE(*big);
}
