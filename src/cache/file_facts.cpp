#include "offload_build/cache/file_facts.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <fmt/core.h>

#include "offload_build/cache/hash.hpp"
#include "offload_build/util/file_identity.hpp"

namespace ob::cache {

namespace {

bool mentions_time_macros(const std::string& text) {
  for (const char* m : {"__DATE__", "__TIME__", "__TIMESTAMP__"})
    if (text.find(m) != std::string::npos) return true;
  return false;
}

}  // namespace

namespace {

Stamp to_stamp(const struct stat& st) {
  return Stamp{true, static_cast<uint64_t>(st.st_size),
               int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
               static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

fs::path full_path(const fs::path& path, const fs::path& cwd) {
  return path.is_absolute() ? path.lexically_normal() : (cwd / path).lexically_normal();
}

}  // namespace

Stamp stat_stamp(const fs::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return Stamp{};
  return to_stamp(st);
}

const Stamp& FileFactsCache::stamp(const fs::path& path, const fs::path& cwd) {
  const fs::path full = full_path(path, cwd);
  auto [it, inserted] = stamps_.try_emplace(full.string());
  if (inserted) it->second = stat_stamp(full);
  return it->second;
}

const FileFacts& FileFactsCache::get(const fs::path& path, const fs::path& cwd) {
  const fs::path full = full_path(path, cwd);
  auto [it, inserted] = facts_.try_emplace(full.string());
  if (!inserted) return it->second;
  FileFacts& f = it->second;
  struct stat st {};
  if (stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return f;
  const bool own = own_dirs_.empty() || std::any_of(own_dirs_.begin(), own_dirs_.end(), [&](const fs::path& d) {
    const fs::path rel = full.lexically_relative(d);
    return !rel.empty() && *rel.begin() != "..";
  });
  if (!own) {
    f.exists = true;
    // Path, size and mtime (ccache's "mtime" check), from the stat above: a
    // compile reads dozens of system headers and this is hashed for each.
    f.sha256 = sha256_hex(fmt::format("system file {} size={} mtime={}.{:09}", full.string(),
                                      st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec));
    f.device = st.st_dev;
    f.inode = st.st_ino;
    f.stamp = to_stamp(st);
    return f;
  }
  std::ifstream in(full, std::ios::binary);
  if (!in) return f;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  f.exists = true;
  f.sha256 = sha256_hex(text);
  f.device = st.st_dev;
  f.inode = st.st_ino;
  f.time_macros = mentions_time_macros(text);
  f.stamp = to_stamp(st);
  return f;
}

std::string tool_identity(const fs::path& program) { return util::file_identity(program); }

}  // namespace ob::cache
