// A Toolchain of made-up paths under `root`, for planner tests that never run it.
#pragma once

#include "offload_build/toolchain/toolchain.hpp"

namespace ob::test {

inline toolchain::Toolchain fake_toolchain_at(const std::filesystem::path& root) {
  toolchain::Toolchain tc;
  tc.root = root;
  tc.clang = root / "bin/clang";
  tc.clangxx = root / "bin/clang++";
  tc.offload_binary = root / "bin/llvm-offload-binary";
  tc.linker_wrapper = root / "bin/clang-linker-wrapper";
  tc.objdump = root / "bin/llvm-objdump";
  tc.lib_dir = root / "lib";
  return tc;
}

// The same under "/llvm", the root most planner tests use.
inline toolchain::Toolchain fake_toolchain(const std::filesystem::path& root = "/llvm") { return fake_toolchain_at(root); }

// With a rustc at /rust/bin/rustc, for the Rust planners.
inline toolchain::Toolchain fake_rust_toolchain(toolchain::rust::Flavour flavour = toolchain::rust::Flavour::Test) {
  toolchain::Toolchain tc = fake_toolchain_at("/llvm");
  toolchain::rust::RustToolchain r;
  r.rustc = "/rust/bin/rustc";
  r.flavour = flavour;
  tc.rust = r;
  return tc;
}

}  // namespace ob::test
