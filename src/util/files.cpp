#include "offload_build/util/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include <fmt/core.h>

namespace ob::util {

namespace fs = std::filesystem;

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

// A descriptor closed on destruction.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  size_t u = 0;
  // Move up while the rounded value would print as 1024.0 or more.
  while (u + 1 < std::size(kUnits) && v >= 1023.95) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

Result<std::string> read_regular_file(const fs::path& path, uint64_t max, std::string_view what,
                                      int* open_errno) {
  if (open_errno) *open_errno = 0;
  const std::string name = path.string();
  auto cannot = [&](int err) {
    return Error::usage(fmt::format("cannot read {}: {}", name, std::strerror(err)));
  };
  auto too_large = [&](std::string size) {
    return Error::usage(fmt::format("{} is {}; {} is at most {}", name, size, what, format_bytes(max)));
  };
  FdCloser fd{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (fd.fd < 0) {
    const int err = errno;
    if (open_errno) *open_errno = err;
    return cannot(err);
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) return cannot(errno);
  if (S_ISDIR(st.st_mode)) return cannot(EISDIR);
  if (!S_ISREG(st.st_mode))
    return Error::usage(fmt::format("{}: not a regular file ({}); {} must be a regular file", name,
                                    kind_of(st.st_mode), what));
  if (uint64_t(st.st_size) > max) return too_large(format_bytes(uint64_t(st.st_size)));
  // The size is a hint: read until the end, but never more than max + 1 bytes.
  std::string out(static_cast<size_t>(std::max<off_t>(st.st_size, 0)) + 1, '\0');
  size_t got = 0;
  for (;;) {
    if (got == out.size()) {
      if (got > max) return too_large("over " + format_bytes(max));
      out.resize(std::min<uint64_t>(max + 1, std::max<uint64_t>(out.size() * 2, 65536)));
    }
    ssize_t n = ::read(fd.fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return cannot(errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

std::optional<std::string> read_file(const fs::path& path, uint64_t max) {
  auto r = read_regular_file(path, max, "a file");
  if (!r) return std::nullopt;
  return std::move(*r);
}

Result<void> write_file_atomic(const fs::path& target, std::string_view data) {
  static std::atomic<unsigned> counter{0};
  const fs::path tmp = target.parent_path() / fmt::format(".{}.ob-tmp-{}-w{}", target.filename().string(),
                                                          getpid(), counter++);
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return Error::failure("cannot write a temporary file next to it");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    return Error::failure(why);
  }
  return {};
}

}  // namespace ob::util
