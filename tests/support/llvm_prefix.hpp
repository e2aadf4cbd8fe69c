// The LLVM 19 (and 16) that scripts/setup.sh --llvm 19 (scripts/llvm-prefix.sh)
// unpacks into a private prefix: the LLVM with a GPU OpenMP device runtime,
// beside the system's LLVM 22. scripts/test.sh installs it; a test without
// it is skipped for a reason tests/allowed_skips.txt does not allow.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>

namespace ob::test {

namespace fs = std::filesystem;

// llvm-N/usr/lib/llvm-N under $OFFLOAD_BUILD_TOOLCHAINS, else
// ${XDG_DATA_HOME:-~/.local/share}/offload-build: the root with bin/clang.
inline std::optional<fs::path> llvm_prefix_root(int major) {
  const std::string rel = "llvm-" + std::to_string(major) + "/usr/lib/llvm-" + std::to_string(major);
  std::optional<fs::path> root;
  if (const char* t = std::getenv("OFFLOAD_BUILD_TOOLCHAINS")) root = fs::path(t) / rel;
  else if (const char* x = std::getenv("XDG_DATA_HOME")) root = fs::path(x) / "offload-build" / rel;
  else if (const char* h = std::getenv("HOME")) root = fs::path(h) / ".local/share/offload-build" / rel;
  std::error_code ec;
  if (!root || !fs::exists(*root / "bin/clang", ec)) return std::nullopt;
  return root;
}
inline std::optional<fs::path> llvm19_root() { return llvm_prefix_root(19); }

}  // namespace ob::test

// `root`: LLVM 19's root, or the test is skipped.
#define OB_LLVM19(root)                                                                          \
  const auto root##_found = ::ob::test::llvm19_root();                                           \
  if (!root##_found) OB_SKIP("no LLVM 19 in a private prefix: run scripts/setup.sh --llvm 19"); \
  const fs::path root = *root##_found

// `root`: LLVM 16's root, or the test is skipped.
#define OB_LLVM16(root)                                                                          \
  const auto root##_found = ::ob::test::llvm_prefix_root(16);                                    \
  if (!root##_found) OB_SKIP("no LLVM 16 in a private prefix: run scripts/setup.sh --llvm 16"); \
  const fs::path root = *root##_found
