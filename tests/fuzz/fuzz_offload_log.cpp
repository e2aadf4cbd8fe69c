// The LIBOMPTARGET_INFO log parser (run --verify) on any bytes.
#include <cstdint>
#include <string_view>

#include "offload_build/report/offload_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto summary = ob::report::parse_offload_log(text);
  (void)ob::report::format_summary(summary);
  return 0;
}
