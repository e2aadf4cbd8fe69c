#include "offload_build/cache/file_facts.hpp"

#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <map>

#include <fmt/core.h>

#include "offload_build/cache/hash.hpp"

namespace ob::cache {

namespace {

bool mentions_time_macros(const std::string& text) {
  for (const char* m : {"__DATE__", "__TIME__", "__TIMESTAMP__"})
    if (text.find(m) != std::string::npos) return true;
  return false;
}

}  // namespace

const FileFacts& FileFactsCache::get(const fs::path& path, const fs::path& cwd) {
  const fs::path full = path.is_absolute() ? path : (cwd / path).lexically_normal();
  auto [it, inserted] = facts_.try_emplace(full.string());
  if (!inserted) return it->second;
  FileFacts& f = it->second;
  struct stat st {};
  if (stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return f;
  std::ifstream in(full, std::ios::binary);
  if (!in) return f;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  f.exists = true;
  f.sha256 = sha256_hex(text);
  f.device = st.st_dev;
  f.inode = st.st_ino;
  f.time_macros = mentions_time_macros(text);
  return f;
}

std::string tool_identity(const fs::path& program) {
  static std::map<std::string, std::string> memo;
  auto it = memo.find(program.string());
  if (it != memo.end()) return it->second;
  std::error_code ec;
  fs::path resolved = fs::canonical(program, ec);
  if (ec) resolved = program;
  struct stat st {};
  std::string id;
  if (stat(resolved.c_str(), &st) == 0) {
    id = fmt::format("{} size={} mtime={}.{:09}", resolved.string(), st.st_size,
                     st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  } else {
    id = resolved.string() + " (missing)";
  }
  memo.emplace(program.string(), id);
  return id;
}

}  // namespace ob::cache
