// Private to src/manifest: typed access to the parsed offload.json that turns
// every mismatch into a located usage error ("FILE:LINE:COL: error: ...").
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/manifest/json_locator.hpp"
#include "offload_build/util/result.hpp"

namespace ob::manifest::detail {

// Every top-level key a manifest may have, in documentation order.
extern const std::vector<std::string> kManifestKeys;

// `"targets": ["host", "sm_90"]`: how to write `key`, for hints.
std::string example_for(std::string_view key);

// "a string", "a number", "a boolean", "null", "a list", "an object".
std::string type_phrase(const nlohmann::json& value);

class Reader {
 public:
  Reader(const std::string& text, const std::filesystem::path& file, const nlohmann::json& root)
      : text_(text), file_(file), root_(root) {}

  const nlohmann::json& root() const { return root_; }

  // A usage error at the value (or the key) that `pointer` names.
  Error error_at(std::string_view pointer, std::string_view message) const;
  Error error_at_key(std::string_view pointer, std::string_view message) const;
  std::optional<TextPos> key_pos(std::string_view pointer) const { return locator().key(pointer); }

  // Top-level `key` as a string (nullopt when absent); an empty string is an
  // error unless `allow_empty`.
  Result<std::optional<std::string>> optional_string(const std::string& key,
                                                     bool allow_empty = false) const;
  // Top-level `key` as a boolean (nullopt when absent).
  Result<std::optional<bool>> optional_bool(const std::string& key) const;
  // Top-level `key` as a list of non-empty strings (empty when absent).
  Result<std::vector<std::string>> string_list(const std::string& key) const;

 private:
  const JsonLocator& locator() const;

  const std::string& text_;
  const std::filesystem::path& file_;
  const nlohmann::json& root_;
  mutable std::optional<JsonLocator> locator_;  // built on the first error
};

}  // namespace ob::manifest::detail
