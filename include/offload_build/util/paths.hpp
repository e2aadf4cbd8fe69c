// Small path predicates shared by the cache and the launcher.
#pragma once

#include <filesystem>

namespace ob::util {

// Whether `path` (absolute, lexically normal) lies strictly under `dir`;
// false for an empty `dir`.
inline bool is_under(const std::filesystem::path& path, const std::filesystem::path& dir) {
  if (dir.empty()) return false;
  const std::filesystem::path rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace ob::util
