// A light reading of a Rust crate's sources, before rustc runs, to explain in
// the user's terms the mistakes that otherwise surface as a crash at run time or
// as a wall of rustc errors: a device kernel whose symbol is mangled, a kernel
// without the launch-environment pointer the runtime passes first, a kernel the
// host never declares, a crate that never splits on the device cfg, device code
// that uses `std` or `alloc`, a kernel that uses a `static mut` or is generic, and
// (a warning) a panic handler that hangs. Not a Rust parser: it tokenizes
// (comments and literals handled), follows `mod x;` to files, matches items and
// remembers the cfg(...) each item sits under.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "offload_build/manifest/target.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain::rust {

namespace fs = std::filesystem;

struct Token {
  enum Kind { Ident, Punct, Str, Other } kind = Other;
  std::string text;  // a Str holds the literal's contents
  int line = 0;
  int column = 0;    // 1-based, in characters
};

// Tokens of Rust source text; comments dropped, char literals and lifetimes as Other.
std::vector<Token> tokenize(std::string_view text);

// The code under a chain of #[cfg(...)] / #![cfg(...)] predicates: CrateScan::scopes
// holds them, index 0 is the crate root (no predicate, always compiled).
struct CfgScope {
  int parent = -1;
  std::vector<Token> predicate;  // the tokens inside cfg( ... )
};

struct FnItem {
  std::string name;
  fs::path file;
  int line = 0;
  int column = 0;                     // of its name
  int scope = 0;                      // the cfg scope it sits in
  std::vector<std::string> params;    // each "name: Type" as tokens joined by spaces
  std::vector<std::pair<int, int>> param_at;  // each parameter's line and column
  std::string returns;                // the return type's tokens joined by spaces, "" for none
  std::pair<int, int> returns_at;     // its line and column
  std::string abi;                    // "C" for extern "C" (or an extern block's), "" for none
  std::vector<std::string> generics;  // type and const parameters (not lifetimes), "impl Trait" arguments
  bool no_mangle = false;             // #[no_mangle], #[unsafe(no_mangle)] or #[export_name]
  bool offload_kernel = false;        // #[rustc_offload_kernel] or extern "gpu-kernel"
  bool panic_handler = false;         // #[panic_handler]
  bool only_loops = false;            // its body is `loop {}` (or a loop of spin hints only)
  std::map<std::string, int> names;   // identifiers in its body, with the first line each is on
};

// Something the device checks look for: a `std` use (`println!`, `Vec`, `std::io`),
// a `static mut NAME`, or a crate-level mark (`no_std`, `no_core`, `alloc` for
// `extern crate alloc`, `global_allocator`).
struct Mention {
  std::string what;
  fs::path file;
  int line = 0;
  int scope = 0;
  int fn = -1;  // the index in CrateScan::functions of the function whose body holds it, or -1
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
  std::vector<CfgScope> scopes{CfgScope{}};
  std::vector<Mention> std_uses;      // what: "println!", "Vec", "std::io", ...
  std::vector<Mention> static_muts;   // what: the static's name
  std::vector<Mention> marks;         // what: "no_std", "no_core", "alloc", "global_allocator"
  std::set<std::string> own_names;    // names the crate defines or imports (a `Vec` of its own)
};

// Whether the device pass (which sets `device_cfg`) compiles the code in `scope`:
// Maybe when a predicate tests anything else (features, target_arch, ...).
// With `device` false: whether the host pass (without that cfg) compiles it.
enum class Compiled { Yes, No, Maybe };
Compiled device_compiles(const CrateScan& scan, int scope, const std::string& device_cfg, bool device = true);

// Scan the crate root and every module file it declares (missing files are skipped).
CrateScan scan_crate(const fs::path& crate_root);
// A `mod NAME;` declaration: the module lives in another file.
struct ModDecl {
  std::string name;
  std::string path_attr;  // #[path = "..."], or empty
  int scope = 0;          // the cfg scope of the declaration: the module file's own
};
// Scan one file's text into `scan` (for tests); `file` names it in the results,
// `scope` is the cfg scope the whole file sits in. Returns the file's out-of-line
// module declarations.
std::vector<ModDecl> scan_text(std::string_view text, const fs::path& file, CrateScan& scan, int scope = 0);

// The crate's device kernels: functions marked as kernels, or defined with a
// body and launched by name (src/toolchain/frontends/rust_device.cpp).
std::vector<const FnItem*> device_kernels(const CrateScan& scan);
// Their symbols (the unmangled ones), sorted: what the host device's image link pulls.
std::vector<std::string> device_kernel_symbols(const CrateScan& scan);

// Check a scanned crate for the device cfg `device_cfg`; errors (exit 1) name
// "file:line" relative to `project_dir` and say what to change. Warnings (the
// build goes on: a panic handler that hangs) go to `warnings`.
Result<void> check_crate(const CrateScan& scan, const std::string& device_cfg,
                         const fs::path& project_dir);
Result<void> check_crate(const CrateScan& scan, const std::string& device_cfg,
                         const fs::path& project_dir, std::ostream& warnings);

// The checks of the code the device pass compiles (rust_checks.cpp), run by
// check_crate once the kernels are known: `std` and `alloc` in device code, a
// `static mut` used by a kernel, generic kernels; and the panic handler warning.
Result<void> check_device_code(const CrateScan& scan, const std::vector<const FnItem*>& kernels,
                               const std::string& device_cfg, const fs::path& project_dir);
void warn_panic_handler(const CrateScan& scan, const std::string& device_cfg, const fs::path& project_dir,
                        std::ostream& warnings);
// "file:line" with the file relative to `project_dir` when it lies under it
// ("file:line:column" given a column).
std::string where(const fs::path& file, int line, const fs::path& project_dir);
std::string where(const fs::path& file, int line, int column, const fs::path& project_dir);

// The kernel signature rules of this rustc's offload (rust_checks.cpp, each
// verified against the nightly): every argument after the launch-environment
// pointer a pointer or reference (a value arrives as garbage: the program
// crashes), a slice only as a kernel's single argument (next to others rustc
// crashes: "offload does not support Struct"), no return value (the launch
// does not bring it back), and no `extern "gpu-kernel"` where the code is
// compiled for x86_64 (the host pass; the device pass for the host device).
Result<void> check_kernel_signatures(const CrateScan& scan, const std::vector<const FnItem*>& kernels,
                                     const std::string& device_cfg, const fs::path& project_dir);
Result<void> check_kernel_abi(const CrateScan& scan, const std::vector<manifest::Target>& targets,
                              const std::string& device_cfg, const fs::path& project_dir);

// A GPU device pass needs a `core` for its target: from the rustc sysroot
// (<sysroot>/lib/rustlib/<triple>) or, when none is installed, a #![no_core] crate.
Result<void> check_device_core(const CrateScan& scan, const std::vector<manifest::Target>& targets,
                               const fs::path& sysroot, const std::string& device_cfg);

}  // namespace ob::toolchain::rust
