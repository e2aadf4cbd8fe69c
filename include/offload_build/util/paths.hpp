// Small path predicates shared by the cache and the launcher.
#pragma once

#include <filesystem>
#include <string_view>

namespace ob::util {

// Whether `path` (absolute, lexically normal) is `dir` or lies under it;
// false for an empty `dir`.
inline bool is_under(const std::filesystem::path& path, const std::filesystem::path& dir) {
  if (dir.empty() || path.empty()) return false;
  std::string_view p = path.native(), d = dir.native();
  // Asked for every header of every compile: compared as strings when no
  // component starts with a dot (no `.` or `..` to resolve).
  if (p.find("/.") == std::string_view::npos && d.find("/.") == std::string_view::npos &&
      p.front() != '.' && d.front() != '.' && p.find("//") == std::string_view::npos &&
      d.find("//") == std::string_view::npos) {
    while (d.size() > 1 && d.back() == '/') d.remove_suffix(1);
    while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
    if (d == "/") return p.front() == '/';
    return p == d || (p.size() > d.size() && p.compare(0, d.size(), d) == 0 && p[d.size()] == '/');
  }
  const std::filesystem::path rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace ob::util
