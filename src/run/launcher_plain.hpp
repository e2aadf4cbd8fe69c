// Launcher mode: a compile it does not split, cached as one job, as ccache
// caches it (launcher_plain.cpp).
#pragma once

#include <functional>

#include "launcher_setup.hpp"
#include "offload_build/run/request.hpp"

namespace ob::run {

class Session;

// The compile `launch` (not split: `launch.why` says why) run as one cached
// job when that reason still allows caching (not an offload compile,
// targets not modeled, not clang: GCC, a clang without llvm-offload-binary)
// and its command line is a plain compile (toolchain/frontends/plain_compile.hpp):
// its exit code (a hit restores the object and the depfile and prints what
// the compile printed; a failure is the compiler's own). -1 when it runs
// unchanged: `launch.why` then says why it is not cached.
int cache_plain(Launch& launch, const Request& options, const std::function<Session&()>& session);

}  // namespace ob::run
