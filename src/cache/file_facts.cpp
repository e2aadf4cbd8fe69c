#include "offload_build/cache/file_facts.hpp"

#include <sys/stat.h>

#include <algorithm>

#include <fmt/core.h>

#include "offload_build/cache/depfile.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/storage/hash.hpp"
#include "offload_build/toolchain/program_identity.hpp"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/util/file_identity.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/paths.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cache {

namespace {

// Sources and headers are hashed whole; a generated one may be large.
constexpr uint64_t kMaxSourceFile = uint64_t{2} << 30;

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
               static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
               int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
}

// No "", "." or ".." component (nor "//", nor a trailing '/'): lexically_normal
// would return it unchanged.
bool already_normal(const std::string& p) {
  if (p.empty()) return false;
  size_t start = p[0] == '/' ? 1 : 0;
  while (true) {
    const size_t end = std::min(p.find('/', start), p.size());
    const std::string_view part(p.data() + start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (end == p.size()) return true;
    start = end + 1;
  }
}

}  // namespace

fs::path full_path(const fs::path& path, const fs::path& cwd) {
  // An up-to-date check asks this for every file every job read: skip the
  // normalization (an allocation per component) where it changes nothing.
  if (path.is_absolute()) return already_normal(path.native()) ? path : path.lexically_normal();
  if (already_normal(path.native()) && already_normal(cwd.native())) return cwd / path;
  return (cwd / path).lexically_normal();
}

Stamp any_stamp(const char* path) {
  struct stat st {};
  if (stat(path, &st) != 0) return Stamp{};
  return to_stamp(st);
}

Stamp any_stamp(const fs::path& path) { return any_stamp(path.c_str()); }

std::vector<fs::path> system_dirs(std::string_view setting) {
  std::vector<fs::path> dirs;
  for (const auto& d : util::split(setting, ':'))
    if (!d.empty()) dirs.push_back(fs::path(d).lexically_normal());
  return dirs;
}

bool is_system_file(const fs::path& full, const std::vector<fs::path>& project, const std::vector<fs::path>& system) {
  for (const auto& d : project)
    if (util::is_under(full, d)) return false;
  for (const auto& d : system)
    if (util::is_under(full, d)) return true;
  return false;
}

bool FileFactsCache::is_system(const fs::path& full) const { return is_system_file(full, project_, system_); }

Stamp stat_stamp(const fs::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return Stamp{};
  return to_stamp(st);
}

const Stamp& FileFactsCache::stamp(const fs::path& path, const fs::path& cwd) {
  if (util::starts_with(path.native(), kEnvDepPrefix)) {  // a variable's stamp is its value's hash
    auto [it, inserted] = stamps_.try_emplace(path.native());
    if (inserted) it->second = Stamp{true, std::stoull(get(path, cwd).sha256.substr(0, 15), nullptr, 16), 0, 0, 0};
    return it->second;
  }
  const fs::path full = full_path(path, cwd);
  auto [it, inserted] = stamps_.try_emplace(full.string());
  if (inserted) it->second = stat_stamp(full);
  return it->second;
}

const Stamp& FileFactsCache::any(const fs::path& path, const fs::path& cwd) {
  const fs::path full = full_path(path, cwd);
  auto [it, inserted] = any_.try_emplace(full.string());
  if (inserted) it->second = any_stamp(full);
  return it->second;
}

const FileFacts& FileFactsCache::get(const fs::path& path, const fs::path& cwd) {
  if (util::starts_with(path.native(), kEnvDepPrefix)) {  // an environment variable (depfile.hpp)
    auto [it, inserted] = facts_.try_emplace(path.native());
    if (inserted) {
      const char* value = config::env_or_null(path.native().c_str() + kEnvDepPrefix.size());
      it->second.exists = true;
      it->second.sha256 = storage::sha256_hex(value ? "set " + std::string(value) : std::string("unset"));
    }
    return it->second;
  }
  const bool program = util::starts_with(path.native(), kProgramDepPrefix);  // (depfile.hpp)
  const fs::path full = full_path(program ? fs::path(path.native().substr(kProgramDepPrefix.size())) : path, cwd);
  auto [it, inserted] = facts_.try_emplace(program ? path.native() : full.string());
  if (!inserted) return it->second;
  FileFacts& f = it->second;
  struct stat st {};
  if (stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return f;
  if (program || is_system(full)) {
    f.exists = true;
    // Path, size and mtime (ccache's "mtime" check), from the stat above: a
    // compile reads dozens of system headers and this is hashed for each.
    f.sha256 = storage::sha256_hex(fmt::format("system file {} size={} mtime={}.{:09}", full.string(),
                                      st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec));
    f.device = st.st_dev;
    f.inode = st.st_ino;
    f.stamp = to_stamp(st);
    return f;
  }
  // A source or header; one that turned into a FIFO or device since the stat is no file.
  auto read = util::read_file(full, kMaxSourceFile);
  if (!read) return f;
  const std::string& text = *read;
  f.exists = true;
  f.sha256 = storage::sha256_hex(text);
  f.device = st.st_dev;
  f.inode = st.st_ino;
  f.time_macros = mentions_time_macros(text);
  f.stamp = to_stamp(st);
  std::error_code ec;
  const fs::path real = fs::canonical(full, ec);
  f.name = toolchain::stable_name_path(ec ? full : real, names_);
  return f;
}

std::string tool_identity(const fs::path& program) { return toolchain::program_identity(program.string()); }

}  // namespace ob::cache
