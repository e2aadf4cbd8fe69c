// Which LLVM's offload runtime a built program needs: its ELF dynamic section
// names libomptarget.so.N.M, and one installed LLVM has that file. `run`,
// `cargo offload run` and `verify` start the program with that LLVM's lib
// directory first on LD_LIBRARY_PATH, so an LLVM 19 program never loads LLVM
// 22's runtime (or none, from a private prefix the loader does not search).
// And which kernels a built program launches: the names of its offload entries.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ob::toolchain {

namespace fs = std::filesystem;

// The DT_NEEDED names of an ELF64 little-endian executable or library;
// empty for anything else (a script, a truncated or foreign file).
std::vector<std::string> needed_libraries(const fs::path& program);

// The lib directory of the first of `roots` (LLVM roots, the preferred first)
// whose lib/ holds the libomptarget.so.* that `program` needs; nullopt when
// it needs none or no root has it.
std::optional<fs::path> runtime_library_dir(const fs::path& program, const std::vector<fs::path>& roots);

// The symbols of the kernels an ELF64 little-endian program launches: the
// names its offload entries carry, in the section LLVM writes them to
// (`.llvm.rodata.offloading`, kept by strip: the runtime reads it). The
// symbol is the one the linker resolves (a `#[link_name]` applied), not the
// name the source gives it. nullopt for anything else, or without the
// section (an older LLVM, a program that launches nothing).
std::optional<std::set<std::string>> offload_entry_names(const fs::path& program);

}  // namespace ob::toolchain
