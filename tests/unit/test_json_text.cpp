// JSON text for names that are not UTF-8, and shortened values in messages.
#include <catch2/catch.hpp>

#include <random>

#include "offload_build/util/json_text.hpp"
#include "offload_build/util/strings.hpp"

using namespace ob::util;

TEST_CASE("escape_bytes is reversible, injective and leaves plain UTF-8 alone", "[util]") {
  CHECK(escape_bytes("src/main.c") == "src/main.c");
  CHECK(escape_bytes("caf\xC3\xA9.c") == "caf\xC3\xA9.c");
  const std::string bad = "bad\xffname.c";
  CHECK(is_utf8(escape_bytes(bad)));
  CHECK(unescape_bytes(escape_bytes(bad)) == bad);
  // The escape character itself is doubled, so "\xff" and its escaped form differ.
  const std::string looks_escaped = "bad\xEF\xA3\xBF" "ffname.c";
  CHECK(escape_bytes(looks_escaped) != escape_bytes(bad));
  CHECK(unescape_bytes(escape_bytes(looks_escaped)) == looks_escaped);
  std::mt19937 rng(1);
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 24, '\0');
    for (auto& c : s) c = static_cast<char>(rng() % 5 == 0 ? 0xEF : rng() & 0xff);
    const std::string e = escape_bytes(s);
    REQUIRE(is_utf8(e));
    REQUIRE(unescape_bytes(e) == s);
  }
}

TEST_CASE("dump_lossless round-trips any bytes, dump_replacing never throws", "[util]") {
  nlohmann::json j{{"k\xfe", {"a\xff", "plain", 3}}, {"n", nullptr}};
  CHECK_THROWS(j.dump());  // what crashed the build before
  const std::string text = dump_lossless(j);
  CHECK(parse_lossless(text) == j);
  CHECK(parse_lossless("not json").is_discarded());
  CHECK_THAT(dump_replacing(j), Catch::Contains("a\xEF\xBF\xBD"));
}

TEST_CASE("shorten keeps short values and cuts long ones at a character", "[util]") {
  CHECK(shorten("abc", 10) == "abc");
  CHECK(shorten(std::string(100000, 'x'), 200) == std::string(200, 'x') + "... (100000 bytes)");
  CHECK(shorten("\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9... (4 bytes)");
}
