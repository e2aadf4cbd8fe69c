// LIBOMPTARGET_INFO=-1 parsing, with logs captured from real runs (LLVM 22.1.8,
// host plugin) of samples/omp_saxpy.c and samples/rust_hostdevice.rs.
#include <catch2/catch.hpp>

#include "offload_build/report/offload_log.hpp"

using namespace ob::report;

namespace {

// clang -g -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu omp_saxpy.c;
// OMP_TARGET_OFFLOAD=MANDATORY LIBOMPTARGET_INFO=-1 ./s  (stderr)
constexpr const char* kSaxpyLog =
    R"(omptarget device 0 info: Entering OpenMP kernel at omp_saxpy.c:6:3 with 3 arguments:
omptarget device 0 info: tofrom(y[0:N])[4194304] 
omptarget device 0 info: firstprivate(a)[4] (implicit)
omptarget device 0 info: to(x[0:N])[4194304] 
omptarget device 0 info: Creating new map entry with HstPtrBase=0x000055ac765bc0b0, HstPtrBegin=0x000055ac765bc0b0, TgtAllocBegin=0x00007f21707ff010, TgtPtrBegin=0x00007f21707ff010, Size=4194304, DynRefCount=1, HoldRefCount=0, Name=y[0:N]
omptarget device 0 info: Copying data from host to device, HstPtr=0x000055ac765bc0b0, TgtPtr=0x00007f21707ff010, Size=4194304, Name=y[0:N]
omptarget device 0 info: Creating new map entry with HstPtrBase=0x000055ac761bc0b0, HstPtrBegin=0x000055ac761bc0b0, TgtAllocBegin=0x00007f21703fe010, TgtPtrBegin=0x00007f21703fe010, Size=4194304, DynRefCount=1, HoldRefCount=0, Name=x[0:N]
omptarget device 0 info: Copying data from host to device, HstPtr=0x000055ac761bc0b0, TgtPtr=0x00007f21703fe010, Size=4194304, Name=x[0:N]
omptarget device 0 info: Mapping exists with HstPtrBegin=0x000055ac765bc0b0, TgtPtrBegin=0x00007f21707ff010, Size=4194304, DynRefCount=1 (update suppressed), HoldRefCount=0
omptarget device 0 info: Mapping exists with HstPtrBegin=0x000055ac761bc0b0, TgtPtrBegin=0x00007f21703fe010, Size=4194304, DynRefCount=1 (update suppressed), HoldRefCount=0
"PluginInterface" device 0 info: Launching kernel __omp_offloading_fe00_a720e3_main_l6 with [1,1,1] blocks and [1,1,1] threads in Generic mode
omptarget device 0 info: Mapping exists with HstPtrBegin=0x000055ac761bc0b0, TgtPtrBegin=0x00007f21703fe010, Size=4194304, DynRefCount=0 (decremented, delayed deletion), HoldRefCount=0
omptarget device 0 info: Mapping exists with HstPtrBegin=0x000055ac765bc0b0, TgtPtrBegin=0x00007f21707ff010, Size=4194304, DynRefCount=0 (decremented, delayed deletion), HoldRefCount=0
omptarget device 0 info: Copying data from device to host, TgtPtr=0x00007f21707ff010, HstPtr=0x000055ac765bc0b0, Size=4194304, Name=y[0:N]
omptarget device 0 info: Removing map entry with HstPtrBegin=0x000055ac761bc0b0, TgtPtrBegin=0x00007f21703fe010, Size=4194304, Name=x[0:N]
omptarget device 0 info: Removing map entry with HstPtrBegin=0x000055ac765bc0b0, TgtPtrBegin=0x00007f21707ff010, Size=4194304, Name=y[0:N]
omptarget device 0 info: OpenMP Host-Device pointer mappings table empty
omptarget device 1 info: OpenMP Host-Device pointer mappings table empty
omptarget device 2 info: OpenMP Host-Device pointer mappings table empty
omptarget device 3 info: OpenMP Host-Device pointer mappings table empty
)";

// The Rust host-as-device recipe (core::intrinsics::offload, -Zoffload=Test).
constexpr const char* kRustLog =
    R"(omptarget device 0 info: Entering OpenMP data region with being_mapper at unknown:0:0 with 1 arguments:
omptarget device 0 info: to(unknown)[2048] 
omptarget device 0 info: Creating new map entry with HstPtrBase=0x00007fffa51ec820, HstPtrBegin=0x00007fffa51ec820, TgtAllocBegin=0x000055cf05dcd270, TgtPtrBegin=0x000055cf05dcd270, Size=2048, DynRefCount=1, HoldRefCount=0, Name=unknown
omptarget device 0 info: Copying data from host to device, HstPtr=0x00007fffa51ec820, TgtPtr=0x000055cf05dcd270, Size=2048, Name=unknown
omptarget device 0 info: OpenMP Host-Device pointer mappings after block at unknown:0:0:
omptarget device 0 info: Host Ptr           Target Ptr         Size (B) DynRefCount HoldRefCount Declaration
omptarget device 0 info: 0x00007fffa51ec820 0x000055cf05dcd270 2048     1           0            unknown at unknown:0:0
omptarget device 0 info: Entering OpenMP kernel at unknown:0:0 with 1 arguments:
omptarget device 0 info: alloc(unknown)[2048] 
omptarget device 0 info: Mapping exists with HstPtrBegin=0x00007fffa51ec820, TgtPtrBegin=0x000055cf05dcd270, Size=2048, DynRefCount=2 (incremented), HoldRefCount=0, Name=unknown
"PluginInterface" device 0 info: Launching kernel kernel_1 with [1,1,1] blocks and [1,1,1] threads in Generic mode
omptarget device 0 info: Exiting OpenMP data region with end_mapper at unknown:0:0 with 1 arguments:
omptarget device 0 info: from(unknown)[2048] 
omptarget device 0 info: Copying data from device to host, TgtPtr=0x000055cf05dcd270, HstPtr=0x00007fffa51ec820, Size=2048, Name=unknown
omptarget device 0 info: Removing map entry with HstPtrBegin=0x00007fffa51ec820, TgtPtrBegin=0x000055cf05dcd270, Size=2048, Name=unknown
omptarget device 0 info: OpenMP Host-Device pointer mappings table empty
)";

}  // namespace

TEST_CASE("is_runtime_info_line", "[offload_log]") {
  CHECK(is_runtime_info_line("omptarget device 0 info: OpenMP Host-Device pointer mappings table empty"));
  CHECK(is_runtime_info_line("\"PluginInterface\" device 0 info: Launching kernel k with [1,1,1] "
                             "blocks and [1,1,1] threads in Generic mode"));
  CHECK(is_runtime_info_line("CUDA device 1 info: Launching kernel k with [8,1,1] blocks and [128,1,1] threads in SPMD mode"));
  CHECK(is_runtime_info_line("AMDGPU device 12 info: Copying data from host to device, Size=8"));
  CHECK(is_runtime_info_line("  omptarget   device\t3   info:x"));
  CHECK(is_runtime_info_line("Libomptarget device 0 info: Entering OpenMP kernel at unknown:0:0"));

  CHECK_FALSE(is_runtime_info_line(""));
  CHECK_FALSE(is_runtime_info_line("y[10]=21.000000 devices=4 initial=1"));
  CHECK_FALSE(is_runtime_info_line("omptarget device info: missing number"));
  CHECK_FALSE(is_runtime_info_line("omptarget device 0 message: not info"));
  CHECK_FALSE(is_runtime_info_line("omptarget error: Consult https://openmp.llvm.org/design/Runtimes.html"));
  CHECK_FALSE(is_runtime_info_line("device 0 info: no component name"));
  CHECK_FALSE(is_runtime_info_line("x[255]=511omptarget device 0 info: shares a line with stdout"));
}

TEST_CASE("parse_offload_log: OpenMP saxpy on the host device", "[offload_log]") {
  OffloadSummary s = parse_offload_log(kSaxpyLog);
  REQUIRE(s.launches.size() == 1);
  CHECK(s.launches[0].device == 0);
  CHECK(s.launches[0].kernel == "__omp_offloading_fe00_a720e3_main_l6");
  CHECK(s.launches[0].blocks == "[1,1,1]");
  CHECK(s.launches[0].threads == "[1,1,1]");
  CHECK(s.copies_to_device == 2);
  CHECK(s.bytes_to_device == 2 * 4194304u);
  CHECK(s.copies_from_device == 1);
  CHECK(s.bytes_from_device == 4194304u);
  CHECK(format_summary(s) ==
        "offload: 1 kernel launch on device 0 (__omp_offloading_fe00_a720e3_main_l6); 8.0 MiB to "
        "device in 2 copies, 4.0 MiB from device in 1 copy");
}

TEST_CASE("parse_offload_log: Rust kernel launched through core::intrinsics::offload",
          "[offload_log]") {
  OffloadSummary s = parse_offload_log(kRustLog);
  REQUIRE(s.launches.size() == 1);
  CHECK(s.launches[0].kernel == "kernel_1");
  CHECK(s.copies_to_device == 1);
  CHECK(s.bytes_to_device == 2048);
  CHECK(s.copies_from_device == 1);
  CHECK(s.bytes_from_device == 2048);
  CHECK(format_summary(s) ==
        "offload: 1 kernel launch on device 0 (kernel_1); 2.0 KiB to device in 1 copy, 2.0 KiB "
        "from device in 1 copy");
}

TEST_CASE("accumulate: modes, spacing, other components, mixed lines", "[offload_log]") {
  OffloadSummary s;
  accumulate(s, "CUDA device 1 info: Launching kernel __omp_offloading_10302_2c_f_l3 with "
                "[108,1,1] blocks and [256,1,1] threads in SPMD mode");
  accumulate(s, "  \"PluginInterface\"  device  0  info:  Launching   kernel  kernel_2  with  "
                "[ 4, 1, 1 ]  blocks  and  [32,1,1]  threads  in  Generic-SPMD  mode\r");
  accumulate(s, "x[255]=511omptarget device 0 info: Copying data from device to host, TgtPtr=0x1, "
                "HstPtr=0x2, Size = 100, Name=z");
  accumulate(s, "Libomptarget device 0 info: Launching kernel old with 2 blocks and 64 threads in "
                "SPMD mode");
  // Runtime-internal launch environment: not user data.
  accumulate(s, "\"PluginInterface\" device 1 info: Copying data from host to device, "
                "HstPtr=0x0000000000000001, TgtPtr=0x0000000000000002, Size=8, Name=KernelLaunchEnv");
  // Not runtime lines, or runtime lines that are no launch and no copy.
  accumulate(s, "Launching kernel fake with [1,1,1] blocks and [1,1,1] threads in SPMD mode");
  accumulate(s, "omptarget device 0 info: Removing map entry with HstPtrBegin=0x1, Size=4096");
  accumulate(s, "omptarget device 0 info: Creating new map entry with HstPtrBase=0x1, Size=4096");

  REQUIRE(s.launches.size() == 3);
  CHECK(s.launches[0].device == 1);
  CHECK(s.launches[0].kernel == "__omp_offloading_10302_2c_f_l3");
  CHECK(s.launches[0].blocks == "[108,1,1]");
  CHECK(s.launches[0].threads == "[256,1,1]");
  CHECK(s.launches[1].device == 0);
  CHECK(s.launches[1].kernel == "kernel_2");
  CHECK(s.launches[1].blocks == "[4,1,1]");
  CHECK(s.launches[1].threads == "[32,1,1]");
  CHECK(s.launches[2].blocks == "2");
  CHECK(s.launches[2].threads == "64");
  CHECK(s.copies_to_device == 0);
  CHECK(s.bytes_to_device == 0);
  CHECK(s.copies_from_device == 1);
  CHECK(s.bytes_from_device == 100);
  CHECK(format_summary(s) ==
        "offload: 3 kernel launches on devices 0, 1 (__omp_offloading_10302_2c_f_l3, kernel_2, "
        "old); nothing copied to device, 100 B from device in 1 copy");
}

TEST_CASE("format_summary: empty, repeats, many kernels, sizes", "[offload_log]") {
  OffloadSummary s;
  CHECK(format_summary(s) == "offload: no kernel launches; no data copied");
  CHECK(parse_offload_log("").launches.empty());
  CHECK(format_summary(parse_offload_log("hello\nworld\n")) ==
        "offload: no kernel launches; no data copied");

  for (int i = 0; i < 3; ++i) s.launches.push_back({0, "k1", "[1,1,1]", "[1,1,1]"});
  s.launches.push_back({0, "k2", "", ""});
  CHECK(format_summary(s) == "offload: 4 kernel launches on device 0 (k1 x3, k2); no data copied");

  s.launches.push_back({0, "k3", "", ""});
  s.launches.push_back({0, "k4", "", ""});
  s.launches.push_back({0, "k5", "", ""});
  s.bytes_to_device = 1023;
  s.copies_to_device = 1;
  s.bytes_from_device = 3ull * 1024 * 1024 * 1024 / 2;  // 1.5 GiB
  s.copies_from_device = 3;
  CHECK(format_summary(s) == "offload: 7 kernel launches on device 0 (k1 x3, k2, k3, +2 more); "
                             "1023 B to device in 1 copy, 1.5 GiB from device in 3 copies");
  s.bytes_to_device = 1536;
  s.bytes_from_device = 1024 * 1024 - 1;
  CHECK_THAT(format_summary(s), Catch::EndsWith("1.5 KiB to device in 1 copy, 1.0 MiB from device in 3 copies"));
}
