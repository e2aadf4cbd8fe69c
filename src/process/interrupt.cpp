#include "offload_build/process/interrupt.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <csignal>

namespace ob::process {

namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};  // the last SIGINT or SIGTERM
int g_pipe[2] = {-1, -1};

extern "C" void on_signal(int sig) {
  int saved = errno;
  if (sig == SIGINT || sig == SIGTERM) {
    g_interrupted = true;
    g_signal = sig;
  }
  if (g_pipe[1] >= 0) {
    char c = 0;
    [[maybe_unused]] ssize_t n = write(g_pipe[1], &c, 1);
  }
  errno = saved;
}

}  // namespace

void install_signal_handlers() {
  if (g_pipe[0] >= 0) return;
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NOCLDSTOP;  // no SA_RESTART: a blocked wait returns EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGCHLD, &sa, nullptr);
}

bool interrupted() { return g_interrupted; }

int interrupt_signal() { return g_signal; }

int wakeup_fd() { return g_pipe[0]; }

void drain_wakeups() {
  char buf[256];
  while (g_pipe[0] >= 0 && read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

}  // namespace ob::process
