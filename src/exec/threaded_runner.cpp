#include "offload_build/exec/threaded_runner.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <system_error>

#include <fmt/core.h>

#include "offload_build/process/interrupt.hpp"

namespace ob::exec {

namespace {

// Whether the eventfd `fd` was written to since (and reset it).
bool take(int fd) {
  uint64_t count = 0;
  return fd >= 0 && read(fd, &count, sizeof count) == sizeof count;
}

void poke(int fd) {
  const uint64_t one = 1;
  if (fd >= 0) {
    ssize_t ignored = write(fd, &one, sizeof one);  // only fails when the count is full
    (void)ignored;
  }
}

}  // namespace

ThreadedRunner::ThreadedRunner()
    : done_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  process::install_signal_handlers();
}

ThreadedRunner::~ThreadedRunner() {
  join_all();
  for (int fd : {done_fd_, wake_fd_})
    if (fd >= 0) close(fd);
}

Result<void> ThreadedRunner::start(const JobView& view) {
  auto run = work(view);
  const plan::JobId id = view.job.id;
  std::lock_guard lock(mu_);
  try {
    threads_[id] = std::thread([this, run = std::move(run)] {
      Completion c = run();
      {
        std::lock_guard done_lock(mu_);
        done_.push_back(std::move(c));
      }
      poke(done_fd_);
    });
  } catch (const std::system_error& e) {
    threads_.erase(id);
    return Error::failure(fmt::format("cannot start a thread for job {}: {}", id, e.what()));
  }
  ++running_;
  return {};
}

std::optional<CommandRunner::Completion> ThreadedRunner::wait_any() {
  for (;;) {
    std::thread ended;
    std::optional<Completion> c;
    {
      std::lock_guard lock(mu_);
      if (!done_.empty()) {
        c = std::move(done_.front());
        done_.pop_front();
        if (running_ > 0) --running_;
        if (auto t = threads_.find(c->job); t != threads_.end()) {
          ended = std::move(t->second);
          threads_.erase(t);
        }
      } else if (running_ == 0) {
        return std::nullopt;
      }
    }
    if (c) {
      if (ended.joinable()) ended.join();  // it has pushed its completion: its last act
      return c;
    }
    if (process::interrupted() || take(wake_fd_)) return std::nullopt;
    pollfd pfd[3] = {{process::wakeup_fd(), POLLIN, 0}, {wake_fd_, POLLIN, 0}, {done_fd_, POLLIN, 0}};
    poll(pfd, 3, 200);  // the timeout only guards against a lost wake-up
    process::drain_wakeups();
    take(done_fd_);
  }
}

void ThreadedRunner::wake() { poke(wake_fd_); }

size_t ThreadedRunner::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

bool ThreadedRunner::any_thread() const {
  std::lock_guard lock(mu_);
  return !threads_.empty();
}

void ThreadedRunner::join_all() {
  std::map<plan::JobId, std::thread> threads;
  {
    std::lock_guard lock(mu_);
    threads.swap(threads_);
  }
  for (auto& [id, t] : threads)
    if (t.joinable()) t.join();
  std::lock_guard lock(mu_);
  done_.clear();
  running_ = 0;
}

}  // namespace ob::exec
