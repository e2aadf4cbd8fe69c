// Shared by the Rust integration tests: the nightly check (a skip without one)
// and copying Rust examples without their build/ and target/ directories.
#pragma once

#include <catch2/catch.hpp>

#include "offload_build/toolchain/rustc_probe.hpp"
#include "support/ob_process.hpp"
#include "support/skip.hpp"

namespace ob::test {

// Why no nightly rustc with -Zoffload can be used here; "" when one can.
inline const std::string& nightly_rustc_problem() {
  static const std::string why = [] {
    auto tc = toolchain::rust::find_rust_toolchain(std::nullopt);
    return tc ? std::string() : tc.error().message;
  }();
  return why;
}

// The test is skipped (OB_SKIP) unless a nightly rustc with -Zoffload is here.
#define OB_REQUIRE_NIGHTLY_RUSTC()                                                    \
  do {                                                                                \
    if (const std::string& ob_why_ = ::ob::test::nightly_rustc_problem(); !ob_why_.empty()) \
      OB_SKIP("no nightly rustc with -Zoffload (" << ob_why_ << ")");                 \
  } while (0)

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

// The device pass's own target dir of `crate` for `target` (host, sm_90) under
// `target_dir`: <target_dir>/offload-device/<target>/<crate>-<configuration>;
// the test fails unless there is exactly one.
inline fs::path device_dir(const fs::path& target_dir, const std::string& target, const std::string& crate) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(target_dir / "offload-device" / target, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind(crate + "-", 0) == 0) found.push_back(it->path());
  INFO("device target dirs of " << crate << " for " << target << " under " << target_dir);
  REQUIRE(found.size() == 1);
  return found.front();
}

inline const Env kMandatory = {{"OMP_TARGET_OFFLOAD", "MANDATORY"}};

}  // namespace ob::test
