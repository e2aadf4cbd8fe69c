// Shared by the Rust integration tests: the nightly check (with a visible skip)
// and copying Rust examples without their build/ and target/ directories.
#pragma once

#include <catch2/catch.hpp>

#include "offload_build/toolchain/rustc_probe.hpp"
#include "support/ob_process.hpp"

namespace ob::test {

// True when a nightly rustc with -Zoffload exists; otherwise says so visibly.
inline bool have_nightly_rustc() {
  static const auto tc = rust::find_rust_toolchain(std::nullopt);
  if (!tc) WARN("skipped: no nightly rustc (" << tc.error().message << ")");
  return tc.ok();
}

inline fs::path copy_rust_example(const std::string& name, const fs::path& dest) {
  const fs::path from = fs::path(OB_EXAMPLES) / name, to = dest / name;
  fs::create_directories(to);
  for (auto it = fs::recursive_directory_iterator(from); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path rel = it->path().lexically_relative(from);
    if (*rel.begin() == "build" || *rel.begin() == "target") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory()) fs::create_directories(to / rel);
    else fs::copy_file(it->path(), to / rel);
  }
  return to;
}

// Replace the first `from` in a file by `to` (the test fails if it is absent).
inline void edit_file(const fs::path& file, const std::string& from, const std::string& to) {
  std::string text = read_file(file);
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  write_file(file, text);
}

// The progress line of the device pass for `target` ("[1/5] device host ..."), or "".
inline std::string device_line(const std::string& err, const std::string& target) {
  const size_t at = err.find("] device " + target + " ");
  if (at == std::string::npos) return "";
  return err.substr(at, err.find('\n', at) - at);
}

inline const Env kMandatory = {{"OMP_TARGET_OFFLOAD", "MANDATORY"}};

}  // namespace ob::test
