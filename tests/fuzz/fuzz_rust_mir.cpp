// rustc's MIR as the launch check reads it (toolchain/frontends/rust_mir.hpp)
// on any bytes: the text split at its first NUL into two crates' MIR, their
// generic launches resolved across both, and the launches checked against
// an image of the first's functions.
#include <cstdint>
#include <string_view>

#include "offload_build/toolchain/frontends/rust_mir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ob::toolchain::rust;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t nul = text.find('\0');
  std::vector<Mir> host{parse_mir(text.substr(0, nul))};
  if (nul != std::string_view::npos) host.push_back(parse_mir(text.substr(nul + 1)));
  resolve_generic_launches(host);
  DeviceImage image{ob::manifest::Target{"x86_64-unknown-linux-gnu", "generic"}, {}, host.front().functions};
  for (const auto& f : image.functions) image.symbols.insert(f.name);
  (void)check_launches(host, {image}, "offload_device");
  return 0;
}
