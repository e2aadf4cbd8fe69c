#include "offload_build/toolchain/frontends/scan_deps.hpp"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ob::toolchain::scan_deps {

std::string entry_name(size_t n) { return fmt::format("ob-scan-{}", n); }

std::vector<std::string> argv(const std::string& tool, const std::string& db, const std::string& out,
                              size_t threads) {
  return {tool, "-compilation-database=" + db, "-format=experimental-full", "-j", std::to_string(threads), "-o", out};
}

std::optional<std::map<size_t, std::vector<std::string>>> read_output(std::string_view json) {
  const auto doc = nlohmann::json::parse(json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("translation-units")) return std::nullopt;
  std::map<size_t, std::set<std::string>> files;
  for (const auto& tu : doc["translation-units"]) {
    if (!tu.is_object() || !tu.contains("commands") || !tu["commands"].is_array()) return std::nullopt;
    for (const auto& c : tu["commands"]) {
      const std::string name = c.value("input-file", "");
      constexpr std::string_view prefix = "ob-scan-";
      if (!name.starts_with(prefix) || !c.contains("file-deps") || !c["file-deps"].is_array()) return std::nullopt;
      size_t n = 0;
      for (char d : name.substr(prefix.size())) {
        if (d < '0' || d > '9' || n > 1000000) return std::nullopt;
        n = n * 10 + size_t(d - '0');
      }
      for (const auto& f : c["file-deps"])
        if (f.is_string()) files[n].insert(f.get<std::string>());
    }
  }
  std::map<size_t, std::vector<std::string>> out;
  for (auto& [n, set] : files) out[n] = {set.begin(), set.end()};
  return out;
}

}  // namespace ob::toolchain::scan_deps
