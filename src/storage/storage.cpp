// Storage: opening the cache directory, get and atomic put, the one warning.
#include "offload_build/storage/storage.hpp"
#include "offload_build/config/config.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"
#include "safe_dir.hpp"

namespace ob::storage {

namespace {

constexpr uint64_t kMaxSigningKeyFile = 64 << 10;  // 64 KiB: a key is one line

constexpr std::string_view kCacheDirTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by offload-build.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n";

std::atomic<bool> g_warned{false};

// One write(2), so lines from concurrent processes do not interleave.
void warn_once(const std::string& line) {
  if (g_warned.exchange(true)) return;
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

void warn_unwritable_once(const fs::path& dir, const std::string& reason) {
  warn_once(fmt::format(
      "offload-build: warning: cache directory {} is not writable ({}); building without "
      "storing results\n",
      dir.string(), reason));
}

void warn_untrusted_once(const fs::path& dir, const std::string& reason) {
  warn_once(fmt::format(
      "offload-build: warning: not using cache directory {}: {}; building without the cache "
      "(see \"Trust\" in docs/CACHE.md)\n",
      dir.string(), reason));
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

}  // namespace

Trust Trust::from_config(const config::Config& c) {
  Trust t;
  const std::string umask = c.text("cache_umask"), key = c.text("signing_key"),
                    key_file = c.text("signing_key_file");
  if (!umask.empty()) {
    t.umask = config::umask_value(umask);
    if (!t.umask)
      t.problem = fmt::format("OFFLOAD_BUILD_CACHE_UMASK={} is not an octal umask such as 002",
                              util::shorten(umask, 40));
  }
  if (!key.empty()) {
    t.signing_key = key;
  } else if (const char* file = key_file.c_str(); *file) {
    // A key is a line: a device, a FIFO or a huge file is refused unread.
    auto read = util::read_regular_file(file, kMaxSigningKeyFile, "a signing key file");
    std::string text = read ? std::move(*read) : std::string();
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (text.empty())
      t.problem = fmt::format("the signing key file {} (OFFLOAD_BUILD_SIGNING_KEY_FILE) cannot "
                              "be read or is empty{}",
                              util::shorten(file, 200),
                              read ? "" : " (" + util::shorten(read.error().message, 300) + ")");
    t.signing_key = text;
  }
  return t;
}

Storage::Storage(fs::path dir, uint64_t max_size, Trust trust)
    : dir_(std::move(dir)), max_size_(max_size), trust_(std::move(trust)) {
  std::error_code ec;
  if (dir_.empty()) {
    unwritable_reason_ = "no directory given";
    return;
  }
  fs::path abs = fs::absolute(dir_, ec);
  if (!ec) dir_ = abs.lexically_normal();
  if (!trust_.problem.empty()) {
    distrust_ = trust_.problem;
    return;
  }
  fs::create_directories(dir_, ec);
  if (trust_.umask && !ec) {
    // A fresh shared root gets the shared mode too.
    struct stat st {};
    if (::stat(dir_.c_str(), &st) == 0 && st.st_uid == ::geteuid() && st.st_nlink == 2)
      ::chmod(dir_.c_str(), (0777 & ~*trust_.umask) | (st.st_mode & S_ISGID));
  }
  check_trust();
  if (!distrust_.empty()) return;
  detail::Fd root(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string why;
  detail::Fd v1 = root ? detail::open_dir_at(root.get(), "v1", true, trust_, why) : detail::Fd();
  if (!why.empty()) {
    distrust_ = why;
    return;
  }
  if (!v1) {
    unwritable_reason_ = std::strerror(errno);
    return;
  }
  // Ask the kernel whether we may create files here (the mode bits alone
  // do not say: root ignores them; read-only mounts and ACLs do not show in
  // them), without creating one: a launcher cache hit opens the cache, and a
  // new inode costs more than the rest of its file operations.
  if (::faccessat(root.get(), ".", W_OK | X_OK, 0) != 0) {
    unwritable_reason_ = std::strerror(errno);
    return;
  }
  struct stat st {};
  if (::fstatat(root.get(), "CACHEDIR.TAG", &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (int err = detail::write_at(root.get(), "CACHEDIR.TAG", kCacheDirTag, trust_.umask)) {
      unwritable_reason_ = std::strerror(err);
      return;
    }
  }
  writable_ = true;
}

// The root itself may be reached through a symlink (the user named it), but
// must belong to us (or root) and be writable by no one else, unless shared.
void Storage::check_trust() {
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0) return;  // missing: nothing to trust or use
  if (!S_ISDIR(st.st_mode)) {
    distrust_ = "it is not a directory";
    return;
  }
  distrust_ = detail::distrust(st, shared());
  if (!distrust_.empty()) distrust_ = "the directory " + distrust_;
}

fs::path Storage::entry_path(std::string_view kind, std::string_view key) const {
  std::string k(key);
  return dir_ / "v1" / std::string(kind) / k.substr(0, 2) / k;
}

void Storage::warn_if_unwritable() const {
  if (!distrust_.empty())
    warn_untrusted_once(dir_, distrust_);
  else if (!writable_)
    warn_unwritable_once(dir_, unwritable_reason_);
}

void Storage::mark_unwritable(const std::string& reason) {
  writable_ = false;
  unwritable_reason_ = reason;
}

// The shard directory of `key`, each level opened without following symlinks
// and checked; a level another user could have written makes the whole cache
// untrusted from then on (warned once).
detail::Fd Storage::open_shard(std::string_view kind, std::string_view key, bool create) {
  if (!distrust_.empty()) return detail::Fd();
  detail::Fd dir(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string why;
  for (const std::string& name : {std::string("v1"), std::string(kind), std::string(key.substr(0, 2))}) {
    if (!dir) break;
    dir = detail::open_dir_at(dir.get(), name, create, trust_, why);
    if (!why.empty()) {
      distrust_ = why;
      writable_ = false;
      warn_untrusted_once(dir_, distrust_);
      return detail::Fd();
    }
  }
  return dir;
}

namespace {

// An entry file opened for reading, whole (a shorter read when it shrank
// under us: decode says "truncated"); nullopt on a read error.
std::optional<std::string> read_open_entry(int fd, const struct stat& st) {
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

}  // namespace

std::optional<std::string> Storage::get_encoded(std::string_view kind, std::string_view key) {
  if (!valid_name(kind, 1) || !valid_name(key, 3)) return std::nullopt;
  detail::Fd shard = open_shard(kind, key, false);
  if (!shard) return std::nullopt;
  detail::Fd fd(::openat(shard.get(), std::string(key).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat ours {};
  if (!fd || ::fstat(fd.get(), &ours) != 0 || !S_ISREG(ours.st_mode) || !detail::distrust(ours, shared()).empty() ||
      uint64_t(ours.st_size) > kHeaderSize + kMaxPayloadSize)
    return std::nullopt;
  return read_open_entry(fd.get(), ours);
}

Lookup Storage::get(std::string_view kind, std::string_view key) {
  Lookup result;
  if (!valid_name(kind, 1) || !valid_name(key, 3)) return result;
  detail::Fd shard = open_shard(kind, key, false);
  if (!shard) return result;
  const std::string name(key);
  detail::Fd fd(::openat(shard.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    if (errno == ELOOP) {  // a symlink planted in the cache: never followed, removed
      result.status = LookupStatus::Corrupt;
      result.problem = "a symbolic link, not an entry";
      if (writable_) ::unlinkat(shard.get(), name.c_str(), 0);
    }
    return result;  // ENOENT, or unreadable: a miss either way
  }
  struct stat ours {};
  if (::fstat(fd.get(), &ours) != 0 || !S_ISREG(ours.st_mode)) return result;
  Result<Entry> decoded = Error::failure("");
  if (std::string d = detail::distrust(ours, shared()); !d.empty()) {
    decoded = Error::failure("the entry " + d);
  } else if (uint64_t(ours.st_size) > kHeaderSize + kMaxPayloadSize) {
    decoded = Error::failure("larger than any entry can be");
  } else {
    auto bytes = read_open_entry(fd.get(), ours);
    if (!bytes) return result;
    decoded = decode_entry(*bytes, kind, key, trust_.signing_key);
  }
  if (decoded) {
    ::futimens(fd.get(), nullptr);  // LRU clock: now. Fails harmlessly when not ours.
    result.status = LookupStatus::Hit;
    result.entry = std::move(*decoded);
    return result;
  }
  result.status = LookupStatus::Corrupt;
  result.problem = decoded.error().message;
  if (writable_) {
    // Remove it unless another process has meanwhile renamed a new entry into
    // its place (then the name no longer points at the file we read).
    struct stat now {};
    if (::fstatat(shard.get(), name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
        ours.st_ino == now.st_ino && ours.st_dev == now.st_dev)
      ::unlinkat(shard.get(), name.c_str(), 0);
  }
  return result;
}

void Storage::discard(std::string_view kind, std::string_view key) {
  if (!writable_ || !valid_name(kind, 1) || !valid_name(key, 3)) return;
  detail::Fd shard = open_shard(kind, key, false);
  if (shard) ::unlinkat(shard.get(), std::string(key).c_str(), 0);
}

bool Storage::put(std::string_view kind, std::string_view key, const Entry& entry) {
  if (!valid_name(kind, 1) || !valid_name(key, 3)) return false;
  if (!distrust_.empty()) return false;
  if (!writable_) {
    warn_unwritable_once(dir_, unwritable_reason_);
    return false;
  }
  if (payload_size(entry) > kMaxPayloadSize) return false;  // too big to cache; the cache is fine
  return put_encoded(kind, key, encode_entry(entry, kind, key, trust_.signing_key));
}

bool Storage::put_encoded(std::string_view kind, std::string_view key, std::string_view bytes) {
  if (!valid_name(kind, 1) || !valid_name(key, 3)) return false;
  if (!distrust_.empty()) return false;
  if (!writable_) {
    warn_unwritable_once(dir_, unwritable_reason_);
    return false;
  }
  int err = 0;
  // Twice: `cache clear` in another process may remove the directory between
  // our mkdir and our create or rename.
  for (int attempt = 0; attempt < 2; ++attempt) {
    detail::Fd shard = open_shard(kind, key, true);
    if (!distrust_.empty()) return false;
    if (!shard) {
      err = errno ? errno : EIO;
      if (err == ENOENT) continue;
      break;
    }
    err = detail::write_at(shard.get(), std::string(key), bytes, trust_.umask);
    if (err != ENOENT) break;
  }
  if (err == 0) {
    account(bytes.size(), std::nullopt);
    return true;
  }
  mark_unwritable(std::strerror(err));
  warn_unwritable_once(dir_, unwritable_reason_);
  return false;
}

uint64_t payload_size(const Entry& entry) {
  uint64_t size = 16 + entry.metadata.size();
  for (const auto& f : entry.files) size += 16 + f.name.size() + f.data.size();
  return size;
}

std::optional<std::string> read_trusted_file(const fs::path& path, bool shared) {
  detail::Fd dir(::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!dir || ::fstat(dir.get(), &st) != 0 || !detail::distrust(st, shared).empty())
    return std::nullopt;
  auto text = detail::read_at(dir.get(), path.filename().string(), 64 << 20, st);
  if (!text || !detail::distrust(st, shared).empty()) return std::nullopt;
  return text;
}

bool write_file_atomically(const fs::path& dir, std::string_view name, std::string_view bytes,
                           std::optional<unsigned> umask) {
  detail::Fd parent(::open(dir.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent) return false;
  Trust trust;
  trust.umask = umask;
  std::string why;
  detail::Fd fd = detail::open_dir_at(parent.get(), dir.filename().string(), true, trust, why);
  return fd && detail::write_at(fd.get(), std::string(name), bytes, umask) == 0;
}

}  // namespace ob::storage
