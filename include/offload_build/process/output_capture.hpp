// Where a child's stdout and stderr go when its output is buffered (as
// ninja does, so that it cannot tear a terminal status line): one memory
// file both share, so their order is kept, read back whole once the child
// ended. Move-only; closes its file.
#pragma once

#include <string>

namespace ob::process {

class OutputCapture {
 public:
  OutputCapture();  // fd() < 0 when no memory file could be made
  ~OutputCapture();
  OutputCapture(OutputCapture&& other) noexcept;
  OutputCapture& operator=(OutputCapture&& other) noexcept;
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;

  // The descriptor to give the child as stdout and stderr (Stdio{-1, fd, fd}).
  int fd() const { return fd_; }
  // What the child wrote; the file is closed.
  std::string take();

 private:
  int fd_ = -1;
};

}  // namespace ob::process
