// Whether a compile compiles device code: what may be sent to another machine
// (prefix_command: distcc, icecc) and what must run here. docs/DISTRIBUTED.md.
#include <algorithm>
#include <array>
#include <string_view>

#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::clang_cli {

namespace {

using util::ends_with;
using util::starts_with;

// Options (any spelling starting so, joined values too) that ask for device
// code or hand a compile device images: a remote compile loses them silently.
constexpr std::array<std::string_view, 18> kOffloadPrefixes{
    "-fopenmp-target",       // -fopenmp-targets=, -fopenmp-target-debug, -fopenmp-target-jit
    "-fopenmp-is-target-device", "-fopenmp-host-ir-file-path",
    "--offload",             // --offload-arch=, --offload-targets=, --offload-device-only, ...
    "-foffload",             // -foffload-lto, gcc's -foffload=
    "-fembed-offload-object", "-Xopenmp-target", "-Xoffload-linker", "-Xarch_device",
    "--cuda", "-fcuda", "-Xcuda", "--hip", "-fhip", "-fgpu", "--gpu", "-fsycl", "-nogpu"};

// A language (-x LANG) or source (by extension) with device code.
bool device_language(std::string_view lang) {
  return lang.find("cuda") != std::string_view::npos || lang.find("hip") != std::string_view::npos ||
         lang.find("sycl") != std::string_view::npos;
}
bool device_source(std::string_view token) {
  for (std::string_view ext : {".cu", ".cuh", ".cui", ".hip", ".hipi"})
    if (ends_with(token, ext)) return true;
  return false;
}

}  // namespace

bool offload_free(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  const bool clang = is_clang(argv.front());
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string_view t = argv[i];
    // Values too: -Xclang -fembed-offload-object=PKG is two tokens, and
    // -Xclang=-fopenmp-is-target-device or -Wp,... one: every part after
    // a '=' or ',' is looked at as well.
    auto offload = [](std::string_view part) {
      return std::any_of(kOffloadPrefixes.begin(), kOffloadPrefixes.end(),
                         [&](std::string_view p) { return starts_with(part, p); });
    };
    if (offload(t)) return false;
    for (size_t at = t.find_first_of("=,"); at != std::string_view::npos; at = t.find_first_of("=,", at + 1))
      if (offload(t.substr(at + 1))) return false;
    if (t == "-x" && i + 1 < argv.size() && device_language(argv[i + 1])) return false;
    if (starts_with(t, "-x") && device_language(t.substr(2))) return false;
    if (device_source(t)) return false;
    // gcc built with offload support compiles device code for -fopenmp alone.
    if (!clang && (starts_with(t, "-fopenmp") || starts_with(t, "-fopenacc"))) return false;
  }
  return true;
}

}  // namespace ob::toolchain::clang_cli
