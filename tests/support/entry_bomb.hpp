// A "decompression bomb" for the hostile-remote tests: a well-formed,
// unsigned cache entry whose zstd payload really expands to `size` bytes (a
// file of zeros); 2 GB take about 61 KB.
#pragma once

#include <catch2/catch.hpp>

#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <memory>
#include <string>

#include "offload_build/storage/storage.hpp"

namespace ob::test {

inline void put_le(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A well-formed, unsigned entry for result/<key> whose payload really
// expands to `size` bytes (one file of zeros), compressed as a stream: the
// 62 KB "decompression bomb" of the hostile-remote tests.
inline std::string entry_bomb(const std::string& key, uint64_t size, const std::string& kind = "result") {
  std::string raw;
  auto blob = [&](std::string_view b) {
    raw.append(8, '\0');
    put_le(raw, raw.size() - 8, b.size());
    raw.append(b);
  };
  const uint64_t prefix = 8 + kind.size() + 1 + key.size() + 8 + 2 + 8 + 8 + 5 + 8;
  blob(kind + "/" + key);
  blob("{}");
  raw.append(8, '\0');
  put_le(raw, raw.size() - 8, 1);
  blob("out.o");
  raw.append(8, '\0');
  put_le(raw, raw.size() - 8, size - prefix);
  REQUIRE(raw.size() == prefix);
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  ZSTD_CCtx_setPledgedSrcSize(cctx.get(), size);
  std::string stored, chunk(1 << 20, '\0'), out(ZSTD_CStreamOutSize(), '\0');
  uint64_t left = size - prefix;
  auto feed = [&](std::string_view in, ZSTD_EndDirective end) {
    ZSTD_inBuffer ib{in.data(), in.size(), 0};
    for (;;) {
      ZSTD_outBuffer ob{out.data(), out.size(), 0};
      size_t rest = ZSTD_compressStream2(cctx.get(), &ob, &ib, end);
      REQUIRE(!ZSTD_isError(rest));
      stored.append(out.data(), ob.pos);
      if (end == ZSTD_e_end ? rest == 0 : ib.pos == ib.size) break;
    }
  };
  feed(raw, ZSTD_e_continue);
  while (left > 0) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
    left -= n;
    feed(std::string_view(chunk.data(), n), left ? ZSTD_e_continue : ZSTD_e_end);
  }
  // The header, as encode_entry writes it, around that payload.
  std::string e = storage::encode_entry(storage::Entry{}, kind, key);
  e.resize(storage::kHeaderSize);
  put_le(e, 12, 1);  // flags: zstd
  e[16 + 4] = e[16 + 5] = e[16 + 6] = e[16 + 7] = 0;
  put_le(e, 16, size);
  put_le(e, 24, stored.size());
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, e.data(), 64);
  XXH3_64bits_update(st, stored.data(), stored.size());
  put_le(e, 64, XXH3_64bits_digest(st));
  XXH3_freeState(st);
  return e + stored;
}

}  // namespace ob::test
