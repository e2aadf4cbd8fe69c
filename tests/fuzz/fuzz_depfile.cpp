// The depfile parser on any bytes.
#include <cstdint>
#include <string_view>

#include "offload_build/cache/depfile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)ob::cache::parse_depfile(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
