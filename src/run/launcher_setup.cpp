// Launcher mode: a command set up once, before it is classified (compile,
// link or one-step build): its prefix taken, the MPI wrapper unwrapped, the
// compiler found and recognized, response and config files read, paths made
// base-relative.
//
// The prefix is ccache's prefix_command: compiles with no offload run
// through it (distcc, icecc), every offload job here. A distcc or icecc in
// the compiler position (`offload-build distcc clang ...`, CMake's launcher
// list "offload-build;distcc"), or a compiler that is a link to one
// (/usr/lib/distcc/clang-22), is taken as that prefix, with one note per
// build that offload compiles run locally. docs/DISTRIBUTED.md.
#include "launcher_setup.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "offload_build/config/config.hpp"
#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/run/session.hpp"
#include "offload_build/run/launcher_prefix.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"
#include "offload_build/toolchain/frontends/compiler_wrapper.hpp"
#include "offload_build/util/strings.hpp"
#include "launcher_roots.hpp"

namespace ob::run {

std::optional<fs::path> resolve_program(const std::string& name, const fs::path& cwd) {
  if (name.find('/') != std::string::npos) {
    fs::path p = fs::path(name).is_absolute() ? fs::path(name) : cwd / name;
    std::error_code ec;
    return fs::exists(p, ec) ? std::optional(p) : std::nullopt;
  }
  const char* path = config::env_or_null("PATH");
  return path ? toolchain::find_in_path(name, path) : std::nullopt;
}

namespace {

// Programs that run a compiler given after them, elsewhere or cached.
bool is_compiler_wrapper(const std::string& word) {
  const std::string name = fs::path(word).filename().string();
  return name == "distcc" || name == "icecc" || name == "ccache" || name == "sccache";
}

// A masquerade link (/usr/lib/distcc/clang-22, /usr/lib/ccache/clang-22, on
// PATH or named by path): the wrapper it is, and the compiler of that name it
// stands for, found on PATH as the wrapper finds it (skipping links to itself).
// PATH without the directories where `name` is a link to a wrapper.
std::string path_without_masquerades(const std::string& name) {
  const char* path = config::env_or_null("PATH");
  std::vector<std::string> kept;
  for (const auto& dir : util::split(path ? path : "", ':')) {
    std::error_code ec;
    const fs::path real = fs::canonical(fs::path(dir.empty() ? "." : dir) / name, ec);
    if (ec || !is_compiler_wrapper(real.string())) kept.push_back(dir);
  }
  return util::join(kept, ":");
}

std::optional<std::pair<fs::path, fs::path>> masquerade(const std::string& compiler, const fs::path& cwd) {
  std::error_code ec;
  const auto found = resolve_program(compiler, cwd);
  if (!found) return std::nullopt;
  const fs::path wrapper = fs::canonical(*found, ec);
  if (ec || !is_compiler_wrapper(wrapper.string())) return std::nullopt;
  const std::string name = fs::path(compiler).filename().string();
  const char* path = config::env_or_null("PATH");
  for (const auto& dir : util::split(path ? path : "", ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    const fs::path real = fs::canonical(candidate, ec);
    if (!ec && real != wrapper && !is_compiler_wrapper(real.string()) && access(candidate.c_str(), X_OK) == 0)
      return std::pair(wrapper, candidate.is_absolute() ? candidate : cwd / candidate);
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> split_prefix_command(std::string_view setting) {
  std::vector<std::string> words;
  for (auto& w : util::split(setting, ' '))  // as ccache splits it: spaces, no quoting
    if (!w.empty()) words.push_back(std::move(w));
  return words;
}

Prefix take_prefix(std::vector<std::string>& command, const Request& o) {
  Prefix p;
  p.words = split_prefix_command(o.config.text("prefix_command"));
  std::error_code ec;
  // `distcc clang ...`, not distcc's own `distcc -c x.c` (its default compiler) or `distcc --help`.
  if (command.size() > 1 && is_compiler_wrapper(command[0]) && !command[1].empty() &&
      command[1].front() != '-' && resolve_program(command[1], fs::current_path(ec))) {
    p.wrapper = command.front();
    p.words.push_back(p.wrapper);
    command.erase(command.begin());
  } else if (!command.empty() && !is_compiler_wrapper(command[0])) {
    if (auto m = masquerade(command[0], fs::current_path(ec))) {  // PATH=/usr/lib/distcc:$PATH
      p.wrapper = m->first.string();
      p.words.push_back(p.wrapper);
      if (command[0].find('/') == std::string::npos) {  // found on PATH: the wrapper gets the name
        p.name = command[0];
        p.path = path_without_masquerades(command[0]);
      }
      command[0] = m->second.string();
    }
  }
  return p;
}

bool may_run_remotely(const std::vector<std::string>& command) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec || command.empty()) return false;
  // What the driver works on: configuration files read, CCC_OVERRIDE_OPTIONS
  // applied; in doubt (an edit not modeled, a default configuration file
  // that may apply, a file that cannot be read), the compile stays here.
  const auto compiler = resolve_program(command.front(), cwd);
  return compiler && toolchain::frontend::compiles_no_device_code(command, *compiler, cwd);
}

PrefixedCommand through_prefix(std::vector<std::string> argv, const Prefix& prefix,
                               const std::vector<std::string>& compile) {
  PrefixedCommand c{std::move(argv), {}, !prefix.words.empty() && may_run_remotely(compile)};
  if (!c.prefixed) return c;
  if (!prefix.name.empty()) {  // a masquerade: as the wrapper run as the link
    c.argv.front() = prefix.name;
    c.env.emplace_back("PATH", prefix.path);
  }
  c.argv.insert(c.argv.begin(), prefix.words.begin(), prefix.words.end());
  return c;
}

void note_local_offload(const Prefix& prefix, const Request& o) {
  if (prefix.wrapper.empty() || o.config.flag("quiet")) return;
  const std::string name = fs::path(prefix.wrapper).filename().string();
  if (!o.config.flag("no_cache") && !first_in_build(cache_dir_for(o.config, std::nullopt), "prefix:" + name))
    return;
  const bool remote = name == "distcc" || name == "icecc";
  std::cerr << "offload-build: note: offload compiles run locally, not through " << name
            << (remote ? " (a remote compile would drop their device code or mismatch kernel names)" : "")
            << "; compiles without offload go through it, as with prefix_command=" << name
            << " (said once per build; docs/DISTRIBUTED.md)\n";
}


std::optional<Unchanged> unwrap(std::vector<std::string>& command, const Request& o) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  const auto program = resolve_program(command.front(), cwd);
  if (ec || !program) return std::nullopt;  // the compile's own checks say it
  const std::string name = fs::path(command.front()).filename().string();
  auto u = toolchain::frontend::unwrap_compiler(command, *program, cwd);
  if (!u) return Unchanged{u.error().message, toolchain::frontend::unchanged::kCompiler, {}};
  const auto compiler = resolve_program(u->command.front(), cwd);
  if (!toolchain::frontend::recognize(u->command.front(), compiler))
    return Unchanged{name + " (" + u->family + ") wraps " + u->command.front() + ", not clang or flang",
                     toolchain::frontend::unchanged::kCompiler, {}};
  if (o.config.flag("verbose"))
    std::cerr << "offload-build: " << name << " (" << u->family << ") runs " << util::shell_join(u->command) << '\n';
  command = std::move(u->command);
  return std::nullopt;
}

std::optional<LaunchSetup> launch_setup(const std::vector<std::string>& command, const Request& o,
                                        Unchanged& why) {
  using namespace toolchain::frontend::unchanged;
  auto pass = [&](std::string reason, const char* code) -> std::optional<LaunchSetup> {
    why = {std::move(reason), code, {}};
    return std::nullopt;
  };
  LaunchSetup s;
  std::error_code ec;
  s.cwd = fs::current_path(ec);
  if (ec) return pass("no current directory", kPaths);
  const auto compiler = resolve_program(command.front(), s.cwd);
  if (!compiler) return pass(command.front() + " not found", kCompiler);
  s.frontend = toolchain::frontend::recognize(command.front(), *compiler);
  if (!s.frontend) return pass(command.front() + " is not a compiler offload-build splits (clang, flang)", kCompiler);
  s.compiler = *compiler;
  if (const fs::path real = fs::canonical(s.compiler, ec); !ec)
    if (auto tc = toolchain::toolchain_at(real.parent_path().parent_path())) s.toolchain = std::move(*tc);
  // The command line the driver works on: response and configuration files read.
  std::string problem;
  auto driven = s.frontend->driver_argv(command, s.cwd, s.compiler, &problem, Session::probe_memo_of(o.config));
  if (!driven) return pass(problem, kPaths);
  if (!driven->doubt.empty()) {
    why = {driven->doubt, kOption, "clang configuration"};
    return std::nullopt;
  }
  s.expanded = std::move(driven->argv);
  std::tie(s.bases, s.anchor) = launcher_roots(o, s.cwd);
  s.argv = s.expanded;
  for (const auto& base : s.bases) s.argv = s.frontend->relative_to_base(std::move(s.argv), base, s.cwd);
  return s;
}

void prepare(Launch& l, const Request& o) {
  l.given = l.command;
  l.prefix = take_prefix(l.command, o);  // `distcc clang ...`: the compiler is clang
  l.given = l.command;
  if (o.config.flag("disable")) {
    l.why = {"OFFLOAD_BUILD_DISABLE is set", toolchain::frontend::unchanged::kDisabled, {}};
    return;
  }
  if (toolchain::frontend::is_compiler_wrapper_name(l.command.front()))
    if (auto wrapped = unwrap(l.command, o)) {
      l.why = std::move(*wrapped);
      return;
    }
  if (!l.prefix.wrapper.empty() && !may_run_remotely(l.command)) note_local_offload(l.prefix, o);
  l.setup = launch_setup(l.command, o, l.why);
}

}  // namespace ob::run
