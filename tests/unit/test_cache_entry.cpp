// Cache entry format and hashing: round trips, and every kind of damage a file
// on disk can suffer (flipped bytes, truncation, zeroes, foreign data, other
// versions, hostile sizes) is reported, never crashes.
#include <catch2/catch.hpp>

#include <xxhash.h>
#include <zstd.h>

#include <fstream>
#include <random>

#include <fmt/format.h>

#include "offload_build/storage/hash.hpp"
#include "offload_build/storage/storage.hpp"
#include "support/entry_bomb.hpp"
#include "support/temp_dir.hpp"

using namespace ob::storage;

namespace {

std::string random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

// Text-like data that zstd compresses well.
std::string compressible(size_t n) {
  std::string s;
  for (size_t i = 0; s.size() < n; ++i) s += "kernel_" + std::to_string(i % 97) + "();\n";
  s.resize(n);
  return s;
}

Entry sample_entry() {
  Entry e;
  e.metadata = R"({"exit_code":0,"stderr":"warning: x"})";
  e.files.push_back({"obj", std::string("\x7f"
                                        "ELF\0\0\x01\x02",
                                        8) +
                                compressible(300)});
  e.files.push_back({"deps", "a.h b.h"});
  return e;
}

// Every entry here is stored as result/abc unless a test says otherwise.
std::string enc(const Entry& e) { return encode_entry(e, "result", "abc"); }
ob::Result<Entry> dec(std::string_view bytes) { return decode_entry(bytes, "result", "abc"); }

bool same(const Entry& a, const Entry& b) {
  if (a.metadata != b.metadata || a.files.size() != b.files.size()) return false;
  for (size_t i = 0; i < a.files.size(); ++i)
    if (a.files[i].name != b.files[i].name || a.files[i].data != b.files[i].data) return false;
  return true;
}

uint32_t flags_of(const std::string& bytes) { return static_cast<unsigned char>(bytes[12]); }

void put_u64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Rewrite the checksum so a hand-made header passes it, as a hostile file would.
void fix_checksum(std::string& bytes) {
  std::string covered = bytes.substr(0, 64) + bytes.substr(kHeaderSize);
  put_u64(bytes, 64, xxh3(covered));
}

// Flip every byte position in `positions` with each mask; all must fail.
void require_all_flips_fail(const std::string& good, const std::vector<size_t>& positions) {
  size_t failures = 0, tried = 0;
  for (size_t pos : positions) {
    for (unsigned mask : {0x01u, 0x80u, 0xffu}) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ mask);
      ++tried;
      auto r = dec(bad);
      if (!r)
        ++failures;
      else
        FAIL_CHECK("flip at byte " << pos << " mask " << mask << " was not detected");
    }
  }
  CHECK(failures == tried);
}

}  // namespace

TEST_CASE("entry round trip keeps metadata, names and bytes exactly", "[cache]") {
  SECTION("empty entry") {
    Entry e;
    std::string bytes = enc(e);
    // binding "result/abc", metadata length, file count
    CHECK(bytes.size() == kHeaderSize + 8 + 10 + 16);
    auto r = dec(bytes);
    REQUIRE(r.ok());
    CHECK(r->metadata.empty());
    CHECK(r->files.empty());
  }
  SECTION("empty files and names") {
    Entry e{"", {{"", ""}, {"empty", ""}, {"", "x"}}};
    auto r = dec(enc(e));
    REQUIRE(r.ok());
    CHECK(same(*r, e));
  }
  SECTION("binary data with NULs in every field") {
    Entry e{std::string("m\0e\0ta", 6),
            {{std::string("a\0b", 3), std::string(1000, '\0')}, {"bin", random_bytes(4096, 1)}}};
    auto r = dec(enc(e));
    REQUIRE(r.ok());
    CHECK(same(*r, e));
    CHECK(r->files[0].data.size() == 1000);
  }
  SECTION("5 MiB of random data (stored uncompressed)") {
    Entry e{"{}", {{"big", random_bytes(5 << 20, 2)}}};
    std::string bytes = enc(e);
    CHECK(flags_of(bytes) == 0);  // zstd would not make it smaller
    auto r = dec(bytes);
    REQUIRE(r.ok());
    CHECK(same(*r, e));
  }
  SECTION("5 MiB of compressible data (zstd)") {
    Entry e{"{}", {{"big", compressible(5 << 20)}}};
    std::string bytes = enc(e);
    CHECK(flags_of(bytes) == 1);
    CHECK(bytes.size() < (1u << 20));
    auto r = dec(bytes);
    REQUIRE(r.ok());
    CHECK(same(*r, e));
  }
  SECTION("the header is laid out as documented") {
    std::string bytes = enc(sample_entry());
    CHECK(bytes.substr(0, 8) == std::string("OBCACHE\0", 8));
    CHECK(bytes.substr(8, 4) == std::string("\x02\0\0\0", 4));
    CHECK(bytes.substr(32, 32) == std::string(32, '\0'));  // unsigned
    uint64_t stored = 0;
    for (int i = 7; i >= 0; --i) stored = (stored << 8) | static_cast<unsigned char>(bytes[24 + i]);
    CHECK(stored == bytes.size() - kHeaderSize);
  }
}

TEST_CASE("every single flipped byte is detected", "[cache]") {
  SECTION("small compressed entry: every position") {
    std::string good = enc(sample_entry());
    REQUIRE(flags_of(good) == 1);
    std::vector<size_t> all(good.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    require_all_flips_fail(good, all);
  }
  SECTION("small uncompressed entry: every position") {
    std::string good = enc(Entry{"", {{"", random_bytes(1000, 3)}}});
    REQUIRE(flags_of(good) == 0);
    std::vector<size_t> all(good.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    require_all_flips_fail(good, all);
  }
  SECTION("large entries: all header bytes and sampled payload bytes") {
    for (const std::string& data : {random_bytes(1 << 20, 4), compressible(2 << 20)}) {
      std::string good = enc(Entry{"meta", {{"f", data}}});
      std::vector<size_t> pos;
      for (size_t i = 0; i < kHeaderSize + 64; ++i) pos.push_back(i);
      std::mt19937_64 rng(5);
      for (int i = 0; i < 300; ++i)
        pos.push_back(kHeaderSize + rng() % (good.size() - kHeaderSize));
      pos.push_back(good.size() - 1);
      require_all_flips_fail(good, pos);
    }
  }
  SECTION("the error says which check failed") {
    std::string good = enc(sample_entry());
    auto flip = [&](size_t pos) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ 0x20);
      auto r = dec(bad);
      REQUIRE_FALSE(r.ok());
      return r.error().message;
    };
    CHECK_THAT(flip(0), Catch::Contains("not an offload-build cache entry"));
    CHECK_THAT(flip(8), Catch::Contains("format version 34, expected 2"));
    CHECK_THAT(flip(12), Catch::Contains("checksum mismatch"));  // flags
    CHECK_THAT(flip(16), Catch::Contains("checksum mismatch"));  // uncompressed size
    CHECK_THAT(flip(24), Catch::Contains("truncated") || Catch::Contains("size mismatch"));
    CHECK_THAT(flip(33), Catch::Contains("checksum mismatch"));  // the (empty) signature
    CHECK_THAT(flip(65), Catch::Contains("checksum mismatch"));  // the checksum itself
    CHECK_THAT(flip(good.size() - 1), Catch::Contains("checksum mismatch"));
  }
}

TEST_CASE("truncation at any length is detected", "[cache]") {
  SECTION("small entry: every length") {
    std::string good = enc(sample_entry());
    for (size_t n = 0; n < good.size(); ++n) {
      auto r = dec(std::string_view(good).substr(0, n));
      if (r.ok())
        FAIL_CHECK("truncation to " << n << " bytes was not detected");
      else if (n >= 8)
        CHECK_THAT(r.error().message, Catch::Contains("truncated"));
    }
  }
  SECTION("large entry: sampled lengths") {
    std::string good = enc(Entry{"m", {{"f", random_bytes(3 << 20, 6)}}});
    std::vector<size_t> lengths;
    for (size_t n = 0; n <= kHeaderSize + 8; ++n) lengths.push_back(n);
    for (size_t n = 1; n <= 64; ++n) lengths.push_back(good.size() - n);
    for (size_t n = 4093; n < good.size(); n += 65537) lengths.push_back(n);
    for (size_t n : lengths) {
      auto r = dec(std::string_view(good).substr(0, n));
      if (r.ok()) FAIL_CHECK("truncation to " << n << " bytes was not detected");
    }
  }
  SECTION("extra bytes at the end are detected too") {
    std::string good = enc(sample_entry());
    auto r = dec(good + "x");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("size mismatch"));
  }
}

TEST_CASE("zeroed, foreign, other-version and random input is rejected", "[cache]") {
  std::string good = enc(sample_entry());
  SECTION("zeroed file of the right length") {
    auto r = dec(std::string(good.size(), '\0'));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("not an offload-build cache entry"));
  }
  SECTION("empty input") {
    auto r = dec("");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("truncated"));
  }
  SECTION("a newer format version, even with a valid checksum") {
    std::string bad = good;
    bad[8] = 7;
    fix_checksum(bad);
    auto r = dec(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "format version 7, expected 2");
  }
  SECTION("random garbage never decodes and never crashes") {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 3000; ++i) {
      std::string junk = random_bytes(rng() % 2048, rng());
      // Half of them look like an entry up to the version field, to reach deeper checks.
      if (i % 2 && junk.size() >= 12) junk.replace(0, 12, good.substr(0, 12));
      auto r = dec(junk);
      if (r.ok()) FAIL_CHECK("garbage " << i << " decoded");
    }
  }
  SECTION("garbage payloads behind a valid header and checksum") {
    std::mt19937_64 rng(8);
    size_t rejected = 0;
    for (int i = 0; i < 2000; ++i) {
      std::string bad = good.substr(0, kHeaderSize) + random_bytes(rng() % 512, rng());
      bad[12] = static_cast<char>(rng() % 2);  // raw or zstd
      put_u64(bad, 16, i % 3 ? bad.size() - kHeaderSize : rng() % 100000);
      put_u64(bad, 24, bad.size() - kHeaderSize);
      fix_checksum(bad);
      auto r = dec(bad);
      if (!r.ok()) {
        ++rejected;
        CHECK_THAT(r.error().message,
                   Catch::StartsWith("bad payload") || Catch::StartsWith("stored for"));
      }
    }
    CHECK(rejected == 2000);
  }
}

TEST_CASE("hostile sizes neither crash nor allocate what they claim", "[cache]") {
  std::string good = enc(sample_entry());
  auto decode_fixed = [&](std::string bad) {
    fix_checksum(bad);
    auto r = dec(bad);
    REQUIRE_FALSE(r.ok());
    return r.error().message;
  };
  SECTION("uncompressed size over the limit") {
    std::string bad = good;
    put_u64(bad, 16, uint64_t{1} << 62);
    CHECK_THAT(decode_fixed(bad), Catch::Contains("bad payload") && Catch::Contains("limit"));
  }
  SECTION("a small zstd frame claiming 2 GiB") {
    std::string bad = good;
    put_u64(bad, 16, kMaxPayloadSize);
    CHECK_THAT(decode_fixed(bad), Catch::Contains("bad payload"));
  }
  SECTION("a zstd frame that expands to more than declared") {
    std::string raw = compressible(1 << 20);
    std::string z(ZSTD_compressBound(raw.size()), '\0');
    z.resize(ZSTD_compress(z.data(), z.size(), raw.data(), raw.size(), 3));
    std::string bad = good.substr(0, kHeaderSize) + z;
    bad[12] = 1;
    put_u64(bad, 16, 1000);
    put_u64(bad, 24, z.size());
    CHECK_THAT(decode_fixed(bad), Catch::Contains("more data than the header says"));
  }
  // The payload starts with where the entry is stored: "result/abc".
  const std::string bound = std::string("\x0a\0\0\0\0\0\0\0", 8) + "result/abc";
  SECTION("a raw payload claiming billions of files") {
    std::string payload = bound + std::string(16, '\0');
    put_u64(payload, bound.size() + 8, uint64_t{1} << 40);
    std::string bad = good.substr(0, kHeaderSize) + payload;
    bad[12] = 0;
    put_u64(bad, 16, payload.size());
    put_u64(bad, 24, payload.size());
    CHECK_THAT(decode_fixed(bad), Catch::Contains("files cannot fit"));
  }
  SECTION("a file length past the end") {
    std::string payload = bound + std::string(40, '\0');
    put_u64(payload, bound.size() + 8, 1);              // one file
    put_u64(payload, bound.size() + 16, 0);             // empty name
    put_u64(payload, bound.size() + 24, ~uint64_t{0});  // data length: everything
    std::string bad = good.substr(0, kHeaderSize) + payload;
    bad[12] = 0;
    put_u64(bad, 16, payload.size());
    put_u64(bad, 24, payload.size());
    CHECK_THAT(decode_fixed(bad), Catch::Contains("runs past the end"));
  }
}

TEST_CASE("an entry is bound to its kind and key, and signed with a key", "[cache]") {
  const Entry e = sample_entry();
  SECTION("moved under another key or kind, a well-formed entry is refused") {
    const std::string bytes = encode_entry(e, "result", "abc");
    REQUIRE(decode_entry(bytes, "result", "abc").ok());
    auto other_key = decode_entry(bytes, "result", "abd");
    REQUIRE_FALSE(other_key.ok());
    CHECK(other_key.error().message == "stored for result/abc, found under result/abd");
    CHECK_FALSE(decode_entry(bytes, "manifest", "abc").ok());
  }
  SECTION("signed entries verify with their key only") {
    const std::string signed_bytes = encode_entry(e, "result", "abc", "secret");
    CHECK(flags_of(signed_bytes) == 3);  // zstd + signed
    auto good = decode_entry(signed_bytes, "result", "abc", "secret");
    REQUIRE(good.ok());
    CHECK(same(*good, e));
    CHECK(decode_entry(signed_bytes, "result", "abc").ok());  // no key: the checksum only
    auto wrong = decode_entry(signed_bytes, "result", "abc", "other");
    REQUIRE_FALSE(wrong.ok());
    CHECK_THAT(wrong.error().message, Catch::Contains("signature mismatch"));
    auto unsigned_one = decode_entry(encode_entry(e, "result", "abc"), "result", "abc", "secret");
    REQUIRE_FALSE(unsigned_one.ok());
    CHECK_THAT(unsigned_one.error().message, Catch::Contains("not signed"));
  }
  SECTION("a rewritten payload with a recomputed checksum fails the signature") {
    std::string bytes = encode_entry(Entry{"m", {{"f", random_bytes(1000, 11)}}}, "result", "abc",
                                     "secret");
    REQUIRE(flags_of(bytes) == 2);  // stored raw: easy to rewrite
    bytes[bytes.size() - 1] ^= 0x55;
    fix_checksum(bytes);
    REQUIRE(decode_entry(bytes, "result", "abc").ok());  // unkeyed: undetectable
    auto r = decode_entry(bytes, "result", "abc", "secret");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("signature mismatch"));
  }
  SECTION("every flipped byte of a signed entry is detected with the key") {
    const std::string good = encode_entry(e, "result", "abc", "secret");
    for (size_t pos = 0; pos < good.size(); ++pos) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ 0x01);
      if (decode_entry(bad, "result", "abc", "secret").ok()) FAIL_CHECK("flip at " << pos);
    }
  }
}

TEST_CASE("SHA-256 hasher matches the standard vectors and is unambiguous", "[cache]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  Hasher h;
  h.update("a");
  std::string after_a = h.hex();
  CHECK(after_a == h.hex());  // hex() does not finish the hasher
  h.update("bc");
  CHECK(h.hex() == sha256_hex("abc"));
  CHECK(after_a == sha256_hex("a"));

  CHECK(Hasher().field("a", "bc").hex() != Hasher().field("ab", "c").hex());
  CHECK(Hasher().field("a", "").field("b", "").hex() != Hasher().field("a", "b").hex());
  CHECK(Hasher().field("k", "v").hex() == Hasher().field("k", "v").hex());
  CHECK(Hasher().field("k", "v").hex().size() == 64);

  Hasher moved = std::move(h);
  CHECK(moved.hex() == sha256_hex("abc"));
}

TEST_CASE("HMAC-SHA256 matches RFC 4231's vectors, the long key included", "[cache]") {
  auto hex = [](const std::string& raw) {
    std::string out;
    for (unsigned char c : raw) out += fmt::format("{:02x}", c);
    return out;
  };
  // Test case 1: a 20-byte key of 0x0b.
  CHECK(hex(hmac_sha256(std::string(20, '\x0b'), {"Hi There"})) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // Test case 2: a key shorter than the block; the message split in parts.
  CHECK(hex(hmac_sha256("Jefe", {"what do ya want ", "for nothing?"})) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a 131-byte key, longer than the block, hashed first.
  CHECK(hex(hmac_sha256(std::string(131, '\xaa'), {"Test Using Larger Than Block-Size Key - Hash Key First"})) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("sha256_file streams files and names the missing one", "[cache]") {
  ob::test::TempDir tmp("ob-cache-hash");
  std::string data = random_bytes((1 << 20) + 12345, 9);  // several read chunks
  std::ofstream(tmp / "f", std::ios::binary) << data;
  auto r = sha256_file(tmp / "f");
  REQUIRE(r.ok());
  CHECK(*r == sha256_hex(data));
  std::ofstream(tmp / "empty", std::ios::binary).close();
  CHECK(*sha256_file(tmp / "empty") == sha256_hex(""));

  auto missing = sha256_file(tmp / "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message,
             Catch::Contains((tmp / "nope").string()) && Catch::Contains("No such file"));
}

TEST_CASE("xxh3 is XXH3-64 with seed 0", "[cache]") {
  CHECK(xxh3("") == 0x2D06800538D394C2ull);  // the reference value for empty input
  CHECK(xxh3("a") != xxh3("b"));
}

namespace {

// Peak resident memory of this process since the last reset_peak_rss().
uint64_t peak_rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6));
  return 0;
}
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace

TEST_CASE("a remote value declaring 2 GB is refused from its header, with or without a key",
          "[cache][remote]") {
  const std::string key = "abcdef0123456789";
  const std::string value = ob::test::entry_bomb(key, 2'000'000'000);
  INFO(value.size() << " bytes");
  CHECK(value.size() < (256u << 10));  // the attack costs the server next to nothing
  reset_peak_rss();
  const uint64_t before = peak_rss_kb();
  for (const char* signing_key : {"", "team key"}) {
    EntryFault fault = EntryFault::Damaged;
    auto r = decode_entry(value, "result", key, signing_key, 64 << 20, &fault);
    REQUIRE_FALSE(r.ok());
    CHECK(fault == EntryFault::TooLarge);  // before the checksum and the signature: no work at all
    CHECK_THAT(r.error().message, Catch::Contains("2000000000 bytes, over the 67108864-byte limit"));
  }
  // Under another key (the binding is refused on the first bytes): with the
  // limit raised to what it declares, nothing near it is decompressed either.
  const std::string under_other = ob::test::entry_bomb(key, 200'000'000);
  EntryFault fault = EntryFault::Damaged;
  auto r = decode_entry(under_other, "result", "0000000000000000", "", 256 << 20, &fault);
  REQUIRE_FALSE(r.ok());
  CHECK(fault == EntryFault::Damaged);
  CHECK_THAT(r.error().message, Catch::Contains("stored for result/abcdef0123456789"));
  // A broken decoder would hold 2 GB (or 200 MB); the limit leaves room for noise.
  CHECK(peak_rss_kb() - before < 32 * 1024);
}
