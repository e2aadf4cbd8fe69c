// What the cache needs to know about an input file, computed once per build.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "offload_build/toolchain/stable_names.hpp"

namespace ob::cache {

namespace fs = std::filesystem;
using ob::toolchain::NameRoots;

// What stat(2) says, without reading: enough to tell that a file is unchanged
// since it was last hashed (size, nanosecond mtime, device, inode and
// nanosecond ctime: an in-place edit of the same size whose mtime was put
// back, `touch -r`, still changes the ctime, which no one can set).
struct Stamp {
  bool exists = false;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t ctime_ns = 0;
  bool operator==(const Stamp&) const = default;
};

struct FileFacts {
  bool exists = false;
  std::string sha256;       // of the contents
  dev_t device = 0;         // OpenMP kernel names embed these two (by default)
  ino_t inode = 0;
  // Hashed files: the real path as the stable-names library names it
  // (relative to the anchor when under a base directory, else absolute); with the content, what
  // stable kernel names are made of. Empty for system files.
  std::string name;
  bool time_macros = false;  // mentions __DATE__, __TIME__ or __TIMESTAMP__
  Stamp stamp;               // taken when the contents were read
};

// A regular file's stamp; exists = false for anything else.
Stamp stat_stamp(const fs::path& path);
// The stamp of a file of any kind (a directory, whose mtime changes when an
// entry is added or removed); exists = false when stat fails.
Stamp any_stamp(const fs::path& path);
Stamp any_stamp(const char* path);  // the same without making a path (its components)

// `path` (absolute, or relative to `cwd`, which is absolute) made absolute
// and lexically normal, cheaply when it already is.
fs::path full_path(const fs::path& path, const fs::path& cwd);

// Where the system's files are (the package manager's and the toolchain's):
// the directories of the system_dirs setting (`setting`: colon-separated; by
// default /usr and the /lib directories, merged /usr's).
std::vector<fs::path> system_dirs(std::string_view setting);

// Whether `full` (absolute, normal) lies under one of `system` and none of
// `project`: a file identified by stat instead of content (FileFactsCache).
bool is_system_file(const fs::path& full, const std::vector<fs::path>& project, const std::vector<fs::path>& system);

class FileFactsCache {
 public:
  FileFactsCache() = default;
  // Files under `system` (system_dirs(...): headers and libraries such as
  // libLLVM.so that every link reads) are identified by path, size and mtime
  // instead of being read and hashed, as programs are (util::file_identity),
  // unless they lie under one of `project` (the project, build and base
  // directories). Every other file, wherever it lies, is hashed. `names`:
  // what FileFacts::name is relative to (the plan's base directories and anchor).
  explicit FileFactsCache(std::vector<fs::path> project, std::vector<fs::path> system = {},
                          toolchain::NameRoots names = {})
      : project_(std::move(project)), system_(std::move(system)), names_(std::move(names)) {}

  // Whether `full` (absolute, normal) is identified by stat instead of content.
  bool is_system(const fs::path& full) const;

  // Facts for `path` (absolute, or relative to `cwd`), hashed at most once per build.
  const FileFacts& get(const fs::path& path, const fs::path& cwd);
  // stat(2) only, memoized like get().
  const Stamp& stamp(const fs::path& path, const fs::path& cwd);
  // any_stamp() (a file of any kind, or none: lookups that found nothing),
  // memoized like get().
  const Stamp& any(const fs::path& path, const fs::path& cwd);
  // A job is about to (re)write `path`: drop what we knew.
  void forget(const fs::path& path) {
    facts_.erase(path.lexically_normal().string());
    stamps_.erase(path.lexically_normal().string());
    any_.erase(path.lexically_normal().string());
  }

 private:
  std::unordered_map<std::string, FileFacts> facts_;
  std::unordered_map<std::string, Stamp> stamps_, any_;
  std::vector<fs::path> project_, system_;
  toolchain::NameRoots names_;
};

// Identity of a program for the cache: what it is, not its spelling (program_identity).
std::string tool_identity(const fs::path& program);

}  // namespace ob::cache
