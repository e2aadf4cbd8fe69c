#include "offload_build/toolchain/driver_probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/exec/subprocess.hpp"
#include "offload_build/cache/storage.hpp"
#include "offload_build/util/json_text.hpp"
#include "offload_build/util/file_identity.hpp"

namespace ob {

namespace {

// What the driver reads besides its argv when it lays out a compile.
constexpr const char* kEnvironment[] = {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
                                        "COMPILER_PATH", "CCC_OVERRIDE_OPTIONS",
                                        "GCC_EXEC_PREFIX", "CUDA_PATH", "PATH"};

constexpr int kTimeoutMs = 20'000;

class ClangListingProbe final : public DriverProbe {
 public:
  ClangListingProbe(std::optional<fs::path> memo_dir, std::vector<fs::path> tools)
      : memo_dir_(std::move(memo_dir)), tools_(std::move(tools)) {}

  Result<std::vector<driver_listing::Argv>> list(const driver_listing::Argv& argv,
                                                 const fs::path& cwd) override {
    const std::string key = identity(argv, cwd);
    if (auto memo = recall(key)) return std::move(*memo);
    driver_listing::Argv cmd = argv;
    cmd.push_back("-###");
    // clang answers in ~40 ms; a wrapper that hangs must not hang the build.
    auto r = exec::capture(Command{cmd, cwd, {}}, kTimeoutMs);
    if (!r) return r.error();
    if (r->exit_code != 0)
      return Error::failure(fmt::format("{} -### failed: {}", argv.front(), r->err));
    auto commands = driver_listing::parse(r->err);  // the driver lists on stderr
    if (!commands) return commands.error();
    remember(key, *commands);
    return commands;
  }

 private:
  std::string identity(const driver_listing::Argv& argv, const fs::path& cwd) const {
    nlohmann::json j{{"driver", util::file_identity(argv.front())},
                     {"argv", argv},
                     {"cwd", cwd.string()}};
    for (const char* name : kEnvironment) {
      const char* v = std::getenv(name);
      j["env"][name] = v ? v : "";
    }
    for (const auto& t : tools_) j["tools"].push_back(util::file_identity(t));
    return util::dump_lossless(j);
  }

  fs::path memo_file(const std::string& key) const {
    return *memo_dir_ / fmt::format("clang-listing-{:016x}.json", std::hash<std::string>{}(key));
  }

  std::optional<std::vector<driver_listing::Argv>> recall(const std::string& key) const {
    if (!memo_dir_) return std::nullopt;
    // Only a file of ours, not through a symlink (cache/storage.hpp).
    auto text = cache::read_trusted_file(memo_file(key), false);
    if (!text) return std::nullopt;
    auto j = util::parse_lossless(*text);
    if (j.is_discarded() || !j.is_object() || j.value("key", "") != key) return std::nullopt;
    try {
      return j.at("commands").get<std::vector<driver_listing::Argv>>();
    } catch (const nlohmann::json::exception&) {
      return std::nullopt;
    }
  }

  // Only a memo: failing to write it is never an error.
  void remember(const std::string& key, const std::vector<driver_listing::Argv>& commands) const {
    if (!memo_dir_) return;
    cache::write_file_atomically(
        *memo_dir_, memo_file(key).filename().string(),
        util::dump_lossless(nlohmann::json{{"key", key}, {"commands", commands}}));
  }

  std::optional<fs::path> memo_dir_;
  std::vector<fs::path> tools_;
};

}  // namespace

std::vector<Result<std::vector<driver_listing::Argv>>> list_all(
    DriverProbe& probe, const std::vector<driver_listing::Argv>& commands, const fs::path& cwd,
    size_t parallel) {
  std::vector<std::optional<Result<std::vector<driver_listing::Argv>>>> slots(commands.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next++) < commands.size();) {
      // An exception must not escape a thread (std::terminate): it becomes this command's error.
      try {
        slots[k] = probe.list(commands[k], cwd);
      } catch (const std::exception& e) {
        slots[k] = Error::failure(std::string("internal error while asking the driver: ") + e.what());
      }
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < std::min(parallel, commands.size()); ++t) workers.emplace_back(work);
  work();
  for (auto& w : workers) w.join();
  std::vector<Result<std::vector<driver_listing::Argv>>> out;
  for (auto& s : slots) out.push_back(std::move(*s));
  return out;
}

std::unique_ptr<DriverProbe> make_driver_probe(const Toolchain& tc, std::optional<fs::path> memo_dir) {
  std::vector<fs::path> tools;
  if (tc.cuda_path) tools.push_back(*tc.cuda_path / "bin/ptxas");
  return std::make_unique<ClangListingProbe>(std::move(memo_dir), std::move(tools));
}

}  // namespace ob
