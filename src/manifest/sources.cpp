// "sources" entries: literal paths and globs (*, ?, [...], ** for any depth),
// and the language of each source file.
#include <fnmatch.h>

#include <algorithm>
#include <optional>
#include <set>
#include <system_error>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::manifest {
namespace {

bool is_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

std::vector<std::string> path_parts(std::string_view pattern) {
  std::vector<std::string> parts;
  for (auto& part : util::split(pattern, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "**" && !parts.empty() && parts.back() == "**") continue;  // "**/**" = "**"
    parts.push_back(std::move(part));
  }
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
// Each (directory, part) state is visited once, so the walk is linear in the
// tree size times the pattern's length whatever the pattern (repeated "**"
// would otherwise find a file once per way of splitting its path).
// `listed` gets every directory whose entries decided the match (listed, or
// asked for one name): a file added to one changes its mtime.
class Walker {
 public:
  Walker(const std::vector<std::string>& parts, std::vector<fs::path>& out,
         std::vector<fs::path>* listed)
      : parts_(parts), out_(out), listed_(listed) {}

  void walk(const fs::path& dir, size_t i) {
    if (!seen_.emplace(dir.native(), i).second) return;
    if (i == parts_.size()) {
      if (listed_) listed_->push_back(dir.parent_path());
      if (is_file(dir)) out_.push_back(dir);
      return;
    }
    const std::string& part = parts_[i];
    if (!is_glob(part)) return walk(dir / part, i + 1);
    if (part == "**") {
      walk(dir, i + 1);  // zero directories
      for (const auto& e : list(dir))
        if (is_real_dir(e) && e.path().filename().string().front() != '.') walk(e.path(), i);
      return;
    }
    for (const auto& e : list(dir)) {
      const std::string name = e.path().filename().string();
      if (fnmatch(part.c_str(), name.c_str(), FNM_PERIOD) != 0) continue;
      if (i + 1 == parts_.size()) {
        if (is_file(e.path()) && seen_.emplace(e.path().native(), i + 1).second) out_.push_back(e.path());
      } else {
        std::error_code ec;
        if (e.is_directory(ec)) walk(e.path(), i + 1);
      }
    }
  }

 private:
  std::vector<fs::directory_entry> list(const fs::path& dir) {
    if (listed_) listed_->push_back(dir);
    return list_dir(dir);
  }

  const std::vector<std::string>& parts_;
  std::vector<fs::path>& out_;
  std::vector<fs::path>* listed_;
  std::set<std::pair<std::string, size_t>> seen_;
};

// The directory a glob starts in (its parts before the first wildcard) must
// lie inside the project: "/**" or "../../**" would walk the whole disk.
std::optional<Error> outside_project(const fs::path& base, std::string_view pattern) {
  const fs::path written(pattern);
  fs::path start = written.is_absolute() ? written.root_path() : base;
  bool after_glob = false, climbs = false;
  for (const auto& part : path_parts(written.relative_path().string())) {
    after_glob |= is_glob(part);
    if (after_glob)
      climbs |= part == "..";
    else
      start /= part;
  }
  const fs::path rel = start.lexically_normal().lexically_relative(base.lexically_normal());
  if (!climbs && !rel.empty() && *rel.begin() != "..") return std::nullopt;
  return Error::usage("glob \"" + util::shorten(pattern, 200) +
                      "\" reaches outside the project directory " + base.string() +
                      "; globs match files below the manifest's directory (name files elsewhere "
                      "one by one, without wildcards)");
}

Error missing_file(const fs::path& base, std::string_view pattern, const fs::path& path) {
  std::string msg = "source file \"" + util::shorten(pattern, 200) + "\" does not exist; ";
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
    case Language::Fortran: return "fortran";
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
  for (std::string_view f : {".f90", ".F90", ".f", ".F", ".for", ".f95", ".F95", ".f03", ".F03", ".f08", ".F08"})
    if (ext == f) return Language::Fortran;
  return std::nullopt;
}

Result<Language> language_for_source(const fs::path& file, const fs::path& project_dir) {
  if (auto lang = language_from_extension(file)) return *lang;
  std::string shown = file.lexically_relative(project_dir).string();
  if (shown.empty()) shown = file.string();
  const std::string ext = file.extension().string();
  const std::string what = ext.empty() ? "has no extension" : "has unknown extension \"" + ext + "\"";
  return Error::usage("source \"" + shown + "\" " + what +
                      "; accepted: .c (C), .cpp .cc .cxx .C .c++ (C++), .f90 .F90 .f .F (Fortran), "
                      ".rs (Rust crate root), or set \"language\" to \"c\", \"c++\" or \"fortran\" to "
                      "compile every source as that language");
}

Result<Language> parse_language(std::string_view name) {
  if (name == "c") return Language::C;
  if (name == "c++" || name == "cxx") return Language::Cxx;
  if (name == "fortran") return Language::Fortran;
  if (name == "rust") return Language::Rust;
  const std::string quoted = "\"" + std::string(name) + "\"";
  std::string msg = "unknown language " + quoted + "; ";
  if (auto near = util::closest_match(name, {"c++", "cxx", "c", "fortran", "rust"})) msg += "did you mean \"" + *near + "\"? ";
  return Error::usage(msg + "accepted: \"c\", \"c++\" (or \"cxx\"), \"fortran\", \"rust\"");
}

Result<std::vector<fs::path>> expand_source_pattern(const fs::path& base, std::string_view pattern,
                                                    std::vector<fs::path>* listed) {
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
  if (auto outside = outside_project(base, pattern)) return *outside;
  std::vector<fs::path> found;
  const auto parts = path_parts(written.relative_path().string());
  Walker(parts, found, listed).walk(root, 0);
  for (auto& p : found) p = p.lexically_normal();
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  if (found.empty())
    return Error::usage("glob \"" + util::shorten(pattern, 200) + "\" matches no files; patterns are relative "
                        "to the manifest directory " + base.string());
  return found;
}

}  // namespace ob::manifest
