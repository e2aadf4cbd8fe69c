// The Redis and HTTP backends against hostile servers (tests/support/
// fake_server.hpp, scripted on 127.0.0.1): a reply trickled a byte a second,
// a value declared or sent bigger than max-entry-size, a 2^31-element array,
// an upload the server never acknowledges. Each call must end at its
// deadline, failing with the timeout that names it (a client bounded per read
// only would read on until the server goes, 90 s on, and fail otherwise), or
// be refused at once with the reason (not a timeout), on the connections and
// requests it needs and no more, having read no more than the cap (bytes the
// server sent) and held no more (peak RSS). Nothing here compares a time.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
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

// max-entry-size when not set: a refused value read to here was not refused
// at its header.
constexpr uint64_t kDefaultMaxEntry = uint64_t{64} << 20;

// Peak RSS of this process in MB since the last reset_peak_rss().
long peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  return -1;
}
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

struct Cost {
  long rss_grown_mb = 0;
};
std::ostream& operator<<(std::ostream& o, const Cost& c) { return o << "peak RSS grew " << c.rss_grown_mb << " MB"; }

// backend.get(), with how much the peak RSS grew.
RemoteResult<std::optional<std::string>> measured_get(RemoteBackend& backend, Cost& cost) {
  reset_peak_rss();
  const long before = peak_rss_mb();
  auto got = backend.get("result", kKey);
  cost = {peak_rss_mb() - before};
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
  auto got = backend->get("result", kKey);
  REQUIRE_FALSE(got);
  // Ended by the call's deadline, the one configured (2000 ms, not another),
  // while the reply was still coming. Before the fix the client read on for
  // as long as the server went on: here until the server goes (its 90 s
  // lifetime), failing then with "closed the connection", not a timeout.
  CHECK(got.failure().kind == RemoteFailure::Kind::Timeout);
  CHECK(got.failure().message == "GET: no whole reply within operation-timeout (2000 ms)");
  CHECK(server.connections() <= 1);  // one attempt: no reconnect, no retry
}

TEST_CASE("Redis backend: every call has one deadline, AUTH and uploads included", "[remote][hostile]") {
  // The password's AUTH is answered at once, a second of silence, then
  // every later reply trickled: the whole call must still end in time.
  std::atomic<int> auths{0}, sets{0}, exists{0};  // the commands the server read
  FakeServer server([&](FakeConnection& c) {
    redis_loop(c, [&](FakeConnection& c, const auto& words) {
      if (words[0] == "AUTH") {
        ++auths;
        return c.trickle("+OK\r\n", 300ms);  // 1.5 s of the 2 s
      }
      ++(words[0] == "SET" ? sets : exists);
      return c.trickle("+" + std::string(1000, 'O') + "\r\n", 1000ms);
    });
  });
  auto backend = make_redis_backend(config(redis_url(server, "|operation-timeout=2s").insert(8, ":pw@")));
  for (bool overwrite : {true, false}) {  // SET alone; EXISTS and SET
    auto put = backend->put("result", kKey, std::string(100000, 'v'), overwrite);
    REQUIRE_FALSE(put);
    // The call's one deadline ended it (a deadline per read never would: a
    // byte comes every second), whichever command it was at.
    CHECK(put.failure().kind == RemoteFailure::Kind::Timeout);
    CHECK_THAT(put.failure().message, Catch::Contains("within operation-timeout (2000 ms)"));
  }
  server.stop();  // its handlers done: the counts are final
  CHECK(server.connections() == 2);  // each failure drops the connection
  // Nothing sent twice: an AUTH per connection, the upload's SET (whose reply
  // never came) and the EXISTS (likewise, so no SET after it) once at most.
  CHECK(auths.load() <= 2);
  CHECK(sets.load() <= 1);
  CHECK(exists.load() <= 1);
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
    server.stop();  // the flood ended: bytes_sent() is final
    INFO(header << ": " << cost << ", " << server.bytes_sent() << " bytes sent");
    REQUIRE_FALSE(got);
    // Refused at once, for what the header says: an error, not the 30 s
    // timeout a client reading on (or waiting for 2^31 elements) would reach.
    CHECK(got.failure().kind == RemoteFailure::Kind::Error);
    CHECK(got.failure().message == why);
    CHECK(server.connections() == 1);
    // Read no further than the socket buffers: nowhere near the cap, where
    // the flood would go on to 1.5 GB for a client that read the value.
    CHECK(server.bytes_sent() < kDefaultMaxEntry);
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
    server.stop();  // the flood ended: bytes_sent() is final
    INFO(cost << ", " << server.bytes_sent() << " bytes sent");
    REQUIRE_FALSE(got);
    // Refused at its header (an error, not the 30 s timeout), the body not
    // read: no more sent than the socket buffers hold, far under the cap.
    CHECK(got.failure().kind == RemoteFailure::Kind::Error);
    CHECK(got.failure().message ==
          "GET: the value is 1500000000 bytes, more than max-entry-size (67108864 bytes)");
    CHECK(server.bytes_sent() < kDefaultMaxEntry);
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
  std::atomic<int> gets{0}, puts{0}, heads{0};  // the requests the server read
  FakeServer server([&](FakeConnection& c) {
    const std::string head = c.read_http_head();
    if (head.rfind("GET ", 0) == 0) {
      ++gets;
      if (c.send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")) c.trickle(std::string(1000, 'x'), 1000ms);
    } else if (!head.empty()) {
      ++(head.rfind("PUT ", 0) == 0 ? puts : heads);
      c.trickle("HTTP/1.1 201 Created\r\n" + std::string(1000, 'X'), 1000ms);  // body unread
    }
  });
  auto backend = make_http_backend(config(http_url(server, "|operation-timeout=2s")));
  // Each call ended by libcurl's one timeout for the whole request (the
  // call's deadline: CURLE_OPERATION_TIMEDOUT is the only Timeout), where
  // without it the call would read on until the server went, and fail then.
  auto got = backend->get("result", kKey);
  REQUIRE_FALSE(got);
  CHECK(got.failure().kind == RemoteFailure::Kind::Timeout);
  CHECK_THAT(got.failure().message, Catch::StartsWith("GET: "));
  for (bool overwrite : {true, false}) {  // PUT alone; HEAD, and no PUT after it
    auto put = backend->put("result", kKey, std::string(4 << 20, 'v'), overwrite);
    REQUIRE_FALSE(put);
    CHECK(put.failure().kind == RemoteFailure::Kind::Timeout);
    CHECK_THAT(put.failure().message, Catch::StartsWith(overwrite ? "PUT: " : "HEAD: "));
  }
  auto big = backend->put("result", kKey, std::string(65 << 20, 'v'), true);  // over 64M: not sent
  REQUIRE(big);
  CHECK_FALSE(*big);
  server.stop();  // its handlers done: the counts are final
  // No request retried after its timeout, and the 65 MiB upload never sent.
  CHECK(gets.load() <= 1);
  CHECK(puts.load() <= 1);
  CHECK(heads.load() <= 1);
}
