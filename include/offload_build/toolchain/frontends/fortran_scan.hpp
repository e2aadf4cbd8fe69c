// What a Fortran source reads and writes besides itself, from a scan of its
// lines as CMake's Fortran dependency scanner and fortdepend read them (flang
// writes no depfile): the modules it defines (MODULE, SUBMODULE: the .mod
// files it writes), the modules it uses (USE, less the compiler's own
// intrinsic modules and its own), the files it includes (INCLUDE, #include,
// scanned in turn) and the files its #line directives name (a preprocessed
// source's original: its kernels are named after it). Case-insensitive, free
// and fixed form. The planners order a manifest's compiles by it, declare the
// .mod files as outputs and inputs, and key the included files.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ob::toolchain::frontend::fortran {

namespace fs = std::filesystem;

struct Scan {
  std::vector<std::string> defines;  // module files it writes: "m.mod", "m-sub.mod" (a submodule)
  std::vector<std::string> uses;     // module files it reads, not its own ("m.mod"), sorted
  std::vector<fs::path> reads;       // absolute: every included file, each candidate found; #line files
  // The file a #line directive on the source's first line names, as written
  // (a preprocessed source's original, e.g. CMake's x.f90-pp.f90).
  std::optional<std::string> line_file;
  // Why its passes cannot be keyed (an INCLUDE file found nowhere, a source
  // that cannot be read); nullopt when they can.
  std::optional<std::string> problem;
};

// The macros the options decide (-D NAME[=VALUE], -U NAME): a branch of
// #ifdef, #ifndef, #if/#elif [!]defined(NAME), #if 0/1 or #else is skipped
// only where it is certainly not compiled: by these, or because NAME does
// not start with '_' (flang predefines only such names), no option defines
// it and no #define or #undef before names it. Anything else (a predefined
// macro, an expression) is read as compiled.
struct Macros {
  std::set<std::string> defined, undefined;
};

// Whether `source` is fixed form by its extension (.f .ff .for .ftn .f77 .fpp, any case).
bool fixed_form_by_extension(const fs::path& source);

// Scan `source` (absolute). `include_dirs`: absolute, the -I directories in
// order (an INCLUDE is looked for beside the including file first). `fixed`:
// the form, by option or by extension. `macros`: the options' (Macros).
Scan scan(const fs::path& source, const std::vector<fs::path>& include_dirs, bool fixed, Macros macros = {});

// Whether `name` (lower case) is one of flang's intrinsic modules (its .mod
// files come with the compiler: omp_lib, iso_c_binding, ieee_arithmetic...).
bool intrinsic_module(const std::string& name);

}  // namespace ob::toolchain::frontend::fortran
