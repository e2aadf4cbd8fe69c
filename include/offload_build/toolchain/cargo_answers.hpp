// What cargo answers about a project (`cargo metadata`, `cargo config get`,
// `--unit-graph`) changes only with the project's manifests and lock file, its
// target layout, cargo's config files, the environment and the cargo and
// rustc binaries: remembered under those across processes, as rustc's probe
// answers are (rustc_probe.hpp), so a no-op `cargo offload build` does not ask
// again. docs/RUST.md, "What a no-op costs".
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "offload_build/process/command.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain::cargo {

namespace fs = std::filesystem;

class Answers {
 public:
  // `memo`: where answers are kept (nullopt: asked every time); `dir`: the
  // project (cargo's cwd, where its config search starts); `binaries`: cargo
  // and rustc, whose identities are part of every answer's key.
  Answers(std::optional<fs::path> memo, fs::path dir, std::vector<fs::path> binaries);

  // `cmd`'s captured answer: remembered when every file it depends on is as
  // it was then, else asked (and remembered when it succeeded). The first
  // question must be `cargo metadata` (`is_metadata`): the files every answer
  // depends on are found in its answer (every local package's Cargo.toml and
  // target directories, the lock file) beside cargo's config files.
  Result<process::Captured> ask(const process::Command& cmd, bool is_metadata = false);

  // How many questions were answered from the memo (tests, --verbose).
  size_t remembered() const { return remembered_; }

 private:
  std::optional<fs::path> memo_;
  fs::path dir_;
  std::string identity_;            // binaries and environment
  std::vector<fs::path> watched_;   // set by the metadata answer
  size_t remembered_ = 0;
};

// The files and directories `cargo metadata`'s answer depends on beyond the
// config files: each local package's manifest, its directory and the target
// directories cargo discovers targets in, the workspace's Cargo.toml and
// Cargo.lock. Exposed for tests.
std::vector<fs::path> metadata_inputs(const std::string& metadata_json);

}  // namespace ob::toolchain::cargo
