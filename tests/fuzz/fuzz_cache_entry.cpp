// The cache entry decoder, without and with a signing key, then the job
// cache's metadata validation: any bytes are an entry or an error, and a
// decoded entry re-encodes to itself.
#include <cstdint>
#include <string_view>

#include "offload_build/cache/entry_metadata.hpp"
#include "offload_build/storage/storage.hpp"

using namespace ob::cache;
using namespace ob::storage;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (std::string_view key : {std::string_view(), std::string_view("fuzz key")}) {
    auto e = decode_entry(bytes, "result", "abc", key);
    if (!e) continue;
    (void)entry_problem("result", *e);
    (void)entry_problem("manifest", *e);
    auto again = decode_entry(encode_entry(*e, "result", "abc", key), "result", "abc", key);
    if (!again || again->metadata != e->metadata || again->files.size() != e->files.size())
      __builtin_trap();
  }
  return 0;
}
