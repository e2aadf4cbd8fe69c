// A value read from remote storage, as the layer checks it: any bytes are an
// entry or an error, never a crash or an allocation past the limit; what is
// accepted is within max-entry-size, as received and uncompressed; a refusal
// for size says so only when a size is over the limit; and raising the limit
// never turns an accepted value away.
#include <cstdint>
#include <string_view>

#include "offload_build/storage/remote/layered.hpp"

using namespace ob::storage;

namespace {

// The uncompressed size the entry's header declares (0 without a header).
uint64_t declared(std::string_view bytes) {
  if (bytes.size() < kHeaderSize) return 0;
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[16 + i]);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (std::string_view key : {std::string_view(), std::string_view("fuzz key")}) {
    bool accepted_below = false;
    for (uint64_t limit : {uint64_t{1} << 10, uint64_t{1} << 16, kDefaultMaxRemoteEntryBytes}) {
      EntryFault fault = EntryFault::Damaged;
      auto e = verify_remote_value("result", "abc", bytes, key, limit, &fault);
      if (e) {
        if (bytes.size() > limit || payload_size(*e) > limit) __builtin_trap();
        accepted_below = true;
        continue;
      }
      if (accepted_below) __builtin_trap();  // a larger limit refused what a smaller took
      if (fault == EntryFault::TooLarge && bytes.size() <= limit && declared(bytes) <= limit)
        __builtin_trap();  // "too large" only when something is
      if ((fault == EntryFault::Unsigned || fault == EntryFault::OtherKey) && key.empty())
        __builtin_trap();  // no key: signatures are not checked
    }
  }
  return 0;
}
