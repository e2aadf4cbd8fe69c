// Launcher mode's entry: recognizing `offload-build COMPILER ARGS...`, the
// settings and the prefix, then the command set up once (launcher_setup.cpp),
// classified and handed to its path (compile, link, one-step build), whose
// plan launcher_run.cpp runs; else run unchanged (launcher_unchanged.cpp).
#include "offload_build/run/launcher.hpp"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "offload_build/config/config.hpp"
#include "offload_build/exec/remote/setting.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/run/session.hpp"
#include "offload_build/run/launcher_prefix.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/toolchain/frontends/compiler_wrapper.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/frontends/plain_compile.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/strings.hpp"
#include "launcher_build.hpp"
#include "launcher_compile.hpp"
#include "launcher_link.hpp"
#include "launcher_plain.hpp"
#include "launcher_setup.hpp"
#include "launcher_unchanged.hpp"

namespace ob::run {

bool looks_like_compiler(const std::string& name) {
  return toolchain::frontend::recognize(name, std::nullopt) || toolchain::frontend::is_gcc(name);
}

namespace {

// The command set up (prepare) asked of its frontend once each, in turn,
// whether it is an offload compile, link or one-step build, going straight
// to that path, whose plan launcher_run.cpp runs. -1 with `l.why` when it
// runs unchanged: the compile's reason, and the link's when that says more.
int split(Launch& l, const Request& o, const std::function<Session&()>& session) {
  const LaunchSetup& setup = *l.setup;
  Unchanged& why = l.why;
  // A path's plan run (launcher_run.cpp); `failed` says why when it cannot be.
  auto run = [&](const LauncherPath& path, Unchanged& failed) {
    return run_path(path, setup, session(), l.command, failed).value_or(-1);
  };
  const toolchain::frontend::Frontend& frontend = *setup.frontend;
  auto compile = frontend.parse(setup.argv);
  if (!compile.compile) why = compile.unchanged();
  else if (const int code = run([&](Session& s) { return split_compile(setup, *compile.compile, s, why); }, why); code >= 0) return code;
  Unchanged link_why;
  const auto link = frontend.parse_link(setup.argv);
  if (!link.link) link_why.reason = link.pass_reason;
  else if (const int code = run([&](Session&) { return cached_link(setup, *link.link, link_why.reason); }, link_why); code >= 0) return code;
  const auto build = frontend.parse_build(setup.argv);
  if (build.one_step) {  // a one-step offload build: its reason when not split
    why = {build.pass_reason, toolchain::frontend::unchanged::kOneStep, {}};
    if (build.build)
      if (const int code = run([&](Session& s) { return split_build(setup, *build.build, s, why); }, why); code >= 0) return code;
    return -1;
  }
  // The same reason twice (an unreadable response file stops both) is said once.
  if (link_why.reason != why.reason) why.reason += "; " + link_why.reason;
  return -1;
}

}  // namespace

bool is_launcher_call(const std::vector<std::string>& subcommands, const std::string& first) {
  if (first.empty() || first.front() == '-' || first == "help") return false;
  if (std::find(subcommands.begin(), subcommands.end(), first) != subcommands.end()) return false;
  if (first.find('/') != std::string::npos) {
    std::error_code ec;
    return access(first.c_str(), X_OK) == 0 && !fs::is_directory(first, ec);
  }
  if (looks_like_compiler(first)) return true;
  const char* path = config::env_or_null("PATH");
  return path && toolchain::find_in_path(first, path).has_value();
}

int launch(const std::vector<std::string>& given, const Request& options) {
  std::vector<std::string> command = given;
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    std::cerr << "offload-build: error: no compiler command; usage: offload-build wrap -- "
                 "COMPILER ARGS... (or offload-build COMPILER ARGS...)\n";
    return exit_code::usage;
  }
  Request o = options;
  // The settings in force (config files, OFFLOAD_BUILD_* variables): how make
  // and ninja pass them to every compile.
  const config::Config& c = o.config;
  if (auto settings = resolve_settings(o); !settings) {
    std::cerr << "offload-build: error: " << settings.error().message << '\n';
    return exit_code::usage;
  }
  storage::hide_remote_credentials(c);  // before the compiler, run unchanged or not
  exec::hide_remote_execution_secrets(c);
  process::set_echo_policy({c.flag("verbose"), nullptr});
  Launch l;
  l.command = std::move(command);
  // Made for the path that takes the command, before any descriptor of ours
  // is open: make's closed jobserver descriptors must not be mistaken for the
  // cache's or the signal self-pipe's.
  std::optional<Session> made;
  const std::function<Session&()> session = [&]() -> Session& { return made ? *made : made.emplace(o); };
  try {
    prepare(l, o);
    // A test hook (tests/integration/test_hardening.cpp): an internal error on demand.
    if (l.setup && c.flag("test_hook_internal_error"))
      throw std::runtime_error("OFFLOAD_BUILD_TEST_HOOK_INTERNAL_ERROR is set");
    if (l.setup)
      if (const int code = split(l, o, session); code >= 0) return code;
    // Not split: cached as one job where it can be, as ccache caches it.
    if (const int code = cache_plain(l, o, session); code >= 0) return code;
  } catch (const std::exception& e) {
    // Never fail where the compiler would succeed (as ccache): run it
    // unchanged, counted under its own reason.
    l.why = {"internal error: " + util::shorten(e.what(), 300), toolchain::frontend::unchanged::kInternal, {}};
  }
  made.reset();  // as before any path took the command: nothing of ours open
  if (l.setup && l.why.relative_paths && !l.setup->bases.empty()) return pass_through(l.setup->argv, l.why, o, l.prefix);
  return pass_through(l.given, l.why, o, l.prefix);
}

}  // namespace ob::run
