// A manifest entry's metadata: read back exactly as written, whatever the
// paths hold, and refused when it is anything else.
#include <catch2/catch.hpp>

#include <random>

#include "offload_build/cache/entry_metadata.hpp"

using namespace ob::cache;

namespace {

const std::string kResult = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

ob::Result<std::vector<Candidate>> decode(std::string metadata) {
  return decode_manifest_meta(ob::storage::Entry{std::move(metadata), {}});
}

bool same(const std::vector<Candidate>& a, const std::vector<Candidate>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].result != b[i].result || a[i].deps.size() != b[i].deps.size()) return false;
    for (size_t k = 0; k < a[i].deps.size(); ++k) {
      const Dep &x = a[i].deps[k], &y = b[i].deps[k];
      if (x.path != y.path || x.sha256 != y.sha256 || x.device != y.device || x.inode != y.inode || x.name != y.name)
        return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("manifest metadata reads back exactly what was written, any bytes in its paths", "[cache]") {
  std::vector<Candidate> plain{
      {{{"src/a.c", "abc", 0, 0, "/p/src/a.c"}, {"/usr/include/stdio.h", "def", 2049, 1844674407370955161u, ""}},
       kResult},
      {{}, kResult},
      {{{"b.h", "absent", 10, 9, ""}}, kResult}};
  auto back = decode(encode_manifest_meta(plain));
  REQUIRE(back);
  CHECK(same(*back, plain));
  CHECK(decode(encode_manifest_meta({}))->empty());
  plain[0].deps[1].inode = 18446744073709551615u;
  CHECK(same(*decode(encode_manifest_meta(plain)), plain));

  std::mt19937 rng(7);
  const std::string odd = "\"\\/\b\f\n\r\t\x01\x7f\xc3\xa9\xff\xEF\xA3\xBF ab";
  for (int i = 0; i < 300; ++i) {
    auto text = [&] {
      std::string s(rng() % 12, 'x');
      if (rng() % 2)
        for (auto& c : s) c = odd[rng() % odd.size()];
      return s;
    };
    std::vector<Candidate> cands(1 + rng() % 3);
    for (auto& c : cands) {
      c.result = kResult;
      for (size_t k = rng() % 4; k-- > 0;) c.deps.push_back({text(), text(), rng(), rng() % 3 ? 0u : rng(), text()});
    }
    auto got = decode(encode_manifest_meta(cands));
    REQUIRE(got);
    REQUIRE(same(*got, cands));
  }
}

TEST_CASE("manifest metadata that is not as written is refused", "[cache]") {
  const std::string good = encode_manifest_meta({{{{"a.c", "abc", 1, 2, ""}}, kResult}});
  REQUIRE(decode(good));
  // Reformatted, but the same JSON: read the same.
  CHECK(decode(" " + good + "\n"));
  for (std::string bad : {good + "x", good.substr(0, good.size() - 1), std::string("{\"candidates\":[]} {}"),
                          std::string("{\"candidates\":[{\"deps\":[[\"a\",\"b\",01,2,\"\"]],\"result\":\"" + kResult + "\"}]}"),
                          std::string("{\"candidates\":[{\"deps\":[[\"a\",\"b\",-1,2,\"\"]],\"result\":\"" + kResult + "\"}]}"),
                          std::string("{\"candidates\":[{\"deps\":[[\"a\",\"b\",1,2]],\"result\":\"" + kResult + "\"}]}"),
                          std::string("{\"candidates\":[{\"deps\":[],\"result\":\"no/slash\"}]}"),
                          std::string("{\"candidates\":[{\"deps\":[],\"result\":\"" + kResult + "\",\"x\":1}]}"),
                          std::string("{\"candidates\":[],\"other\":1}")})
    CHECK_FALSE(decode(bad));
}
