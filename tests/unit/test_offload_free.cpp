// What may go through prefix_command (distcc, icecc): clang_cli::offload_free
// keeps every compile with device code local, whatever spells it; and the
// setting split as ccache splits it.
#include <catch2/catch.hpp>

#include "offload_build/run/launcher_prefix.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/util/strings.hpp"

using namespace ob;
using Argv = std::vector<std::string>;

TEST_CASE("offload_free: plain compiles may run remotely, offload compiles never", "[launcher][prefix]") {
  using toolchain::clang_cli::offload_free;
  // No device code: plain C/C++, host-only OpenMP, links.
  for (const Argv& argv : {Argv{"clang-22", "-O2", "-c", "a.c", "-o", "a.o"},
                           Argv{"clang++", "-fopenmp", "-c", "a.cpp"},
                           Argv{"/usr/bin/clang-22", "-Iinclude/offloadish", "-c", "x.c"},
                           Argv{"gcc", "-O2", "-c", "a.c"}, Argv{"clang", "a.o", "b.o", "-o", "prog"}}) {
    INFO(util::shell_join(argv));
    CHECK(offload_free(argv));
  }
  // Device code, however it is asked for.
  for (const Argv& argv :
       {Argv{"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", "k.c"},
        Argv{"clang", "-fopenmp", "--offload-arch=sm_90", "-c", "k.c"},
        Argv{"clang", "-fopenmp", "--offload-targets=amdgcn-amd-amdhsa", "-c", "k.c"},
        Argv{"clang", "--offload-device-only", "-c", "k.c"},
        Argv{"clang", "-c", "k.c", "-Xclang", "-fembed-offload-object=k.offload"},
        Argv{"clang", "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90", "-c", "k.c"},
        Argv{"clang", "-foffload-lto", "-c", "k.c"},
        Argv{"clang++", "-x", "cuda", "-c", "k.txt"},
        Argv{"clang++", "-xhip", "-c", "k.txt"},
        Argv{"clang++", "--cuda-gpu-arch=sm_90", "-c", "k.cu"},
        Argv{"clang++", "-c", "k.cu"},
        Argv{"clang++", "-c", "k.hip"},
        Argv{"clang++", "-fsycl", "-c", "k.cpp"},
        Argv{"gcc", "-fopenmp", "-c", "a.c"},  // gcc's configured offload targets
        Argv{"g++", "-fopenacc", "-c", "a.cpp"},
        Argv{"gcc", "-foffload=nvptx-none", "-c", "a.c"},
        Argv{}}) {
    INFO(util::shell_join(argv));
    CHECK_FALSE(offload_free(argv));
  }
}

TEST_CASE("prefix_command is split on spaces, as ccache splits it", "[launcher][prefix]") {
  CHECK(run::split_prefix_command("distcc") == Argv{"distcc"});
  CHECK(run::split_prefix_command("  icecc   --x y ") == Argv{"icecc", "--x", "y"});
  CHECK(run::split_prefix_command("'a b'") == Argv{"'a", "b'"});  // no quoting, no shell
  CHECK(run::split_prefix_command("").empty());
}
