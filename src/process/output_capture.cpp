#include "offload_build/process/output_capture.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace ob::process {

OutputCapture::OutputCapture() : fd_(memfd_create("offload-build-job-output", MFD_CLOEXEC)) {}

OutputCapture::~OutputCapture() {
  if (fd_ >= 0) close(fd_);
}

OutputCapture::OutputCapture(OutputCapture&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

OutputCapture& OutputCapture::operator=(OutputCapture&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

std::string OutputCapture::take() {
  std::string text;
  if (fd_ < 0) return text;
  char buf[8192];
  for (off_t at = 0;;) {
    const ssize_t n = pread(fd_, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  close(fd_);
  fd_ = -1;
  return text;
}

}  // namespace ob::process
