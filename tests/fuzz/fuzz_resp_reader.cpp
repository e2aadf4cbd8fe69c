// The Redis reply reader on any bytes: fed whole, then split at a point the
// input chooses, the same answer (Done with the same reply, or Bad) either
// way; never a value over its cap.
#include <cstdint>
#include <string_view>

#include "offload_build/storage/remote/resp_reader.hpp"

using namespace ob::storage;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const uint64_t cap = 1 + data[0] % 64;  // small caps reach the limit checks
  RespReader whole(cap);
  const auto a = whole.feed(bytes);
  RespReader split(cap);
  const size_t cut = bytes.empty() ? 0 : data[0] % (bytes.size() + 1);
  auto b = split.feed(bytes.substr(0, cut));
  if (b != RespReader::State::Bad) b = split.feed(bytes.substr(cut));
  if (a != b) __builtin_trap();
  if (a == RespReader::State::Done) {
    const RespReply& x = whole.reply();
    const RespReply& y = split.reply();
    if (x.type != y.type || x.text != y.text || x.integer != y.integer) __builtin_trap();
    if (x.type == RespReply::Type::Bulk && x.text.size() > cap) __builtin_trap();
  }
  return 0;
}
