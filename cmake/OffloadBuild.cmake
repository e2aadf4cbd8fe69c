# The offload-build CMake module (included by OffloadBuildConfig.cmake).
#
# offload_build_targets(<target> TARGETS <t>... [NOGPULIB] [NO_LAUNCHER])
#   Builds <target> for the offload targets listed: host (x86_64 as an offload
#   device), sm_XX (NVIDIA), gfxNNN (AMD). Adds -fopenmp and the target flags
#   to its compile options and (PUBLIC, so programs linking a library get
#   them too) its link options, and sets its C and CXX compiler launcher to
#   offload-build, which splits each offload compile into cached, parallel
#   device passes. NOGPULIB adds -nogpulib (LLVM 22 from Debian ships no
#   OpenMP GPU device runtime: only ompx_bare kernels build then). With an
#   LLVM that has one (LLVM 19 in a private prefix: scripts/setup.sh --llvm
#   19), the compile options that reach it are added (offload-build
#   runtime-flags asks the compiler's installation).
#   NO_LAUNCHER: the flags only.
#
# offload_build_enable_launcher([LANGUAGES <lang>...])
#   Sets CMAKE_<LANG>_COMPILER_LAUNCHER and CMAKE_<LANG>_LINKER_LAUNCHER
#   (default C and CXX) for every target defined afterwards; compiles and
#   links without offload flags run unchanged.
#
# The launcher also caches each executable's offload link (LINKER_LAUNCHER,
# CMake 3.21+) and names kernels in the project's namespace (PROJECT_NAME).
#
# OFFLOAD_BUILD_CACHE_DIR (CMake variable, optional): the cache directory the
# launcher uses; default: $OFFLOAD_BUILD_CACHE_DIR at build time, else
# ~/.cache/offload-build.
# The launcher is given CMAKE_SOURCE_DIR and CMAKE_BINARY_DIR (--project-dir):
# paths under them are passed and keyed relative to each compile's directory
# and kernel names are relative to the build tree, so a checkout at another
# path with the same layout hits every entry with nothing set.
# OFFLOAD_BUILD_BASE_DIR (CMake variable, optional): --base-dir for the
# launcher (ccache's base_dir: paths under it are made relative too, e.g. a
# sibling library's headers); default: $OFFLOAD_BUILD_BASE_DIR at build time.
# OFFLOAD_BUILD_PREFIX_COMMAND (CMake variable, optional): ccache's
# prefix_command for the launcher (--prefix-command), e.g. "distcc" or
# "icecc": compiles without offload run through it, offload jobs locally
# (docs/DISTRIBUTED.md); default: $OFFLOAD_BUILD_PREFIX_COMMAND at build time.

include_guard(GLOBAL)
cmake_policy(PUSH)
cmake_policy(VERSION 3.20)  # the functions keep these policies whatever the caller's

function(_offload_build_launcher out_var)
  if(NOT OffloadBuild_EXECUTABLE)
    message(FATAL_ERROR "offload_build: OffloadBuild_EXECUTABLE is not set; use find_package(OffloadBuild)")
  endif()
  set(launcher "${OffloadBuild_EXECUTABLE}")
  if(OFFLOAD_BUILD_CACHE_DIR)
    list(APPEND launcher --cache-dir "${OFFLOAD_BUILD_CACHE_DIR}")
  endif()
  if(OFFLOAD_BUILD_BASE_DIR)
    list(APPEND launcher --base-dir "${OFFLOAD_BUILD_BASE_DIR}")
  endif()
  if(OFFLOAD_BUILD_PREFIX_COMMAND)
    string(REPLACE ";" " " _ob_prefix "${OFFLOAD_BUILD_PREFIX_COMMAND}")  # one word list, split on spaces
    list(APPEND launcher --prefix-command "${_ob_prefix}")
  endif()
  # Paths under the source and build trees are keyed and passed relative to
  # each compile's directory, and kernel names are relative to the build
  # tree: a checkout elsewhere with the same layout hits, with no base_dir.
  list(APPEND launcher --project-dir "${CMAKE_SOURCE_DIR}" --project-dir "${CMAKE_BINARY_DIR}")
  # Keeps this project's kernel names apart from another project's linked
  # into the same program (docs/CACHE.md).
  list(APPEND launcher --kernel-namespace "${PROJECT_NAME}" wrap --)
  set(${out_var} "${launcher}" PARENT_SCOPE)
endfunction()

# The clang flags for a list of offload targets, in ${out_var}.
function(offload_build_target_flags out_var)
  set(host_triple x86_64-unknown-linux-gnu)
  set(with_host OFF)
  set(nvptx "")
  set(amdgcn "")
  foreach(t IN LISTS ARGN)
    if(t STREQUAL "host" OR t STREQUAL "x86_64")
      set(with_host ON)
    elseif(t MATCHES "^sm_[0-9]+[a-z]?$")
      list(APPEND nvptx ${t})
    elseif(t MATCHES "^gfx[0-9][0-9a-z]+$")
      list(APPEND amdgcn ${t})
    else()
      message(FATAL_ERROR "offload_build: unknown offload target \"${t}\"; accepted: host, x86_64, sm_NN (e.g. sm_90), gfxNNN (e.g. gfx90a)")
    endif()
  endforeach()
  set(flags -fopenmp)
  if(NOT with_host)
    set(archs ${nvptx} ${amdgcn})
    if(NOT archs)
      message(FATAL_ERROR "offload_build: no offload targets given (TARGETS host sm_90 gfx90a ...)")
    endif()
    list(JOIN archs "," arch_list)
    list(APPEND flags "--offload-arch=${arch_list}")
  else()
    # clang names the host device only by triple; a GPU triple then takes its
    # one arch from -Xopenmp-target=TRIPLE -march=ARCH.
    set(triples ${host_triple})
    foreach(family nvptx amdgcn)
      list(LENGTH ${family} n)
      if(n GREATER 1)
        message(FATAL_ERROR "offload_build: clang cannot build the host device together with several ${family} archs (${${family}}) in one compile; drop host or keep one arch")
      endif()
    endforeach()
    if(nvptx)
      list(APPEND triples nvptx64-nvidia-cuda)
    endif()
    if(amdgcn)
      list(APPEND triples amdgcn-amd-amdhsa)
    endif()
    list(JOIN triples "," triple_list)
    list(APPEND flags "-fopenmp-targets=${triple_list}")
    if(nvptx)
      list(APPEND flags "SHELL:-Xopenmp-target=nvptx64-nvidia-cuda -march=${nvptx}")
    endif()
    if(amdgcn)
      list(APPEND flags "SHELL:-Xopenmp-target=amdgcn-amd-amdhsa -march=${amdgcn}")
    endif()
  endif()
  set(${out_var} "${flags}" PARENT_SCOPE)
endfunction()

# The compile options the project's compiler needs to reach its LLVM's
# device runtime for these targets (an LLVM in a private prefix: where its
# bitcode is; AMD without ROCm: -nogpulib for that triple), as offload-build
# knows them (`offload-build runtime-flags`), in ${out_var}; compile only.
function(_offload_build_runtime_flags out_var)
  set(compiler "${CMAKE_C_COMPILER}")
  if(NOT compiler)
    set(compiler "${CMAKE_CXX_COMPILER}")
  endif()
  set(result "")
  if(compiler AND OffloadBuild_EXECUTABLE)
    execute_process(COMMAND "${OffloadBuild_EXECUTABLE}" runtime-flags --compiler "${compiler}" ${ARGN}
                    OUTPUT_VARIABLE json RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0)
      string(JSON n LENGTH "${json}" compile)
      if(n GREATER 0)
        math(EXPR last "${n} - 1")
        foreach(i RANGE ${last})
          string(JSON flag GET "${json}" compile ${i})
          list(APPEND result "SHELL:${flag}")
        endforeach()
      endif()
    endif()
  endif()
  set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

function(offload_build_targets target)
  cmake_parse_arguments(PARSE_ARGV 1 OB "NOGPULIB;NO_LAUNCHER" "" "TARGETS")
  if(OB_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "offload_build_targets: unexpected arguments: ${OB_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "offload_build_targets: ${target} is not a target")
  endif()
  offload_build_target_flags(flags ${OB_TARGETS})
  if(OB_NOGPULIB)
    list(APPEND flags -nogpulib)
  endif()
  _offload_build_runtime_flags(runtime ${OB_TARGETS})
  target_compile_options(${target} PRIVATE ${flags} ${runtime})
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "OBJECT_LIBRARY")
    target_link_options(${target} PUBLIC ${flags})
  endif()
  if(NOT OB_NO_LAUNCHER)
    _offload_build_launcher(launcher)
    set_target_properties(${target} PROPERTIES C_COMPILER_LAUNCHER "${launcher}"
                                               CXX_COMPILER_LAUNCHER "${launcher}")
    # CMake 3.21+: the offload link (device links, wrapper, host link) cached too.
    if(NOT CMAKE_VERSION VERSION_LESS 3.21 AND type STREQUAL "EXECUTABLE")
      set_target_properties(${target} PROPERTIES C_LINKER_LAUNCHER "${launcher}"
                                                 CXX_LINKER_LAUNCHER "${launcher}")
    endif()
  endif()
endfunction()

macro(offload_build_enable_launcher)
  cmake_parse_arguments(_OB "" "" "LANGUAGES" ${ARGN})
  if(NOT _OB_LANGUAGES)
    set(_OB_LANGUAGES C CXX)
  endif()
  _offload_build_launcher(_ob_launcher)
  foreach(_ob_lang IN LISTS _OB_LANGUAGES)
    set(CMAKE_${_ob_lang}_COMPILER_LAUNCHER "${_ob_launcher}")
    set(CMAKE_${_ob_lang}_LINKER_LAUNCHER "${_ob_launcher}")  # CMake 3.21+
  endforeach()
  # Ninja preprocesses each Fortran source (flang -E, to x.f90-pp.f90) without
  # the launcher; through it, the #line it writes names the source relative
  # to the build directory, so the compile of that file is served to a
  # checkout at another path too (docs/FORTRAN.md).
  string(FIND "${CMAKE_Fortran_PREPROCESS_SOURCE}" "\"${OffloadBuild_EXECUTABLE}\"" _ob_at)
  if("Fortran" IN_LIST _OB_LANGUAGES AND CMAKE_Fortran_PREPROCESS_SOURCE AND _ob_at EQUAL -1)
    set(_ob_words "")
    foreach(_ob_word IN LISTS _ob_launcher)
      string(APPEND _ob_words "\"${_ob_word}\" ")
    endforeach()
    set(CMAKE_Fortran_PREPROCESS_SOURCE "${_ob_words}${CMAKE_Fortran_PREPROCESS_SOURCE}")
  endif()
endmacro()

cmake_policy(POP)
