// The launches and kernels rustc compiled, from its MIR and the images'
// symbols (rust_mir.hpp).
#include "offload_build/toolchain/frontends/rust_mir.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/core.h>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::rust {

namespace {

// The index just past the bracket closing the one opened at `open`
// (`(`, `[`, `<` or `{`), or npos; `->` is an arrow, not a closing angle.
size_t closing(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
    else if ((c == ')' || c == ']' || c == '}' || (c == '>' && (i == 0 || s[i - 1] != '-'))) && --depth == 0)
      return i + 1;
  }
  return std::string_view::npos;
}

// The last `::`-separated segment of a path outside any brackets.
std::string last_segment(std::string_view path) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const char c = path[i];
    if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
    else if (c == ')' || c == ']' || c == '}' || (c == '>' && (i == 0 || path[i - 1] != '-'))) --depth;
    else if (depth == 0 && c == ':' && path[i + 1] == ':') start = i + 2;
  }
  return std::string(path.substr(start));
}

// "fn NAME(_1: T, _2: U) -> R {" at the start of a line.
bool read_fn(std::string_view line, MirFn& out) {
  if (!util::starts_with(line, "fn ")) return false;
  line.remove_prefix(3);
  // The parameter list opens at the first `(` outside the name's angle brackets.
  int angle = 0;
  size_t open = std::string_view::npos;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '<') ++angle;
    else if (line[i] == '>' && angle > 0) --angle;
    else if (line[i] == '(' && angle == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos) return false;
  const size_t close = closing(line, open);
  if (close == std::string_view::npos) return false;
  out.name = last_segment(line.substr(0, open));
  out.params.clear();
  for (const auto& p : split_types(line.substr(open + 1, close - open - 2))) {
    const size_t colon = p.find(": ");
    out.params.push_back(colon == std::string::npos ? p : p.substr(colon + 2));
  }
  return true;
}

// A MIR comment line (`// + const_: ...`), not a statement.
bool is_comment(std::string_view line) {
  return util::starts_with(line.substr(std::min(line.size(), line.find_first_not_of(' '))), "//");
}

// The path of a fn item's type (`unsafe extern "C" fn(..) {host::bump}`), or "".
std::string fn_item_path(std::string_view type) {
  const size_t brace = type.rfind('{');
  if (brace == std::string_view::npos || type.empty() || type.back() != '}') return "";
  return std::string(type.substr(brace + 1, type.size() - brace - 2));
}

// A type that is a generic parameter's name (`F`): no path, brackets or pointer.
bool is_type_param(std::string_view type) {
  return !type.empty() && type.find_first_of(" ({[<&*:") == std::string_view::npos;
}

// " // scope N at FILE:L:C: L:C" at the end of a statement.
void read_span(std::string_view line, MirSpan& l) {
  const size_t scope = line.rfind("// scope ");
  if (scope == std::string_view::npos) return;
  const size_t at = line.find(" at ", scope);
  if (at == std::string_view::npos) return;
  std::string_view span = line.substr(at + 4);
  const size_t end = span.rfind(": ");  // before the end position
  if (end == std::string_view::npos) return;
  span = span.substr(0, end);
  const size_t c = span.rfind(':');
  if (c == std::string_view::npos || c == 0) return;
  const size_t l2 = span.rfind(':', c - 1);
  if (l2 == std::string_view::npos) return;
  l.file = std::string(span.substr(0, l2));
  l.line = std::atoi(std::string(span.substr(l2 + 1, c - l2 - 1)).c_str());
  l.column = std::atoi(std::string(span.substr(c + 1)).c_str());
}

// "_N = offload::<F {PATH}, (ARGS), R>(...)": a call of the intrinsic.
bool read_launch(std::string_view line, MirLaunch& out) {
  if (is_comment(line)) return false;
  size_t at = line.find("offload::<");
  if (at == std::string_view::npos) return false;
  // The intrinsic itself: after `= ` or `intrinsics::`, not some other `offload`.
  const std::string_view before = line.substr(0, at);
  if (!util::ends_with(before, "= ") && !util::ends_with(before, "intrinsics::")) return false;
  const size_t open = at + std::string_view("offload::").size();
  const size_t close = closing(line, open);
  if (close == std::string_view::npos) return false;
  const auto generics = split_types(line.substr(open + 1, close - open - 2));
  if (generics.size() != 3) return false;
  const std::string& f = generics[0];
  const std::string& args = generics[1];
  if (args.size() < 2 || args.front() != '(' || args.back() != ')') return false;
  out.path = fn_item_path(f);
  if (!out.path.empty()) out.kernel = last_segment(out.path);
  else if (is_type_param(f)) out.via = f;  // a generic function's parameter: resolved at its calls
  else return false;
  out.args = split_types(std::string_view(args).substr(1, args.size() - 2));
  read_span(line, out);
  return true;
}

struct Pointer {
  bool pointer = false;  // a raw pointer or a reference
  bool mut = false;
  std::string pointee;
};

// `*const T`, `*mut T`, `&T`, `&mut T`, `&'a T`, `&'a mut T`.
Pointer pointer_of(std::string_view t) {
  Pointer p;
  if (util::starts_with(t, "*const ")) return {true, false, std::string(t.substr(7))};
  if (util::starts_with(t, "*mut ")) return {true, true, std::string(t.substr(5))};
  if (!util::starts_with(t, "&")) return {false, false, std::string(t)};
  t.remove_prefix(1);
  if (util::starts_with(t, "'")) {
    const size_t space = t.find(' ');
    t.remove_prefix(space == std::string_view::npos ? t.size() : space + 1);
  }
  if (util::starts_with(t, "mut ")) return {true, true, std::string(t.substr(4))};
  return {true, false, std::string(t)};
}

std::string at(const MirLaunch& l) {
  if (l.file.empty()) return "offload::<..>(" + l.path + ", ..)";
  return fmt::format("{}:{}:{}", l.file, l.line, l.column);
}

// What is wrong with launching `f` (found in `image`) as `l` does; "" when nothing.
std::string launch_problem(const MirLaunch& l, const MirFn& f, const DeviceImage& image) {
  const std::string target = image.target.short_name();
  if (f.params.size() != l.args.size() + 1 || !pointer_of(f.params.front()).pointer)
    return fmt::format(
        "{}: error: kernel `{}` ({} device image) takes {} parameter(s) and this launch passes {}: the "
        "offload runtime passes a launch-environment pointer before the kernel's own arguments, so the "
        "kernel needs it first, `fn {}(_dyn_ptr: *mut u8, ...)`, and the launch (and the host's extern "
        "declaration) leaves it out",
        at(l), l.kernel, target, f.params.size(), l.args.size(), l.kernel);
  for (size_t i = 0; i < l.args.size() && !l.generic; ++i) {
    const Pointer want = pointer_of(f.params[i + 1]), given = pointer_of(l.args[i]);
    if (!want.pointer || !given.pointer) continue;  // the signature checks say why a value cannot pass
    if (want.pointee != given.pointee)
      return fmt::format(
          "{}: error: argument {} of this launch of `{}` is `{}` where the kernel ({} device image) takes "
          "`{}`: the kernel would read memory laid out as the host's type; pass (and declare) it as the "
          "kernel takes it",
          at(l), i + 1, l.kernel, l.args[i], target, f.params[i + 1]);
    if (want.mut && !given.mut)
      return fmt::format(
          "{}: error: argument {} of this launch of `{}` is `{}`, read-only, but the kernel ({} device image) "
          "takes `{}` and may write through it: the runtime copies a read-only argument to the device and "
          "never back, so what the kernel writes would be lost; pass (and declare) it as `*mut {}`",
          at(l), i + 1, l.kernel, l.args[i], target, f.params[i + 1], given.pointee);
  }
  return "";
}

}  // namespace

std::vector<std::string> split_types(std::string_view list) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  auto push = [&](size_t end) {
    std::string part = util::trim(list.substr(start, end - start));
    if (!part.empty()) out.push_back(std::move(part));
  };
  for (size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
    else if (c == ')' || c == ']' || c == '}' || (c == '>' && (i == 0 || list[i - 1] != '-'))) --depth;
    else if (c == ',' && depth == 0) {
      push(i);
      start = i + 1;
    }
  }
  push(list.size());
  return out;
}

namespace {

// "_N = PATH::<GENERICS>(OPERANDS) -> ...": a call of a generic function.
bool read_call(std::string_view line, MirCall& out) {
  if (is_comment(line)) return false;
  const size_t eq = line.find(" = ");
  if (eq == std::string_view::npos) return false;
  const size_t turbofish = line.find("::<", eq);
  if (turbofish == std::string_view::npos) return false;
  const size_t close = closing(line, turbofish + 2);
  if (close == std::string_view::npos || close >= line.size() || line[close] != '(') return false;
  const size_t end = closing(line, close);
  if (end == std::string_view::npos) return false;
  out.callee = last_segment(line.substr(eq + 3, turbofish - eq - 3));
  out.generics = split_types(line.substr(turbofish + 3, close - turbofish - 4));
  out.operands = split_types(line.substr(close + 1, end - close - 2));
  read_span(line, out);
  return true;
}

// The kernel `c` passes for the parameter a launcher takes it by (its
// `index`th operand, else the one fn item type among its type arguments):
// a path, or the caller's own type parameter (`forwarded`), or "".
std::string kernel_at(const MirCall& c, int index, bool& forwarded) {
  forwarded = false;
  if (index >= 0 && size_t(index) < c.operands.size()) {
    std::string op = c.operands[size_t(index)];
    if (util::starts_with(op, "const ")) op = op.substr(6);
    if (!util::starts_with(op, "copy ") && !util::starts_with(op, "move ") && !op.empty() && op[0] != '_') return op;
  }
  std::vector<std::string> items, params;
  for (const auto& g : c.generics) {
    if (std::string path = fn_item_path(g); !path.empty()) items.push_back(std::move(path));
    else if (is_type_param(g)) params.push_back(g);
  }
  if (items.size() == 1) return items.front();
  forwarded = items.empty() && params.size() == 1;
  return forwarded ? params.front() : "";
}

}  // namespace

Mir parse_mir(std::string_view text) {
  Mir mir;
  size_t pos = 0;
  std::string in_fn;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    MirFn f;
    MirLaunch l;
    MirCall c;
    if (read_fn(line, f)) {
      in_fn = f.name;
      mir.functions.push_back(std::move(f));
    } else if (read_launch(line, l)) {
      l.in_fn = in_fn;
      mir.launches.push_back(std::move(l));
    } else if (read_call(line, c)) {
      c.in_fn = in_fn;
      mir.calls.push_back(std::move(c));
    }
  }
  return mir;
}

void resolve_generic_launches(std::vector<Mir>& host) {
  // A function that launches its type parameter `via`, and the launch it makes.
  struct Launcher {
    std::string fn, via;
    MirLaunch launch;
  };
  std::vector<Launcher> todo;
  for (const Mir& m : host)
    for (const MirLaunch& l : m.launches)
      if (!l.via.empty()) todo.push_back({l.in_fn, l.via, l});
  // The parameter of `fn` whose type is `via` (what its calls pass the kernel as).
  auto param_index = [&](const std::string& fn, const std::string& via) {
    for (const Mir& m : host)
      for (const MirFn& f : m.functions)
        if (f.name == fn)
          for (size_t i = 0; i < f.params.size(); ++i)
            if (f.params[i] == via) return int(i);
    return -1;
  };
  std::set<std::string> seen;
  for (size_t i = 0; i < todo.size() && todo.size() < 4096; ++i) {
    if (!seen.insert(todo[i].fn + " " + todo[i].via).second) continue;
    const Launcher l = todo[i];
    const int index = param_index(l.fn, l.via);
    for (Mir& m : host)
      for (size_t k = 0, calls = m.calls.size(); k < calls; ++k) {
        const MirCall& c = m.calls[k];
        if (c.callee != l.fn) continue;
        bool forwarded = false;
        const std::string kernel = kernel_at(c, index, forwarded);
        if (forwarded) {
          todo.push_back({c.in_fn, kernel, l.launch});
        } else if (!kernel.empty()) {
          MirLaunch made = l.launch;
          made.via.clear();
          made.generic = true;
          made.path = kernel;
          made.kernel = last_segment(kernel);
          static_cast<MirSpan&>(made) = c;  // where the call names the kernel
          m.launches.push_back(std::move(made));
        }
      }
  }
}

Result<Mir> read_mir(const fs::path& mir) {
  const auto text = util::read_file(mir);
  if (!text) return Error::failure(mir.string() + ": cannot read the MIR rustc was asked to write (missing or over 64 MiB)");
  return parse_mir(*text);
}

Result<DeviceImage> read_device_image(const Toolchain& tc, const manifest::Target& t, const fs::path& image,
                                      const fs::path& mir) {
  DeviceImage out{t, {}, {}};
  auto parsed = read_mir(mir);
  if (!parsed) return parsed.error();
  out.functions = std::move(parsed->functions);
  const fs::path nm = tc.root / "bin" / "llvm-nm";
  auto listed = process::capture(
      process::Command{{nm.string(), "--defined-only", "--extern-only", "--format=just-symbols", image.string()}, {}, {}},
      60'000);
  if (!listed) return listed.error();
  if (listed->exit_code != 0)
    return Error::failure(fmt::format("{} cannot list the symbols of {}: {}", nm.string(), image.string(),
                                      util::trim(listed->err)));
  for (const auto& s : util::split(listed->out, '\n'))
    if (!util::trim(s).empty()) out.symbols.insert(util::trim(s));
  return out;
}

std::vector<std::string> image_kernels(const DeviceImage& image) {
  std::vector<std::string> out;
  for (const auto& f : image.functions)
    if (image.symbols.count(f.name) && std::find(out.begin(), out.end(), f.name) == out.end()) out.push_back(f.name);
  std::sort(out.begin(), out.end());
  return out;
}

Result<void> check_launches(const std::vector<Mir>& host, const std::vector<DeviceImage>& images,
                            const std::string& device_cfg, const std::optional<std::set<std::string>>& launched) {
  std::vector<std::string> problems;
  auto add = [&](std::string p) {
    if (!p.empty() && std::find(problems.begin(), problems.end(), p) == problems.end()) problems.push_back(std::move(p));
  };
  // Each target's images (one per kernel crate): a launch needs its kernel in one of them.
  std::vector<manifest::Target> targets;
  for (const auto& image : images)
    if (std::find(targets.begin(), targets.end(), image.target) == targets.end()) targets.push_back(image.target);
  // The program's launched symbols that no launch is named after: those of
  // host declarations renamed by #[link_name] (what a renamed launch is of).
  std::set<std::string> renamed_symbols, renamed_paths;
  if (launched) {
    renamed_symbols = *launched;
    for (const Mir& mir : host)
      for (const MirLaunch& l : mir.launches) {
        if (!l.via.empty()) continue;
        renamed_symbols.erase(l.kernel);
        if (!launched->count(l.kernel)) renamed_paths.insert(l.path);
      }
  }
  for (const Mir& mir : host)
    for (const MirLaunch& l : mir.launches)
      for (const auto& t : targets) {
        if (!l.via.empty()) continue;  // checked where a call names its kernel (resolve_generic_launches)
        const DeviceImage* found = nullptr;
        std::vector<std::string> kernels;
        auto defined = [&](const std::string& symbol) {
          for (const auto& image : images)
            if (image.target == t && image.symbols.count(symbol)) return &image;
          return static_cast<const DeviceImage*>(nullptr);
        };
        for (const auto& image : images) {
          if (!(image.target == t)) continue;
          for (auto& k : image_kernels(image)) kernels.push_back(std::move(k));
        }
        std::string symbol = l.kernel;
        if (!(found = defined(symbol)) && launched && !launched->count(l.kernel)) {
          // The program launches no `kernel`: this declaration is renamed (or
          // the launch was not compiled in). Its symbol is one of the
          // program's renamed ones: each must be defined.
          std::vector<std::string> missing;
          for (const auto& r : renamed_symbols)
            if (!defined(r)) missing.push_back(r);
          if (!missing.empty()) {
            add(fmt::format(
                "{}: error: this launch of `{}` is of a renamed symbol (the program launches no `{}`; #[link_name]), "
                "and the program launches `{}`, which the {} device image does not define (it defines {}): the "
                "program would stop at run time (`Failed to load kernel {}`). Give the kernel that symbol in the "
                "device pass (#[unsafe(no_mangle)] on a fn of that name, or #[unsafe(export_name = \"{}\")])",
                at(l), l.path, l.kernel, util::join(missing, "`, `"), t.short_name(),
                kernels.empty() ? std::string("no kernel") : "`" + util::join(kernels, "`, `") + "`", missing.front(),
                missing.front()));
            continue;
          }
          // Only one renamed declaration and symbol: that is this launch's, and the kernel's types can be compared.
          if (renamed_symbols.size() != 1 || renamed_paths.size() != 1) continue;
          symbol = *renamed_symbols.begin();
          found = defined(symbol);
        }
        if (!found) {
          add(fmt::format(
              "{}: error: this launch of `{}` finds no kernel `{}` in the {} device image, which defines {}: "
              "the program would stop at run time (`Failed to load kernel {}`). Define it in the device pass "
              "(under #[cfg({})]) as `#[unsafe(no_mangle)] #[rustc_offload_kernel] pub extern \"C\" fn {}"
              "(_dyn_ptr: *mut u8, ...)` (without #[unsafe(no_mangle)] its symbol is mangled), or launch one "
              "of the kernels it has",
              at(l), l.path, l.kernel, t.short_name(),
              kernels.empty() ? std::string("no kernel") : "`" + util::join(kernels, "`, `") + "`", l.kernel,
              device_cfg, l.kernel));
          continue;
        }
        // The kernel's MIR, by its symbol (a kernel renamed by #[export_name] has another name there: not compared).
        const auto f = std::find_if(found->functions.begin(), found->functions.end(),
                                    [&](const MirFn& fn) { return fn.name == symbol; });
        if (f != found->functions.end()) add(launch_problem(l, *f, *found));
      }
  if (problems.empty()) return {};
  return Error::failure(util::join(problems, "\n"));
}

}  // namespace ob::toolchain::rust
