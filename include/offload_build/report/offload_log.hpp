// Reading libomptarget's LIBOMPTARGET_INFO log: proof that offload happened.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ob::report {

struct KernelLaunch {
  int device = -1;
  std::string kernel;   // e.g. __omp_offloading_fe00_a7209a_main_l6
  std::string blocks;   // "[1,1,1]"
  std::string threads;  // "[1,1,1]"
};

struct OffloadSummary {
  std::vector<KernelLaunch> launches;
  uint64_t bytes_to_device = 0;
  uint64_t bytes_from_device = 0;
  size_t copies_to_device = 0;
  size_t copies_from_device = 0;
};

// True for a line the offload runtime printed because of LIBOMPTARGET_INFO
// ("omptarget device 0 info: ...", "\"PluginInterface\" device 0 info: ...").
bool is_runtime_info_line(std::string_view line);

// Fold one line of the runtime's stderr into the summary (other lines are ignored).
void accumulate(OffloadSummary& summary, std::string_view line);

OffloadSummary parse_offload_log(std::string_view text);

// One short human summary, e.g.
//   "offload: 1 kernel launch on device 0 (__omp_offloading_..._main_l6); 8.0 MiB to device in 2 copies, 4.0 MiB from device in 1 copy"
std::string format_summary(const OffloadSummary& summary);

}  // namespace ob::report
