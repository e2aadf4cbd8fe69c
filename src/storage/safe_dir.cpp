#include "safe_dir.hpp"

#include <fcntl.h>
#include <sys/random.h>

#include <atomic>
#include <cerrno>
#include <ctime>
#include <vector>

#include <fmt/format.h>

#include "offload_build/util/file_trust.hpp"

namespace ob::storage::detail {

std::string distrust(const struct stat& st, bool shared) { return util::distrust(st, shared); }

Fd open_dir_at(int dirfd, const std::string& name, bool create, const Trust& trust,
               std::string& why) {
  why.clear();
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  Fd fd(::openat(dirfd, name.c_str(), flags));
  bool made = false;
  if (!fd && errno == ENOENT && create) {
    if (::mkdirat(dirfd, name.c_str(), 0777) == 0) made = true;
    fd = Fd(::openat(dirfd, name.c_str(), flags));
  }
  if (!fd) {
    if (errno == ELOOP || errno == ENOTDIR) {
      struct stat st {};
      if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        why = name + " is a symbolic link";
      else if (errno != ENOENT)
        why = name + " is not a directory";
    }
    return Fd();
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Fd();
  if (made && trust.umask) {
    ::fchmod(fd.get(), (0777 & ~*trust.umask) | (st.st_mode & S_ISGID));
    ::fstat(fd.get(), &st);
  }
  if (std::string d = distrust(st, trust.umask.has_value()); !d.empty()) {
    why = name + " " + d;
    return Fd();
  }
  return fd;
}

std::string temp_name(std::string_view name) {
  uint64_t r = 0;
  if (::getrandom(&r, sizeof r, 0) != sizeof r) {
    // No entropy source: still unique per process and call; O_EXCL does the rest.
    static std::atomic<uint64_t> counter{0};
    r = (uint64_t(::getpid()) << 32) ^ uint64_t(::time(nullptr)) ^ (++counter << 48);
  }
  return fmt::format("{}.tmp.{}.{:016x}", name, ::getpid(), r);
}

int write_at(int dirfd, const std::string& name, std::string_view bytes,
             const std::optional<unsigned>& umask) {
  const std::string tmp = temp_name(name);
  const mode_t mode = umask ? (0666 & ~*umask) : 0666;
  int fd = ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return errno;
  if (umask) ::fchmod(fd, mode);  // exactly, whatever the process umask
  const char* p = bytes.data();
  size_t left = bytes.size();
  int err = 0;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // close() reports delayed write errors (ENOSPC, EDQUOT on network filesystems).
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0) err = errno;
  if (err != 0) ::unlinkat(dirfd, tmp.c_str(), 0);
  return err;
}

std::optional<std::string> read_at(int dirfd, const std::string& name, uint64_t max,
                                   struct stat& st) {
  Fd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return std::nullopt;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || uint64_t(st.st_size) > max)
    return std::nullopt;
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd.get(), out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;  // shrank under us: decode says "truncated"
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace ob::storage::detail
