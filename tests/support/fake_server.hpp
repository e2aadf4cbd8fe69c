// A scripted server on 127.0.0.1 (a free port) for hostile-remote tests: a
// thread accepts connections and runs `handler` on each, on its own thread;
// the handler reads requests (a Redis command, an HTTP head) and answers with
// any bytes, trickled or endless. Bounded lifetime: everything stops when the
// object goes or `lifetime` has passed, whichever comes first (each wait is a
// poll of at most 50 ms that checks for that). Nothing touches another address.
// bytes_sent() counts what the handlers got out to the clients: a bound on
// what a client read that does not depend on how fast anything ran.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "servers.hpp"

namespace ob::test {

class FakeConnection {
 public:
  using Clock = std::chrono::steady_clock;
  FakeConnection(int fd, const std::atomic<bool>& stop, Clock::time_point end,
                 std::atomic<uint64_t>* sent = nullptr)
      : fd_(fd), stop_(stop), end_(end), sent_(sent) {}

  bool stopping() const { return stop_ || Clock::now() >= end_; }

  // One Redis command (an array of bulk strings): its words; empty when the
  // client went away or the server stops.
  std::vector<std::string> read_redis_command() {
    std::string header;
    if (!read_line(header) || header.size() < 2 || header[0] != '*') return {};
    std::vector<std::string> words(std::stoul(header.substr(1)));
    for (auto& w : words) {
      std::string len;
      if (!read_line(len) || len.size() < 2 || len[0] != '$') return {};
      if (!read_exact(std::stoul(len.substr(1)) + 2, w)) return {};
      w.resize(w.size() - 2);
    }
    return words;
  }

  // An HTTP request's head (up to the blank line): its first line ("GET /x
  // HTTP/1.1"); empty when the client went away. The body is not read.
  std::string read_http_head() {
    std::string first, line;
    if (!read_line(first)) return {};
    for (;;) {
      if (!read_line(line)) return {};
      if (line.empty()) return first;
    }
  }

  // Read and drop `n` bytes (a request body).
  bool skip(size_t n) {
    std::string ignored;
    return read_exact(n, ignored);
  }

  // The whole of `bytes`; false when the client went away or the server stops.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      if (stopping()) return false;
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return false;
      if (sent_) *sent_ += static_cast<uint64_t>(n);
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // One byte of `bytes` per `every`; false when cut short.
  bool trickle(std::string_view bytes, std::chrono::milliseconds every) {
    for (char c : bytes) {
      if (!send(std::string_view(&c, 1))) return false;
      for (auto until = Clock::now() + every; Clock::now() < until;) {
        if (stopping() || closed()) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    return true;
  }

  // `chunk` again and again, as fast as the client reads, until it goes away.
  void flood(std::string_view chunk) {
    while (send(chunk)) {
    }
  }

  // Hold the connection open, answering nothing, until the client goes away.
  void hold() {
    while (!stopping() && !closed()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

 private:
  // True when the client closed its end (what it sent since is dropped).
  bool closed() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) buffer_.append(buf, static_cast<size_t>(n));
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
  }
  bool fill() {
    while (!stopping()) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[65536];
      ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return false;
      buffer_.append(buf, static_cast<size_t>(n));
      return true;
    }
    return false;
  }
  // A line without its CRLF.
  bool read_line(std::string& out) {
    size_t nl;
    while ((nl = buffer_.find("\r\n")) == std::string::npos)
      if (!fill()) return false;
    out = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 2);
    return true;
  }
  bool read_exact(size_t n, std::string& out) {
    while (buffer_.size() < n)
      if (!fill()) return false;
    out = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return true;
  }

  int fd_;
  const std::atomic<bool>& stop_;
  Clock::time_point end_;
  std::atomic<uint64_t>* sent_;  // the server's count of bytes sent, or none
  std::string buffer_;
};

class FakeServer {
 public:
  using Handler = std::function<void(FakeConnection&)>;
  explicit FakeServer(Handler handler, std::chrono::seconds lifetime = std::chrono::seconds(90))
      : handler_(std::move(handler)), end_(FakeConnection::Clock::now() + lifetime) {
    fd_ = listen_on_loopback(port_, "FakeServer");
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FakeServer() { stop(); }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  int port() const { return port_; }
  int connections() const { return connections_; }
  // The bytes sent to clients so far, all connections together (stop() first
  // for the final count: a handler may still be sending).
  uint64_t bytes_sent() const { return bytes_sent_; }
  void stop() {
    stop_ = true;
    if (acceptor_.joinable()) acceptor_.join();
    std::lock_guard lock(mu_);
    for (auto& t : workers_) t.join();
    workers_.clear();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  void accept_loop() {
    while (!stop_ && FakeConnection::Clock::now() < end_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++connections_;
      std::lock_guard lock(mu_);
      workers_.emplace_back([this, c] {
        FakeConnection conn(c, stop_, end_, &bytes_sent_);
        try {
          handler_(conn);
        } catch (...) {  // a request it cannot parse (std::stoul): the connection ends
        }
        ::close(c);
      });
    }
  }

  Handler handler_;
  FakeConnection::Clock::time_point end_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<uint64_t> bytes_sent_{0};
  std::mutex mu_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

}  // namespace ob::test
