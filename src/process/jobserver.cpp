#include "offload_build/process/jobserver.hpp"
#include "offload_build/config/config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>

#include "offload_build/util/strings.hpp"

namespace ob::process {

namespace {

// MAKEFLAGS words; a backslash keeps the next character (an escaped space).
std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      cur += s[++i];
    } else if (s[i] == ' ' || s[i] == '\t') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += s[i];
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool is_open_fifo(int fd) {
  struct stat st {};
  return fd >= 0 && fcntl(fd, F_GETFD) != -1 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

}  // namespace

std::optional<JobserverAuth> parse_makeflags(std::string_view makeflags) {
  std::optional<std::string> value;
  for (const auto& w : words(makeflags)) {
    for (std::string_view opt : {"--jobserver-auth=", "--jobserver-fds="})
      if (util::starts_with(w, opt)) value = w.substr(opt.size());
  }
  if (!value) return std::nullopt;
  JobserverAuth auth;
  if (util::starts_with(*value, "fifo:")) {
    auth.style = JobserverAuth::Style::Fifo;
    auth.fifo = value->substr(5);
    if (auth.fifo.empty()) return std::nullopt;
    return auth;
  }
  const auto comma = value->find(',');
  if (comma == std::string::npos) return std::nullopt;
  auto r = to_int(std::string_view(*value).substr(0, comma));
  auto w = to_int(std::string_view(*value).substr(comma + 1));
  if (!r || !w) return std::nullopt;
  auth.read_fd = *r;
  auth.write_fd = *w;
  return auth;
}

Jobserver::Jobserver(int read_fd, int write_fd, bool own_write)
    : read_fd_(read_fd), write_fd_(write_fd), own_write_(own_write) {}

std::unique_ptr<Jobserver> Jobserver::connect(const JobserverAuth& auth) {
  if (auth.style == JobserverAuth::Style::Fifo) {
    int fd = open(auth.fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return nullptr;
    if (!is_open_fifo(fd)) {
      close(fd);
      return nullptr;
    }
    return std::unique_ptr<Jobserver>(new Jobserver(fd, fd, true));
  }
  if (!is_open_fifo(auth.read_fd) || !is_open_fifo(auth.write_fd)) return nullptr;
  // Our own open file description of the same pipe, non-blocking: setting
  // O_NONBLOCK on the inherited one would change it for make and every sibling.
  const std::string self = "/proc/self/fd/" + std::to_string(auth.read_fd);
  int fd = open(self.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return nullptr;
  return std::unique_ptr<Jobserver>(new Jobserver(fd, auth.write_fd, false));
}

Jobserver::~Jobserver() {
  while (!tokens_.empty()) release();
  close(read_fd_);
  if (own_write_ && write_fd_ != read_fd_) close(write_fd_);
}

bool Jobserver::try_acquire() {
  char token = 0;
  for (;;) {
    ssize_t n = read(read_fd_, &token, 1);
    if (n == 1) {
      tokens_.push_back(token);
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;  // none free now (EAGAIN), or the jobserver is gone
  }
}

void Jobserver::release() {
  if (tokens_.empty()) return;
  const char token = tokens_.back();
  tokens_.pop_back();
  while (write(write_fd_, &token, 1) < 0 && errno == EINTR) {
  }
}

JobserverSetup jobserver_from_environment() {
  JobserverSetup setup;
  const char* flags = config::env_or_null("MAKEFLAGS");
  if (!flags) return setup;
  auto auth = parse_makeflags(flags);
  if (!auth) return setup;
  setup.jobserver = Jobserver::connect(*auth);
  setup.serial = !setup.jobserver;
  return setup;
}

}  // namespace ob::process
