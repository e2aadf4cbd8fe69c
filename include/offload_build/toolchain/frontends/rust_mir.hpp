// What rustc compiled, read from its own output rather than from the source:
// the MIR each pass emits (`--emit=mir=PATH`; the host pass with
// -Zmir-include-spans=on) after macros, proc macros, include!, OUT_DIR,
// paths and constants are resolved, and the symbols each device image
// defines (llvm-nm). The launches (`core::intrinsics::offload::<F {PATH},
// (ARGS), R>(..)` with the file:line:column rustc gives them) are checked
// against the kernels the images define: a launch of a kernel no image has,
// a kernel without the launch-environment pointer, an argument of another
// type than the kernel's parameter, and a kernel that writes through an
// argument the launch passes read-only (the results would never be copied
// back) are errors at build time, not a wrong program at run time.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/manifest/target.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain::rust {

namespace fs = std::filesystem;

// A function MIR shows: its name's last segment (a kernel's symbol, as
// #[no_mangle] keeps it) and each parameter's type as rustc prints it,
// constants evaluated (`*mut [u32; 64]`).
struct MirFn {
  std::string name;
  std::vector<std::string> params;
};

// Where a statement is in the source (`// scope N at FILE:L:C: L:C`).
struct MirSpan {
  std::string file;  // as rustc names it (relative to where it ran), "" without spans
  int line = 0, column = 0;
};

// One call of the offload intrinsic.
struct MirLaunch : MirSpan {
  std::string path;    // the kernel as the host names it: `host::bump` (from the F {PATH} argument)
  std::string kernel;  // its symbol: the path's last segment
  std::vector<std::string> args;  // the argument tuple's element types
  // A launch inside a generic function whose kernel is one of its type
  // parameters (`offload::<F, ..>(copy _1, ..)`): `in_fn` and `via` (F),
  // path and kernel empty. One made from it at a call that names the kernel
  // (resolve_generic_launches) has `generic` set: its argument types may be
  // the function's parameters, so only the kernel and its arity are checked.
  std::string in_fn, via;
  bool generic = false;
};

// A call of a generic function with its type arguments and operands, in `in_fn`.
struct MirCall : MirSpan {
  std::string callee;  // the path's last segment
  std::vector<std::string> generics, operands;
  std::string in_fn;
};

struct Mir {
  std::vector<MirFn> functions;
  std::vector<MirLaunch> launches;
  std::vector<MirCall> calls;
};

// Each launch through a generic function (MirLaunch::via), at every call that
// names its kernel (a fn item as the argument, or the one fn item type among
// the call's type arguments), through any chain of generic callers, across
// `host`'s crates: added to the crate of the call.
void resolve_generic_launches(std::vector<Mir>& host);

// A MIR dump's functions and launches; what it cannot read it skips.
Mir parse_mir(std::string_view text);

// A type list split at its top-level commas ("A, (B, C), [D; 2]" -> 3).
std::vector<std::string> split_types(std::string_view list);

// One target's device image as the check sees it.
struct DeviceImage {
  manifest::Target target;
  std::set<std::string> symbols;  // the functions it defines and exports
  std::vector<MirFn> functions;   // from the device pass's MIR
};

// Every launch in `host` checked against each image; the error lists each
// problem as "FILE:LINE:COLUMN: error: ..." (the file relative to rustc's
// directory, as rustc writes it). `device_cfg` is the cfg the device pass sets.
// `launched`: the symbols the program's offload entries name
// (runtime_libs.hpp), when known: a launch whose path's last segment is not
// among them is of a host declaration renamed by #[link_name], checked
// against the symbols no launch is named after (each must be defined; the
// kernel's types compared when there is one such declaration and symbol).
// Without it a launch is checked by its path's last segment.
Result<void> check_launches(const std::vector<Mir>& host, const std::vector<DeviceImage>& images,
                            const std::string& device_cfg,
                            const std::optional<std::set<std::string>>& launched = std::nullopt);

// The image of `t` at `image` (its exported functions, by the toolchain's
// llvm-nm) and the device pass's MIR at `mir`; an error names the file.
Result<DeviceImage> read_device_image(const Toolchain& tc, const manifest::Target& t, const fs::path& image,
                                      const fs::path& mir);
// A host pass's MIR file.
Result<Mir> read_mir(const fs::path& mir);

// The kernels an image defines: its exported symbols that are functions of the device crate.
std::vector<std::string> image_kernels(const DeviceImage& image);

}  // namespace ob::toolchain::rust
