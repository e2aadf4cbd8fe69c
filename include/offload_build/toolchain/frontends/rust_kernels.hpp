// A light reading of a Rust crate's sources, before rustc runs, to explain in
// the user's terms the mistakes that otherwise surface as a crash at run time:
// a device kernel whose symbol is mangled, a kernel without the launch-environment
// pointer the runtime passes first, a kernel the host never declares, and a
// crate that never splits on the device cfg. Not a Rust parser: it tokenizes
// (comments and literals handled), follows `mod x;` to files, and matches items.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "offload_build/manifest/target.hpp"
#include "offload_build/util/result.hpp"

namespace ob::rust {

namespace fs = std::filesystem;

struct Token {
  enum Kind { Ident, Punct, Str, Other } kind = Other;
  std::string text;  // a Str holds the literal's contents
  int line = 0;
};

// Tokens of Rust source text; comments dropped, char literals and lifetimes as Other.
std::vector<Token> tokenize(std::string_view text);

struct FnItem {
  std::string name;
  fs::path file;
  int line = 0;
  std::vector<std::string> params;  // each "name: Type" as tokens joined by spaces
  bool no_mangle = false;           // #[no_mangle], #[unsafe(no_mangle)] or #[export_name]
  bool offload_kernel = false;      // #[rustc_offload_kernel] or extern "gpu-kernel"
};

struct Launch {
  std::string kernel;  // the first argument of offload(...)
  fs::path file;
  int line = 0;
};

struct CrateScan {
  std::vector<fs::path> files;      // the crate root and the module files found
  std::vector<FnItem> functions;    // fns with a body
  std::vector<FnItem> foreign;      // fns declared in extern blocks
  std::vector<Launch> launches;     // offload(NAME, ...) calls
  std::set<std::string> cfg_names;  // bare names tested in cfg(...) and cfg_attr(...)
  bool complete = true;             // every declared module file was found
  bool no_core = false;             // #![no_core] (possibly inside #![cfg_attr(..)])
};

// Scan the crate root and every module file it declares (missing files are skipped).
CrateScan scan_crate(const fs::path& crate_root);
// A `mod NAME;` declaration: the module lives in another file.
struct ModDecl {
  std::string name;
  std::string path_attr;  // #[path = "..."], or empty
};
// Scan one file's text into `scan` (for tests); `file` names it in the results.
// Returns the file's out-of-line module declarations.
std::vector<ModDecl> scan_text(std::string_view text, const fs::path& file, CrateScan& scan);

// The symbols of the crate's device kernels (marked as kernels, or launched by
// name, and not mangled), sorted: what the host device's image link pulls
// (src/toolchain/frontends/rust_device.cpp).
std::vector<std::string> device_kernel_symbols(const CrateScan& scan);

// Check a scanned crate for the device cfg `device_cfg`; errors (exit 1) name
// "file:line" relative to `project_dir` and say what to change.
Result<void> check_crate(const CrateScan& scan, const std::string& device_cfg,
                         const fs::path& project_dir);

// A GPU device pass needs a `core` for its target: from the rustc sysroot
// (<sysroot>/lib/rustlib/<triple>) or, when none is installed, a #![no_core] crate.
Result<void> check_device_core(const CrateScan& scan, const std::vector<Target>& targets,
                               const fs::path& sysroot, const std::string& device_cfg);

}  // namespace ob::rust
