// Storage: opening the cache directory, get and atomic put, the one warning.
#include "offload_build/cache/storage.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include <fmt/format.h>

namespace ob::cache {

namespace {

constexpr std::string_view kCacheDirTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by offload-build.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n";

std::atomic<bool> g_warned{false};

void warn_unwritable_once(const fs::path& dir, const std::string& reason) {
  if (g_warned.exchange(true)) return;
  std::string line = fmt::format(
      "offload-build: warning: cache directory {} is not writable ({}); building without "
      "storing results\n",
      dir.string(), reason);
  // One write(2), so lines from concurrent processes do not interleave.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

bool valid_name(std::string_view s, size_t min_len) {
  if (s.size() < min_len || s.size() > 200) return false;
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// "<name>.tmp.<pid>.<random>": unique among processes and threads.
std::string temp_name(std::string_view name) {
  thread_local std::mt19937_64 rng{std::random_device{}() ^ (uint64_t(::getpid()) << 32)};
  return fmt::format("{}.tmp.{}.{:016x}", name, ::getpid(), rng());
}

// Write `bytes` to a new file `path` (O_EXCL). Returns 0 or an errno value;
// on failure nothing is left behind.
int write_new_file(const fs::path& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(path.c_str());
      return err;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {  // delayed write errors (ENOSPC, EDQUOT on network filesystems)
    int err = errno;
    ::unlink(path.c_str());
    return err;
  }
  return 0;
}

// Write `bytes` to `target` atomically: temp file in the same directory, rename.
int write_atomically(const fs::path& target, std::string_view bytes) {
  fs::path tmp = target.parent_path() / temp_name(target.filename().string());
  if (int err = write_new_file(tmp, bytes)) return err;
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return err;
  }
  return 0;
}

enum class ReadStatus { Ok, Missing, TooLarge };

ReadStatus read_whole(int fd, std::string& out) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return ReadStatus::Missing;
  if (uint64_t(st.st_size) > kHeaderSize + kMaxPayloadSize) return ReadStatus::TooLarge;
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ReadStatus::Missing;
    if (n == 0) break;  // shrank under us: decode says "truncated"
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return ReadStatus::Ok;
}

}  // namespace

Storage::Storage(fs::path dir, uint64_t max_size) : dir_(std::move(dir)), max_size_(max_size) {
  std::error_code ec;
  if (dir_.empty()) {
    unwritable_reason_ = "no directory given";
    return;
  }
  fs::path abs = fs::absolute(dir_, ec);
  if (!ec) dir_ = abs.lexically_normal();
  fs::create_directories(dir_ / "v1", ec);
  if (ec) {
    unwritable_reason_ = ec.message();
    return;
  }
  // Prove we can create files here (root ignores mode bits; read-only mounts
  // and ACLs do not show in the mode either).
  fs::path probe = dir_ / temp_name(".probe");
  if (int err = write_new_file(probe, {})) {
    unwritable_reason_ = std::strerror(err);
    return;
  }
  ::unlink(probe.c_str());
  fs::path tag = dir_ / "CACHEDIR.TAG";
  if (::access(tag.c_str(), F_OK) != 0) {
    if (int err = write_atomically(tag, kCacheDirTag)) {
      unwritable_reason_ = std::strerror(err);
      return;
    }
  }
  writable_ = true;
}

fs::path Storage::entry_path(std::string_view kind, std::string_view key) const {
  std::string k(key);
  return dir_ / "v1" / std::string(kind) / k.substr(0, 2) / k;
}

void Storage::warn_if_unwritable() const {
  if (!writable_) warn_unwritable_once(dir_, unwritable_reason_);
}

void Storage::mark_unwritable(const std::string& reason) {
  writable_ = false;
  unwritable_reason_ = reason;
}

Lookup Storage::get(std::string_view kind, std::string_view key) {
  Lookup result;
  if (!valid_name(kind, 1) || !valid_name(key, 3)) return result;
  fs::path path = entry_path(kind, key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return result;  // ENOENT, or unreadable: a miss either way

  std::string bytes;
  ReadStatus rs = read_whole(fd, bytes);
  if (rs == ReadStatus::Missing) {
    ::close(fd);
    return result;
  }
  Result<Entry> decoded = rs == ReadStatus::TooLarge
                              ? Result<Entry>(Error::failure("larger than any entry can be"))
                              : decode_entry(bytes);
  if (decoded) {
    ::futimens(fd, nullptr);  // LRU clock: now. Fails harmlessly when not ours.
    ::close(fd);
    result.status = LookupStatus::Hit;
    result.entry = std::move(*decoded);
    return result;
  }
  result.status = LookupStatus::Corrupt;
  result.problem = decoded.error().message;
  if (writable_) {
    // Remove it unless another process has meanwhile renamed a new entry into
    // its place (then the name no longer points at the file we read).
    struct stat ours = {}, now = {};
    if (::fstat(fd, &ours) == 0 && ::stat(path.c_str(), &now) == 0 && ours.st_ino == now.st_ino &&
        ours.st_dev == now.st_dev)
      ::unlink(path.c_str());
  }
  ::close(fd);
  return result;
}

bool Storage::put(std::string_view kind, std::string_view key, const Entry& entry) {
  if (!valid_name(kind, 1) || !valid_name(key, 3)) return false;
  if (!writable_) {
    warn_unwritable_once(dir_, unwritable_reason_);
    return false;
  }
  if (payload_size(entry) > kMaxPayloadSize) return false;  // too big to cache; the cache is fine
  return put_encoded(kind, key, encode_entry(entry));
}

bool Storage::put_encoded(std::string_view kind, std::string_view key, std::string_view bytes) {
  if (!valid_name(kind, 1) || !valid_name(key, 3)) return false;
  if (!writable_) {
    warn_unwritable_once(dir_, unwritable_reason_);
    return false;
  }
  fs::path target = entry_path(kind, key);
  int err = 0;
  // Twice: `cache clear` in another process may remove the directory between
  // our mkdir and our create or rename.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      mark_unwritable(ec.message());
      warn_unwritable_once(dir_, unwritable_reason_);
      return false;
    }
    err = write_atomically(target, bytes);
    if (err != ENOENT) break;
  }
  if (err == 0) return true;
  mark_unwritable(std::strerror(err));
  warn_unwritable_once(dir_, unwritable_reason_);
  return false;
}

uint64_t payload_size(const Entry& entry) {
  uint64_t size = 16 + entry.metadata.size();
  for (const auto& f : entry.files) size += 16 + f.name.size() + f.data.size();
  return size;
}

fs::path default_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  if (std::string d = env("OFFLOAD_BUILD_CACHE_DIR"); !d.empty()) return d;
  // XDG: a relative $XDG_CACHE_HOME is invalid and ignored.
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty() && fs::path(x).is_absolute())
    return fs::path(x) / "offload-build";
  std::string home = env("HOME");
  if (home.empty()) {
    if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) home = pw->pw_dir;
  }
  if (home.empty())
    return fs::temp_directory_path() / fmt::format("offload-build-cache-{}", ::getuid());
  return fs::path(home) / ".cache" / "offload-build";
}

}  // namespace ob::cache
