// The manifest reader and glob expansion on any bytes: a result or a usage
// error, never a crash, a hang or an exception. The manifest lives in a small
// fixed tree so that "sources" globs have something to walk.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"

namespace fs = std::filesystem;

namespace {
fs::path project() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("ob-fuzz-manifest-" + std::to_string(getpid()));
    for (const char* f : {"main.c", "src/a.c", "src/k/b.cpp", "src/k/deep/c.cc", "lib/x.rs",
                          "src/.hidden/h.c", "d\xff/e.c"}) {
      fs::create_directories((d / f).parent_path());
      std::ofstream(d / f) << "int x;\n";
    }
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(fs::temp_directory_path() / ("ob-fuzz-manifest-" + std::to_string(getpid())), ec);
    });
    return d;
  }();
  return dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto m = ob::manifest::parse_manifest(text, project() / "offload.json", ob::toolchain::frontend::manifest_options());
  if (!m && m.error().message.empty()) __builtin_trap();  // every error says something
  return 0;
}
