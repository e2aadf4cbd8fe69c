// What the cache needs to know about an input file, computed once per build.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <unordered_map>

namespace ob::cache {

namespace fs = std::filesystem;

struct FileFacts {
  bool exists = false;
  std::string sha256;       // of the contents
  dev_t device = 0;         // OpenMP kernel names embed these two
  ino_t inode = 0;
  bool time_macros = false;  // mentions __DATE__, __TIME__ or __TIMESTAMP__
};

class FileFactsCache {
 public:
  // Facts for `path` (absolute, or relative to `cwd`), hashed at most once per build.
  const FileFacts& get(const fs::path& path, const fs::path& cwd);
  // A job is about to (re)write `path`: drop what we knew.
  void forget(const fs::path& path) { facts_.erase(path.lexically_normal().string()); }

 private:
  std::unordered_map<std::string, FileFacts> facts_;
};

// Identity of a program for the cache: resolved path, size and modification
// time (as ccache's "mtime" compiler check); a different binary at the same
// path differs. Package managers keep file mtimes, so it is stable across
// machines with the same package version.
std::string tool_identity(const fs::path& program);

}  // namespace ob::cache
