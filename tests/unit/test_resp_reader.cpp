// The Redis reply reader (resp_reader.hpp): every reply type our commands get,
// fed whole and split at every byte boundary; malformed and overflowing
// lengths; arrays and values over the cap refused at their header.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "offload_build/storage/remote/resp_reader.hpp"

using namespace ob::storage;

namespace {

using State = RespReader::State;

// Feed `bytes` in two parts split at `cut`, then report the final state.
State feed_split(RespReader& r, const std::string& bytes, size_t cut) {
  State s = r.feed(std::string_view(bytes).substr(0, cut));
  if (s != State::NeedMore) return s;
  return r.feed(std::string_view(bytes).substr(cut));
}

struct Case {
  std::string bytes;
  RespReply::Type type;
  std::string text;
  int64_t integer;
};

}  // namespace

TEST_CASE("RESP reader: every accepted reply, whole, split anywhere and byte by byte", "[remote][resp]") {
  const std::string binary("a\r\nb\0c$-1\r\n", 11);
  const std::vector<Case> cases{
      {"+OK\r\n", RespReply::Type::Status, "OK", 0},
      {"+\r\n", RespReply::Type::Status, "", 0},
      {"-WRONGPASS invalid username-password pair\r\n", RespReply::Type::Error,
       "WRONGPASS invalid username-password pair", 0},
      {":0\r\n", RespReply::Type::Integer, "", 0},
      {":1\r\n", RespReply::Type::Integer, "", 1},
      {":-42\r\n", RespReply::Type::Integer, "", -42},
      {":9223372036854775807\r\n", RespReply::Type::Integer, "", INT64_MAX},
      {":-9223372036854775808\r\n", RespReply::Type::Integer, "", INT64_MIN},
      {"$-1\r\n", RespReply::Type::Nil, "", 0},
      {"$0\r\n\r\n", RespReply::Type::Bulk, "", 0},
      {"$5\r\nhello\r\n", RespReply::Type::Bulk, "hello", 0},
      {"$11\r\n" + binary + "\r\n", RespReply::Type::Bulk, binary, 0},
  };
  for (const auto& c : cases) {
    INFO(c.bytes);
    for (size_t cut = 0; cut <= c.bytes.size(); ++cut) {
      RespReader r(1024);
      INFO("split at " << cut);
      REQUIRE(feed_split(r, c.bytes, cut) == State::Done);
      CHECK(r.reply().type == c.type);
      CHECK(r.reply().text == c.text);
      CHECK(r.reply().integer == c.integer);
    }
    RespReader bytewise(1024);
    State s = State::NeedMore;
    for (char ch : c.bytes) {
      REQUIRE(s == State::NeedMore);
      s = bytewise.feed(std::string_view(&ch, 1));
    }
    CHECK(s == State::Done);
    CHECK(bytewise.reply().text == c.text);
    // A prefix is never a reply; anything after one is refused.
    RespReader partial(1024);
    CHECK(partial.feed(std::string_view(c.bytes).substr(0, c.bytes.size() - 1)) == State::NeedMore);
    RespReader extra(1024);
    CHECK(extra.feed(c.bytes + "+OK\r\n") == State::Bad);
    CHECK_THAT(extra.error(), Catch::Contains("bytes after the reply"));
  }
}

TEST_CASE("RESP reader: malformed replies are refused with a reason", "[remote][resp]") {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"*2\r\n$1\r\na\r\n$1\r\nb\r\n", "an array reply"},
      {"*-1\r\n", "an array reply"},
      {"%1\r\n", "not a Redis reply (it starts with byte 0x25)"},
      {"HTTP/1.1 200 OK\r\n", "not a Redis reply"},
      {"\r\n", "not a Redis reply"},
      {"+OK\n", "not ended by CRLF"},
      {"+O\rK\r\n", "bare CR"},
      {"$\r\n", "malformed bulk string length"},
      {"$-2\r\n", "malformed bulk string length"},
      {"$+5\r\nhello\r\n", "malformed bulk string length"},
      {"$ 5\r\nhello\r\n", "malformed bulk string length"},
      {"$5x\r\nhello\r\n", "malformed bulk string length"},
      {"$99999999999999999999\r\n", "malformed bulk string length"},     // 20 digits
      {"$18446744073709551616\r\n", "malformed bulk string length"},     // 2^64
      {"$-9223372036854775808\r\n", "malformed bulk string length"},
      {":9223372036854775808\r\n", "malformed integer"},                 // INT64_MAX + 1
      {":-9223372036854775809\r\n", "malformed integer"},
      {":\r\n", "malformed integer"},
      {":--1\r\n", "malformed integer"},
      {":1.5\r\n", "malformed integer"},
      {"$5\r\nhello!\r\n", "longer than its declared length"},
      {"$5\r\nhelloXY", "longer than its declared length"},
  };
  for (const auto& [bytes, why] : bad) {
    INFO(bytes);
    for (size_t cut = 0; cut <= bytes.size(); ++cut) {
      RespReader r(1024);
      REQUIRE(feed_split(r, bytes, cut) == State::Bad);
      CHECK_THAT(r.error(), Catch::Contains(why));
      CHECK(r.feed("+OK\r\n") == State::Bad);  // stays refused
    }
  }
}

TEST_CASE("RESP reader: sizes are checked before anything is allocated", "[remote][resp]") {
  SECTION("a bulk string over the cap is refused at its header") {
    RespReader r(64 << 20);
    CHECK(r.feed("$1500000000\r\n") == State::Bad);
    CHECK(r.too_large());
    CHECK_THAT(r.error(), Catch::Contains("1500000000 bytes, more than max-entry-size (67108864 bytes)"));
    CHECK(r.reply().text.capacity() < 4096);
  }
  SECTION("exactly the cap is accepted") {
    RespReader r(5);
    CHECK(r.feed("$5\r\n12345\r\n") == State::Done);
    RespReader over(5);
    CHECK(over.feed("$6\r\n") == State::Bad);
    CHECK(over.too_large());
  }
  SECTION("an array of 2^31 elements is refused at its first byte, at once") {
    // At once: on its first byte, before its length is read, so nothing is
    // allocated for the elements and nothing more is taken.
    const std::string why = "an array reply (*), where one value was expected";
    RespReader r(64 << 20);
    CHECK(r.feed("*") == State::Bad);
    CHECK(r.error() == why);
    CHECK_FALSE(r.too_large());
    CHECK(r.feed("2147483647\r\n") == State::Bad);  // stays refused
    CHECK(r.error() == why);
    RespReader whole(64 << 20);
    CHECK(whole.feed("*2147483647\r\n") == State::Bad);
    CHECK(whole.error() == why);
    CHECK(whole.reply().text.capacity() < 4096);
  }
  SECTION("a line never ended is refused once longer than kMaxRespLine") {
    RespReader r(64 << 20);
    const std::string chunk(4096, 'x');
    State s = r.feed("-ERR ");
    size_t fed = 5;
    while (s == State::NeedMore && fed < 10 * kMaxRespLine) {
      s = r.feed(chunk);
      fed += chunk.size();
    }
    CHECK(s == State::Bad);
    CHECK(fed <= kMaxRespLine + chunk.size());
    CHECK_THAT(r.error(), Catch::Contains("reply line longer than"));
    RespReader digits(64 << 20);
    CHECK(digits.feed("$" + std::string(kMaxRespLine, '1')) == State::Bad);
  }
}

TEST_CASE("RESP integers: only plain decimal, overflow-checked", "[remote][resp]") {
  int64_t v = 7;
  CHECK(parse_resp_integer("0", v));
  CHECK(v == 0);
  CHECK(parse_resp_integer("-1", v));
  CHECK(v == -1);
  CHECK(parse_resp_integer("9223372036854775807", v));
  CHECK(v == INT64_MAX);
  CHECK(parse_resp_integer("-9223372036854775808", v));
  CHECK(v == INT64_MIN);
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "0x10", "9223372036854775808",
                          "-9223372036854775809", "99999999999999999999", "1e3"}) {
    INFO(bad);
    CHECK_FALSE(parse_resp_integer(bad, v));
  }
}
