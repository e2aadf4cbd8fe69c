#include "offload_build/toolchain/probe.hpp"

#include <unistd.h>

#include <functional>
#include <system_error>

#include <fmt/core.h>

#include "offload_build/storage/storage.hpp"
#include "offload_build/util/json_text.hpp"

namespace ob::toolchain::probe {

bool is_executable(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<process::Captured> run(std::vector<std::string> argv, const std::filesystem::path& cwd,
                                  decltype(process::Command::env) env) {
  process::Command cmd{std::move(argv), cwd, std::move(env)};
  auto r = process::capture(cmd);
  if (!r) return std::nullopt;
  return std::move(r).value();
}

namespace {

std::filesystem::path memo_file(const std::filesystem::path& dir, const char* prefix,
                                const std::string& key) {
  return dir / fmt::format("{}-{:016x}.json", prefix, std::hash<std::string>{}(key));
}

}  // namespace

std::optional<nlohmann::json> recall(const std::optional<std::filesystem::path>& dir,
                                     const char* prefix, const std::string& key) {
  if (!dir) return std::nullopt;
  auto text = storage::read_trusted_file(memo_file(*dir, prefix, key), false);
  if (!text) return std::nullopt;
  auto j = util::parse_lossless(*text);
  if (j.is_discarded() || !j.is_object() || j.value("key", "") != key || !j.contains("answer"))
    return std::nullopt;
  return j["answer"];
}

void remember(const std::optional<std::filesystem::path>& dir, const char* prefix,
              const std::string& key, const nlohmann::json& answer) {
  if (!dir) return;
  storage::write_file_atomically(*dir, memo_file(*dir, prefix, key).filename().string(),
                               util::dump_lossless(nlohmann::json{{"key", key}, {"answer", answer}}));
}

}  // namespace ob::toolchain::probe
