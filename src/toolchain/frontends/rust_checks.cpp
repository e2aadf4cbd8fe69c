// The checks of the code a Rust device pass compiles, in the user's terms and
// before rustc runs: device code is no_std (only `core` exists on the device),
// has no allocator, does not share statics with the host, and kernels are not
// generic. Plus the warning for a panic handler that hangs instead of ending the
// program. See rust_kernels.hpp; the scan records what these look at.
#include <algorithm>
#include <cctype>
#include <ostream>

#include <fmt/core.h>

#include "offload_build/util/strings.hpp"
#include "offload_build/util/style.hpp"
#include "offload_build/toolchain/frontends/rust_kernels.hpp"

namespace ob::toolchain::rust {

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

// A type as its tokens (joined by spaces) read: `*mut [f64; 4]`, `&mut [f64]`.
std::string pretty(const std::string& tokens) {
  std::string out, prev;
  auto word = [](const std::string& t) {
    return !t.empty() && (std::isalnum(static_cast<unsigned char>(t[0])) || t[0] == '_' || t[0] == '\'');
  };
  for (const auto& t : util::split(tokens, ' ')) {
    if (t.empty()) continue;
    if (!prev.empty() && ((word(prev) && word(t)) || prev == ";" || prev == "," || prev == "mut" ||
                          prev == "const" || prev == "dyn" || (prev == ":" && t != ":" && out.size() > 1 &&
                                                               out[out.size() - 2] != ':')))
      out += ' ';
    out += t;
    prev = t;
  }
  return out;
}

// "name: Type" split at its first ':' (the pattern holds none).
std::pair<std::string, std::string> name_and_type(const std::string& param) {
  const size_t colon = param.find(':');
  if (colon == std::string::npos) return {util::trim(param), ""};
  return {pretty(param.substr(0, colon)), pretty(param.substr(colon + 1))};
}

// `&[T]`, `&mut [T]`, `*const [T]`, `*mut [T]`, `&str`: a fat pointer.
bool is_slice(const std::string& type) {
  std::string t = type;
  for (const char* prefix : {"&mut ", "&", "*const ", "*mut "})
    if (util::starts_with(t, prefix)) {
      t = t.substr(std::string(prefix).size());
      break;
    }
  if (t == "str") return true;
  if (t.empty() || t.front() != '[' || t.back() != ']') return false;
  int depth = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '[' || t[i] == '(' || t[i] == '<') ++depth;
    if (t[i] == ']' || t[i] == ')' || t[i] == '>') --depth;
    if (t[i] == ';' && depth == 1) return false;  // [T; N]: an array
  }
  return true;
}

}  // namespace

std::string where(const fs::path& file, int line, int column, const fs::path& dir) {
  return fmt::format("{}:{}", where(file, line, dir), column);
}

Result<void> check_kernel_signatures(const CrateScan& scan, const std::vector<const FnItem*>& kernels,
                                     const std::string& cfg, const fs::path& dir) {
  (void)scan;
  (void)cfg;
  for (const FnItem* k : kernels) {
    for (size_t i = 1; i < k->params.size(); ++i) {  // after the launch-environment pointer
      const auto [name, type] = name_and_type(k->params[i]);
      const auto [line, column] = i < k->param_at.size() ? k->param_at[i] : std::pair{k->line, k->column};
      const std::string at = where(k->file, line, column, dir);
      if (type.empty()) continue;
      if (type[0] != '*' && type[0] != '&')
        return Error::failure(fmt::format(
            "{}: error: device kernel `{}` takes `{}: {}` by value: this rustc's offload passes every kernel "
            "argument as a pointer to data it copies to the device, so a value arrives as an address and the "
            "program crashes when the kernel runs; take a pointer instead, `{}: *const {}` in the kernel and in "
            "its host declaration, launch it with `&{} as *const {}` in the argument tuple, and read `*{}` in "
            "the kernel (see docs/RUST.md#kernel-signatures)",
            at, k->name, name, type, name, type, name, type, name));
      if (is_slice(type) && k->params.size() > 2)
        return Error::failure(fmt::format(
            "{}: error: device kernel `{}` takes the slice `{}: {}` next to other arguments, which this rustc "
            "cannot launch (it stops with an internal compiler error, \"offload does not support Struct\"; a "
            "slice works only as a kernel's single argument): take a pointer to a fixed-size array instead, "
            "`{}: {}[T; N]` with N a const, in the kernel and its host declaration, and launch it with "
            "`&mut array as *mut [T; N]` (see docs/RUST.md#kernel-signatures)",
            at, k->name, name, type, name, type[0] == '&' || util::starts_with(type, "*mut") ? "*mut " : "*const "));
    }
    if (!k->returns.empty() && k->returns != "( )" && k->returns != "!") {
      const std::string ret = pretty(k->returns);
      return Error::failure(fmt::format(
          "{}: error: device kernel `{}` returns `{}`: the launch does not bring a kernel's return value back "
          "(the host reads garbage); return nothing and write the result through a pointer: add `out: *mut {}` "
          "to the kernel and its host declaration, store `unsafe {{ *out = ... }}` in the kernel, and launch it "
          "with `&mut result as *mut {}` (see docs/RUST.md#kernel-signatures)",
          where(k->file, k->returns_at.first, k->returns_at.second, dir), k->name, ret, ret, ret));
    }
  }
  return {};
}

Result<void> check_kernel_abi(const CrateScan& scan, const std::vector<manifest::Target>& targets,
                              const std::string& cfg, const fs::path& dir) {
  // The host pass compiles for x86_64, where rustc rejects the GPU ABI (E0570).
  for (const FnItem& f : scan.foreign)
    if (f.abi == "gpu-kernel" && device_compiles(scan, f.scope, cfg, false) != Compiled::No)
      return Error::failure(fmt::format(
          "{}: error: the host declaration of kernel `{}` is in an `extern \"gpu-kernel\"` block, which rustc "
          "rejects when it compiles the host pass for x86_64 (error E0570, \"gpu-kernel\" is not a supported "
          "ABI): declare kernels on the host side as `unsafe extern \"C\" {{ fn {}(...); }}`; \"gpu-kernel\" "
          "belongs on the device kernel's definition, and only for GPU targets (see docs/RUST.md#kernel-signatures)",
          where(f.file, f.line, f.column, dir), f.name, f.name));
  const bool host_device =
      std::any_of(targets.begin(), targets.end(), [](const manifest::Target& t) { return !t.is_gpu(); });
  if (!host_device) return {};
  for (const FnItem& f : scan.functions)
    if (f.abi == "gpu-kernel" && device_compiles(scan, f.scope, cfg) != Compiled::No)
      return Error::failure(fmt::format(
          "{}: error: device kernel `{}` is `extern \"gpu-kernel\"`, which rustc rejects for x86_64 (error E0570), "
          "and target host compiles the device pass for x86_64: write it `pub extern \"C\" fn {}(...)` with "
          "#[rustc_offload_kernel], which marks it a kernel on every target (see docs/RUST.md#kernel-signatures)",
          where(f.file, f.line, f.column, dir), f.name, f.name));
  return {};
}

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

}  // namespace ob::toolchain::rust
