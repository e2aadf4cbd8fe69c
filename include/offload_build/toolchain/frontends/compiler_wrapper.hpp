// Compiler wrappers recognised by what they wrap: MPI's mpicc, mpicxx,
// mpifort (Open MPI, MPICH and MPICH's descendants: Intel MPI, MVAPICH) add
// include and library flags to a compiler they pick from their own
// configuration and the environment (OMPI_CC/OMPI_CXX/OMPI_FC,
// MPICH_CC/MPICH_CXX/MPICH_FC). The wrapper is asked, in its own show mode,
// the exact command it would run for these arguments; the launcher then
// treats that command as the one it was given (split, cached, byte-identical
// to the wrapper's own compile in the same environment). docs/LAUNCHER.md.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/util/result.hpp"

namespace ob::toolchain::frontend {

namespace fs = std::filesystem;

// Whether `program`'s file name is a compiler wrapper's: mpicc, mpicxx,
// mpic++, mpiCC, mpif77, mpif90, mpifort, Intel's mpiicc, mpiicpc, mpiicpx,
// mpiicx, mpiifort, mpiifx; a ".openmpi"/".mpich" suffix (Debian's
// alternatives) is allowed.
bool is_compiler_wrapper_name(std::string_view program);

struct Unwrapped {
  std::string family;                // "Open MPI" or "MPICH" (MPICH-style -show)
  std::vector<std::string> command;  // what the wrapper runs, argv[0] the compiler
};

// Ask the wrapper `argv[0]` (found at `program`) what it runs for `argv`:
// Open MPI's `--showme`, MPICH's `-show`, with the caller's arguments (those
// holding white space stand in as placeholders, so the answer splits back
// exactly). An error says why the wrapper could not be asked or understood.
Result<Unwrapped> unwrap_compiler(const std::vector<std::string>& argv, const fs::path& program,
                                  const fs::path& cwd);

}  // namespace ob::toolchain::frontend
