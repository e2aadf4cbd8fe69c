// A GNU make jobserver client: under `make -jN`, MAKEFLAGS names a pipe (or a
// fifo) holding N-1 tokens; a process may run one job on the token it was
// started with, and must take a token for every further job it runs at the
// same time, and give it back after. offload-build asks for tokens without
// blocking (exec/executor.cpp waits for its own children instead), so it
// never deadlocks with other clients of the same jobserver.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ob::process {

struct JobserverAuth {
  enum class Style { Pipe, Fifo };
  Style style = Style::Pipe;
  int read_fd = -1;   // Pipe
  int write_fd = -1;  // Pipe
  std::string fifo;   // Fifo: path of the named pipe
};

// The last --jobserver-auth= (or the older --jobserver-fds=) in MAKEFLAGS:
// "R,W" for a pipe, "fifo:PATH" for a named pipe. nullopt when there is none
// (make without -j, or not under make) or it cannot be read. A leading word
// of single-letter flags ("kw") is not an option and is skipped.
std::optional<JobserverAuth> parse_makeflags(std::string_view makeflags);

class Jobserver {
 public:
  // Connect to the jobserver `auth` names. nullptr when it cannot be reached:
  // the descriptors are not open in this process (make passes them only to
  // recipes it knows run make, such as lines starting with '+') or the fifo
  // cannot be opened.
  static std::unique_ptr<Jobserver> connect(const JobserverAuth& auth);
  ~Jobserver();  // gives back every token still held
  Jobserver(const Jobserver&) = delete;
  Jobserver& operator=(const Jobserver&) = delete;

  // Take one token if one is free now; never blocks.
  bool try_acquire();
  // Give back the most recently taken token.
  void release();
  size_t held() const { return tokens_.size(); }

 private:
  Jobserver(int read_fd, int write_fd, bool own_write);
  int read_fd_;   // our own non-blocking descriptor for reading tokens
  int write_fd_;
  bool own_write_;
  std::vector<char> tokens_;  // bytes taken, written back as they were
};

// What the environment says about running jobs in parallel.
struct JobserverSetup {
  std::unique_ptr<Jobserver> jobserver;  // set: take a token per extra job
  // Under make -jN whose jobserver this process cannot reach: run one job at
  // a time (on the token make started us with), never N x jobs.
  bool serial = false;
};
JobserverSetup jobserver_from_environment();

}  // namespace ob::process
