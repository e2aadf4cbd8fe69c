// Files inside the cache directory, opened relative to verified directory fds
// and never through a symlink (private to src/storage/).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <string_view>

#include "offload_build/storage/storage.hpp"

namespace ob::storage::detail {

// A file descriptor closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Why a file or directory of the cache with this stat is not to be trusted
// (another user could have written it); empty when it is.
std::string distrust(const struct stat& st, bool shared);

// The directory `name` under `dirfd`, opened without following a symlink and
// checked with distrust(). `create`: made (mode 0777 less the umask) when
// missing. An invalid Fd on failure; `why` says why when it is a trust problem
// (empty when the directory is simply missing or unreadable).
Fd open_dir_at(int dirfd, const std::string& name, bool create, const Trust& trust,
               std::string& why);

// "<name>.tmp.<pid>.<16 random hex digits>", from getrandom(2).
std::string temp_name(std::string_view name);

// Write `bytes` to `name` in `dirfd` atomically (new temp file, O_EXCL |
// O_NOFOLLOW, renameat). Returns 0 or an errno value; nothing is left behind
// on failure. The file gets mode 0666 less the shared umask, or less the
// process umask.
int write_at(int dirfd, const std::string& name, std::string_view bytes,
             const std::optional<unsigned>& umask);

// Read the regular file `name` in `dirfd` (O_NOFOLLOW). nullopt when missing,
// not regular, or larger than `max`; `st` gets its stat.
std::optional<std::string> read_at(int dirfd, const std::string& name, uint64_t max,
                                   struct stat& st);

}  // namespace ob::storage::detail
