// "sources" entries: literal paths and globs (*, ?, [...], ** for any depth),
// and the language of each source file.
#include <fnmatch.h>

#include <algorithm>
#include <system_error>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/util/strings.hpp"

namespace ob {
namespace {

bool is_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

std::vector<std::string> path_parts(std::string_view pattern) {
  std::vector<std::string> parts;
  for (auto& part : util::split(pattern, '/'))
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
  if (!parts.empty() && parts.back() == "**") parts.push_back("*");  // "src/**" = every file
  return parts;
}

// Directory entries of `dir` (none if it cannot be listed), sorted by name.
std::vector<fs::directory_entry> list_dir(const fs::path& dir) {
  std::vector<fs::directory_entry> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    entries.push_back(*it);
  std::sort(entries.begin(), entries.end());
  return entries;
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool is_real_dir(const fs::directory_entry& e) {  // a directory, not a symlink to one
  std::error_code ec;
  return e.is_directory(ec) && !e.is_symlink(ec);
}

// Match parts[i..] below `dir`, appending matched regular files to `out`.
void walk(const fs::path& dir, const std::vector<std::string>& parts, size_t i,
          std::vector<fs::path>& out) {
  if (i == parts.size()) {
    if (is_file(dir)) out.push_back(dir);
    return;
  }
  const std::string& part = parts[i];
  if (!is_glob(part)) return walk(dir / part, parts, i + 1, out);
  if (part == "**") {
    walk(dir, parts, i + 1, out);  // zero directories
    for (const auto& e : list_dir(dir))
      if (is_real_dir(e) && e.path().filename().string().front() != '.') walk(e.path(), parts, i, out);
    return;
  }
  for (const auto& e : list_dir(dir)) {
    const std::string name = e.path().filename().string();
    if (fnmatch(part.c_str(), name.c_str(), FNM_PERIOD) != 0) continue;
    if (i + 1 == parts.size()) {
      if (is_file(e.path())) out.push_back(e.path());
    } else {
      std::error_code ec;
      if (e.is_directory(ec)) walk(e.path(), parts, i + 1, out);
    }
  }
}

Error missing_file(const fs::path& base, std::string_view pattern, const fs::path& path) {
  std::string msg = "source file \"" + std::string(pattern) + "\" does not exist; ";
  std::vector<std::string> siblings;
  for (const auto& e : list_dir(path.parent_path()))
    if (is_file(e.path())) siblings.push_back(e.path().filename().string());
  if (auto near = util::closest_match(path.filename().string(), siblings)) {
    const fs::path written = fs::path(pattern).parent_path() / *near;
    return Error::usage(msg + "did you mean \"" + written.string() + "\"?");
  }
  return Error::usage(msg + "paths are relative to the manifest directory " + base.string());
}

}  // namespace

std::string_view language_name(Language lang) {
  switch (lang) {
    case Language::C: return "c";
    case Language::Cxx: return "c++";
    case Language::Rust: return "rust";
  }
  return "?";
}

std::optional<Language> language_from_extension(const fs::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".c") return Language::C;
  if (ext == ".rs") return Language::Rust;
  for (std::string_view cxx : {".cpp", ".cc", ".cxx", ".C", ".c++"})
    if (ext == cxx) return Language::Cxx;
  return std::nullopt;
}

Result<Language> language_for_source(const fs::path& file, const fs::path& project_dir) {
  if (auto lang = language_from_extension(file)) return *lang;
  std::string shown = file.lexically_relative(project_dir).string();
  if (shown.empty()) shown = file.string();
  const std::string ext = file.extension().string();
  for (std::string_view f : {".f", ".F", ".for", ".f90", ".F90", ".f95", ".f03", ".f08"})
    if (ext == f)
      return Error::usage("Fortran source \"" + shown + "\" is not supported yet; "
                          "offload-build builds C, C++ and Rust sources for now");
  const std::string what = ext.empty() ? "has no extension" : "has unknown extension \"" + ext + "\"";
  return Error::usage("source \"" + shown + "\" " + what +
                      "; accepted: .c (C), .cpp .cc .cxx .C .c++ (C++), .rs (Rust crate root), or "
                      "set \"language\" to \"c\" or \"c++\" to compile every source as that language");
}

Result<Language> parse_language(std::string_view name) {
  if (name == "c") return Language::C;
  if (name == "c++" || name == "cxx") return Language::Cxx;
  if (name == "rust") return Language::Rust;
  const std::string quoted = "\"" + std::string(name) + "\"";
  if (name == "fortran")
    return Error::usage("language " + quoted + " is not supported yet; accepted: \"c\", \"c++\" (or \"cxx\"), \"rust\"");
  std::string msg = "unknown language " + quoted + "; ";
  if (auto near = util::closest_match(name, {"c++", "cxx", "c", "rust"})) msg += "did you mean \"" + *near + "\"? ";
  return Error::usage(msg + "accepted: \"c\", \"c++\" (or \"cxx\"), \"rust\"");
}

Result<std::vector<fs::path>> expand_source_pattern(const fs::path& base, std::string_view pattern) {
  if (pattern.empty()) return Error::usage("empty source path; write a file or glob, e.g. \"src/*.c\"");
  const fs::path written(pattern);
  const fs::path root = written.is_absolute() ? written.root_path() : base;
  if (!is_glob(pattern)) {
    const fs::path path = (root / written.relative_path()).lexically_normal();
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (!fs::exists(st)) return missing_file(base, pattern, path);
    if (fs::is_directory(st))
      return Error::usage("source \"" + std::string(pattern) + "\" is a directory; list its files, "
                          "or use a glob such as \"" + written.string() + "/*.c\"");
    if (!fs::is_regular_file(st))
      return Error::usage("source \"" + std::string(pattern) + "\" is not a regular file; list source files");
    return std::vector<fs::path>{path};
  }
  std::vector<fs::path> found;
  walk(root, path_parts(written.relative_path().string()), 0, found);
  for (auto& p : found) p = p.lexically_normal();
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  if (found.empty())
    return Error::usage("glob \"" + std::string(pattern) + "\" matches no files; patterns are relative "
                        "to the manifest directory " + base.string());
  return found;
}

}  // namespace ob
