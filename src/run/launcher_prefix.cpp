// ccache's prefix_command in launcher mode: compiles with no offload run
// through the prefix (distcc, icecc), every offload job here. A distcc or
// icecc in the compiler position (`offload-build distcc clang ...`, CMake's
// launcher list "offload-build;distcc"), or a compiler that is a link to one
// (/usr/lib/distcc/clang-22), is taken as that prefix, with one note per build
// that offload compiles run locally. docs/DISTRIBUTED.md.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "offload_build/config/config.hpp"
#include "offload_build/run/build_context.hpp"
#include "offload_build/run/launcher_prefix.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"
#include "offload_build/util/strings.hpp"
#include "launcher_compile.hpp"
#include "launcher_unchanged.hpp"

namespace ob::run {

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

void note_local_offload(const Prefix& prefix, const Request& o) {
  if (prefix.wrapper.empty() || o.config.flag("quiet")) return;
  const std::string name = fs::path(prefix.wrapper).filename().string();
  if (!o.config.flag("no_cache") && !first_in_build(local_cache(o.config).dir(), "prefix:" + name))
    return;
  const bool remote = name == "distcc" || name == "icecc";
  std::cerr << "offload-build: note: offload compiles run locally, not through " << name
            << (remote ? " (a remote compile would drop their device code or mismatch kernel names)" : "")
            << "; compiles without offload go through it, as with prefix_command=" << name
            << " (said once per build; docs/DISTRIBUTED.md)\n";
}

}  // namespace ob::run
