#include "offload_build/util/file_identity.hpp"

#include <sys/stat.h>

#include <ctime>

#include <map>
#include <mutex>

#include <fmt/core.h>

namespace ob::util {

std::string file_identity(const std::filesystem::path& path) {
  static std::mutex mutex;
  static std::map<std::string, std::string> memo;  // programs do not change during a build
  std::lock_guard lock(mutex);
  if (auto it = memo.find(path.string()); it != memo.end()) return it->second;
  std::error_code ec;
  std::filesystem::path resolved = std::filesystem::canonical(path, ec);
  if (ec) resolved = path;
  struct stat st {};
  std::string id = stat(resolved.c_str(), &st) == 0
                       ? fmt::format("{} size={} mtime={}.{:09}", resolved.string(), st.st_size,
                                     st.st_mtim.tv_sec, st.st_mtim.tv_nsec)
                       : resolved.string() + " (missing)";
  memo.emplace(path.string(), id);
  return id;
}

int64_t wall_clock_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

FileStamp file_stamp(const std::filesystem::path& p) {
  struct stat st {};
  if (lstat(p.c_str(), &st) != 0) return {"absent", 0};
  const int64_t m = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  const int64_t c = int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return {fmt::format("{:o}:{}:{}:{}:{}", st.st_mode & S_IFMT, S_ISDIR(st.st_mode) ? 0 : st.st_size, m, c, st.st_ino),
          m};
}

}  // namespace ob::util
