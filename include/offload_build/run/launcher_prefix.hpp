// ccache's prefix_command in launcher mode (src/run/launcher_setup.cpp): compiles
// with no offload run through the prefix (distcc, icecc), every offload job
// here. docs/DISTRIBUTED.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "offload_build/run/request.hpp"

namespace ob::run {

// ccache's prefix_command: words put before a compile that compiles no device
// code (distcc, icecc), split as ccache splits the setting (on spaces, no
// quoting); `wrapper` is a distcc/icecc/ccache/sccache taken from the
// compiler position (`distcc clang ...`) or the one a compiler links to
// (/usr/lib/distcc/clang-22), also the last of `words`.
struct Prefix {
  std::vector<std::string> words;
  std::string wrapper;
  // A masquerade's compiler as the wrapper is given it when the compile goes
  // through it: by name, with PATH without the masquerade directories, as the
  // wrapper run as the link would (distccd refuses a compiler by absolute
  // path outside /usr/bin); empty otherwise.
  std::string name;
  std::string path;
};
std::vector<std::string> split_prefix_command(std::string_view setting);
// The prefix of this launcher call: prefix_command, then a wrapper in the
// compiler position, which leaves `command`, or a masquerade link, whose
// compiler `command` then names (the real compiler on PATH).
Prefix take_prefix(std::vector<std::string>& command, const Request& options);
// Whether `command` may run through the prefix: it compiles no device code
// (frontend::compiles_no_device_code; an unreadable response file: no).
bool may_run_remotely(const std::vector<std::string>& command);
// A command as it runs, through the prefix or not.
struct PrefixedCommand {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::optional<std::string>>> env;  // a masquerade's PATH
  bool prefixed = false;
};
// `argv` run through `prefix` when there is one and `compile` (the command
// as given) may run remotely: the prefix's words first, a masquerade's
// compiler by its name with its PATH; else `argv` as it is.
PrefixedCommand through_prefix(std::vector<std::string> argv, const Prefix& prefix,
                               const std::vector<std::string>& compile);
// The wrapper form's note that offload compiles run here, once per build.
void note_local_offload(const Prefix& prefix, const Request& options);

}  // namespace ob::run
