# CMake toolchain file: clang-22 for C and C++, with offload-build as the
# compiler launcher (docs/LAUNCHER.md). Installed to
# <prefix>/share/offload-build/templates/; use it with
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=<prefix>/share/offload-build/templates/clang22-offload-toolchain.cmake
# The launcher splits every OpenMP offload compile into cached, parallel
# device passes and runs every other command unchanged. Give the offload
# flags per target with find_package(OffloadBuild) + offload_build_targets(),
# or in CMAKE_<LANG>_FLAGS.

find_program(OFFLOAD_BUILD_CLANG clang-22 HINTS /usr/lib/llvm-22/bin)
find_program(OFFLOAD_BUILD_CLANGXX clang++-22 HINTS /usr/lib/llvm-22/bin)
if(NOT OFFLOAD_BUILD_CLANG OR NOT OFFLOAD_BUILD_CLANGXX)
  message(FATAL_ERROR "clang-22 not found; install clang-22 (scripts/setup.sh)")
endif()
set(CMAKE_C_COMPILER "${OFFLOAD_BUILD_CLANG}")
set(CMAKE_CXX_COMPILER "${OFFLOAD_BUILD_CLANGXX}")

# The installed program next to this file (<prefix>/bin), else PATH.
get_filename_component(_ob_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
find_program(OffloadBuild_EXECUTABLE offload-build HINTS "${_ob_prefix}/bin")
if(NOT OffloadBuild_EXECUTABLE)
  message(FATAL_ERROR "offload-build not found in ${_ob_prefix}/bin or on PATH")
endif()
# Paths under the source and build trees are passed and keyed relative to
# each compile's directory, and kernel names are relative to the build tree:
# a checkout at another path with the same layout hits, with nothing set.
set(_ob_launcher "${OffloadBuild_EXECUTABLE}" --project-dir "${CMAKE_SOURCE_DIR}"
                 --project-dir "${CMAKE_BINARY_DIR}" wrap --)
set(CMAKE_C_COMPILER_LAUNCHER "${_ob_launcher}")
set(CMAKE_CXX_COMPILER_LAUNCHER "${_ob_launcher}")
# CMake 3.21+: offload links run through it too, and are cached.
set(CMAKE_C_LINKER_LAUNCHER "${_ob_launcher}")
set(CMAKE_CXX_LINKER_LAUNCHER "${_ob_launcher}")
