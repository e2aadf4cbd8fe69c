// The no-op record's format (cache/noop_record.hpp): what is written reads
// back, and anything else reads as no record.
#include <catch2/catch.hpp>

#include <fstream>

#include "offload_build/cache/noop_record.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::cache;

namespace {

NoopRecord sample() {
  NoopRecord r;
  r.fingerprint = "abc";
  r.program = "/p/build/prog";
  r.jobs = {"host src/a.c", "link build/prog with\nnewline"};
  r.env = {{"CPATH", std::nullopt, false}, {"ODD", std::string("a\n7 b"), false},
           {"OFFLOAD_BUILD_SIGNING_KEY", std::string(), true}};
  r.files = {{"/p/src/a.c", Stamp{true, 12, -5, ~uint64_t{0}, 42, 77}}, {"/p/gone", Stamp{}}};
  return r;
}

}  // namespace

TEST_CASE("a no-op record reads back as written", "[noop]") {
  const std::string text = encode_noop_record(sample());
  auto back = decode_noop_record(text);
  REQUIRE(back);
  CHECK(back->fingerprint == "abc");
  CHECK(back->jobs == sample().jobs);
  REQUIRE(back->env.size() == 3);
  CHECK(!back->env[0].value);
  CHECK(back->env[1].value == "a\n7 b");
  CHECK(back->env[2].secret);
  CHECK(back->files == sample().files);
  CHECK(encode_noop_record(*back) == text);
}

TEST_CASE("a damaged no-op record is no record", "[noop]") {
  const std::string text = encode_noop_record(sample());
  for (size_t n = 0; n < text.size(); ++n) {  // every truncation
    INFO(n);
    CHECK(!decode_noop_record(text.substr(0, n)));
  }
  CHECK(!decode_noop_record(text + "x"));
  std::string other_version = text;
  other_version[other_version.find("record 3") + 7] = '9';
  CHECK(!decode_noop_record(other_version));
  CHECK(!decode_noop_record("offload-build no-op record 3\n99999999999999999999 x\n"));
  // A count larger than the record could hold allocates nothing.
  CHECK(!decode_noop_record("offload-build no-op record 3\n0 \n0 \n1000000000000\n"));
  // A secret never keeps a value.
  std::string secret = text;
  secret.replace(secret.find("25 OFFLOAD_BUILD_SIGNING_KEY\n2\n0 \n"),
                 std::string("25 OFFLOAD_BUILD_SIGNING_KEY\n2\n0 \n").size(),
                 "25 OFFLOAD_BUILD_SIGNING_KEY\n2\n1 k\n");
  CHECK(!decode_noop_record(secret));
}

TEST_CASE("a no-op record holds until a stamp or a variable changes", "[noop]") {
  ob::test::TempDir tmp;
  const fs::path file = tmp / "a.c";
  { std::ofstream(file) << "int a;\n"; }
  NoopRecord r;
  r.files = {{file.string(), any_stamp(file)}, {(tmp / "missing").string(), Stamp{}},
             {tmp.path().string(), any_stamp(tmp.path())}};
  r.env = {{"OB_NOOP_TEST_UNSET_VARIABLE", std::nullopt, false}};
  CHECK(noop_record_holds(r));
  r.env[0].value = "x";
  CHECK(!noop_record_holds(r));
  r.env[0].value.reset();
  { std::ofstream(tmp / "new.c") << "\n"; }  // the directory's mtime
  const bool dir_changed = any_stamp(tmp.path()) != r.files[2].second;
  CHECK(dir_changed == !noop_record_holds(r));
  r.files[2].second = any_stamp(tmp.path());
  { std::ofstream(file, std::ios::app) << "int b;\n"; }
  CHECK(!noop_record_holds(r));
}
