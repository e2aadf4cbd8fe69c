// Ctrl-C and SIGTERM: the handlers record the signal and wake whoever waits
// for children, so the executor can stop them, remove partial outputs, exit 130.
#pragma once

namespace ob::process {

// Install SIGINT/SIGTERM/SIGCHLD handlers (idempotent).
void install_signal_handlers();
bool interrupted();
// The signal that interrupted (SIGINT or SIGTERM, the last one); 0 when none did.
int interrupt_signal();
// A descriptor that becomes readable whenever a child exits or a signal arrives.
int wakeup_fd();
// Consume pending wake-ups.
void drain_wakeups();

}  // namespace ob::process
