// The checks of the code a Rust device pass compiles, in the user's terms and
// before rustc runs: device code is no_std (only `core` exists on the device),
// has no allocator, does not share statics with the host, and kernels are not
// generic. Plus the warning for a panic handler that hangs instead of ending the
// program. See rust_kernels.hpp; the scan records what these look at.
#include <algorithm>
#include <ostream>

#include <fmt/core.h>

#include "offload_build/util/style.hpp"
#include "offload_build/toolchain/frontends/rust_kernels.hpp"

namespace ob::rust {

namespace {

bool compiled(const CrateScan& scan, int scope, const std::string& cfg) {
  return device_compiles(scan, scope, cfg) == Compiled::Yes;
}
bool maybe_compiled(const CrateScan& scan, int scope, const std::string& cfg) {
  return device_compiles(scan, scope, cfg) != Compiled::No;
}

bool is_kernel(const FnItem& f, const std::vector<const FnItem*>& kernels) {
  return std::find(kernels.begin(), kernels.end(), &f) != kernels.end();
}

// "device kernel `k`", "device function `f`" or "device code".
std::string who(const CrateScan& scan, int fn, const std::vector<const FnItem*>& kernels) {
  if (fn < 0) return "device code";
  const FnItem& f = scan.functions[fn];
  return fmt::format("{} `{}`", is_kernel(f, kernels) ? "device kernel" : "device function", f.name);
}

// What to use instead of `what` (a std macro, type or path) in device code.
std::string std_advice(const std::string& what) {
  static const std::set<std::string> io = {"println!", "print!", "eprintln!", "eprint!", "dbg!"};
  static const std::set<std::string> text = {"format!", "String"};
  static const std::set<std::string> heap = {"vec!", "Vec", "Box"};
  if (io.count(what))
    return "there is no stdout or stderr on the device: write the values to an output buffer the host "
           "passes in (a pointer argument) and print them on the host after the launch";
  if (text.count(what))
    return "there is no heap on the device, so no String: write into a fixed-size array (e.g. [u8; 64]) or "
           "an output buffer the host passes in, and format the text on the host";
  if (heap.count(what))
    return "there is no heap on the device: use fixed-size arrays ([f32; N]) or slices, or a buffer the host "
           "allocates and passes in as a pointer argument (`x: *mut [f32; N]`), and write results to an "
           "output buffer";
  // std::MODULE[::...]: core has many of the same modules.
  static const std::set<std::string> in_core = {
      "any", "arch", "array", "ascii", "cell", "char", "clone", "cmp", "convert", "default", "f32", "f64",
      "ffi", "fmt", "hash", "hint", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
      "u128", "usize", "iter", "marker", "mem", "num", "ops", "option", "panic", "pin", "primitive", "ptr",
      "result", "slice", "str", "time", "intrinsics"};
  const std::string rest = what.size() > 5 ? what.substr(5) : "";  // after "std::"
  const std::string module = rest.substr(0, rest.find(':'));
  if (in_core.count(module) || rest.rfind("sync::atomic", 0) == 0)
    return fmt::format("use `core::{}` instead (std re-exports it from core)", rest);
  return fmt::format("`{}` has no counterpart in core (the device has no operating system and no "
                     "heap): do that on the host, pass the data in through pointer arguments and write "
                     "results to an output buffer",
                     module.empty() ? std::string("std") : "std::" + module);
}

Result<void> check_std_uses(const CrateScan& scan, const std::vector<const FnItem*>& kernels,
                            const std::string& cfg, const fs::path& dir) {
  const bool no_std = std::any_of(scan.marks.begin(), scan.marks.end(), [&](const Mention& m) {
    return (m.what == "no_std" || m.what == "no_core") && compiled(scan, m.scope, cfg);
  });
  if (!no_std) return {};  // with std in the device pass rustc accepts these; not ours to judge
  for (const Mention& u : scan.std_uses) {
    const std::string name = u.what.back() == '!' ? u.what.substr(0, u.what.size() - 1) : u.what;
    if (!compiled(scan, u.scope, cfg) || (u.what.rfind("std::", 0) != 0 && scan.own_names.count(name))) continue;
    return Error::failure(fmt::format(
        "{}: error: {} uses `{}`, which comes from `std`, but device code is no_std: only `core` exists "
        "on the device; {}",
        where(u.file, u.line, dir), who(scan, u.fn, kernels), u.what, std_advice(u.what)));
  }
  return {};
}

Result<void> check_alloc(const CrateScan& scan, const std::string& cfg, const fs::path& dir) {
  auto alloc = std::find_if(scan.marks.begin(), scan.marks.end(), [&](const Mention& m) {
    return m.what == "alloc" && compiled(scan, m.scope, cfg);
  });
  const bool allocator = std::any_of(scan.marks.begin(), scan.marks.end(), [&](const Mention& m) {
    return m.what == "global_allocator" && maybe_compiled(scan, m.scope, cfg);
  });
  if (alloc == scan.marks.end() || allocator) return {};
  return Error::failure(fmt::format(
      "{}: error: the device crate uses `alloc` (`extern crate alloc`) but has no #[global_allocator]: there "
      "is no allocator on the device, so Vec, Box and String there would leave the allocator functions "
      "(__rust_alloc, ...) undefined when the device image is linked. Use fixed-size arrays, or buffers the "
      "host allocates and passes to the kernel as pointer arguments (results go to an output buffer), and "
      "drop `extern crate alloc` from the device pass (put it under #[cfg(not({}))])",
      where(alloc->file, alloc->line, dir), cfg));
}

Result<void> check_static_muts(const CrateScan& scan, const std::vector<const FnItem*>& kernels,
                               const std::string& cfg, const fs::path& dir) {
  for (const FnItem* k : kernels) {
    if (!maybe_compiled(scan, k->scope, cfg)) continue;
    for (const Mention& s : scan.static_muts) {
      auto use = k->names.find(s.what);
      if (use == k->names.end() || !maybe_compiled(scan, s.scope, cfg)) continue;
      return Error::failure(fmt::format(
          "{}: error: device kernel `{}` uses `static mut {}` ({}): the device has its own copy of every "
          "static, which the host never sees (the host's `{}` is not mapped to the device), so what the "
          "kernel writes there never reaches the host and what the host writes never reaches the kernel; "
          "pass a pointer instead: add a parameter such as `out: *mut T` to the kernel (after _dyn_ptr) and "
          "to its host declaration, and launch it with a pointer to a host variable",
          where(k->file, use->second, dir), k->name, s.what, where(s.file, s.line, dir), s.what));
    }
  }
  return {};
}

Result<void> check_generic_kernels(const CrateScan& scan, const std::vector<const FnItem*>& kernels,
                                   const std::string& cfg, const fs::path& dir) {
  for (const FnItem& f : scan.functions) {
    if (f.generics.empty() || !(is_kernel(f, kernels) || f.no_mangle) || !maybe_compiled(scan, f.scope, cfg))
      continue;
    return Error::failure(fmt::format(
        "{}: error: device kernel `{}` is generic over `{}`: a kernel cannot be generic, because the host "
        "launches it by its unmangled symbol, which names exactly one function, and rustc emits no "
        "#[no_mangle] symbol for a generic fn (it only warns that functions generic over types or consts "
        "must be mangled, and the device image has no `{}`). Write one non-generic kernel per type that "
        "calls a generic helper, e.g. `#[unsafe(no_mangle)] pub extern \"C\" fn {}_f32(_dyn_ptr: *mut u8, "
        "...) {{ {}_impl::<f32>(...) }}`, each with its own host declaration and launch",
        where(f.file, f.line, dir), f.name, f.generics.front(), f.name, f.name, f.name));
  }
  return {};
}

}  // namespace

Result<void> check_device_code(const CrateScan& scan, const std::vector<const FnItem*>& kernels,
                               const std::string& cfg, const fs::path& dir) {
  OB_TRY(check_generic_kernels(scan, kernels, cfg, dir));
  OB_TRY(check_std_uses(scan, kernels, cfg, dir));
  OB_TRY(check_alloc(scan, cfg, dir));
  return check_static_muts(scan, kernels, cfg, dir);
}

void warn_panic_handler(const CrateScan& scan, const std::string& cfg, const fs::path& dir,
                        std::ostream& warnings) {
  for (const FnItem& f : scan.functions) {
    if (!f.panic_handler || !f.only_loops || !maybe_compiled(scan, f.scope, cfg)) continue;
    warnings << util::paint_diagnostic(fmt::format(
                    "{}: warning: the device crate's #[panic_handler] `{}` only loops: it never returns "
                    "or ends the program, so a kernel that panics hangs the program instead of failing "
                    "it; make the handler end the program: on the host device (x86_64) write \"device "
                    "kernel panicked at FILE:LINE:COL\" to stderr with libc's `write` and call libc's "
                    "`abort()`; on a GPU target (#![no_core]) trap. See docs/RUST.md#panics",
                    where(f.file, f.line, dir), f.name))
             << '\n';
  }
}

}  // namespace ob::rust
