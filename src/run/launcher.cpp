// Launcher mode's entry: recognizing `offload-build COMPILER ARGS...`, the
// environment, the command set up once and classified (split), and running
// a command unchanged (pass-through).
#include "offload_build/run/launcher.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "offload_build/exec/remote_runner.hpp"
#include "offload_build/run/launcher_prefix.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/storage/remote/layered.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/report/timeline.hpp"
#include "offload_build/report/trace_json.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"
#include "offload_build/toolchain/frontends/compiler_wrapper.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/strings.hpp"
#include "launcher_build.hpp"
#include "launcher_compile.hpp"
#include "launcher_link.hpp"
#include "launcher_roots.hpp"
#include "launcher_unchanged.hpp"

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
  // The command line the driver works on: response and configuration files read.
  std::string problem;
  auto driven = s.frontend->driver_argv(command, s.cwd, s.compiler, &problem);
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

namespace {

// A registered frontend's driver (clang*, flang*), gcc, g++, cc, c++ (with a
// target prefix or version suffix).
bool looks_like_compiler(const std::string& name) {
  if (toolchain::frontend::recognize(name, std::nullopt)) return true;
  for (std::string_view c : {"cc", "c++", "gcc", "g++"}) {
    if (name == c || util::ends_with(name, "-" + std::string(c)) ||
        util::starts_with(name, std::string(c) + "-"))
      return true;
  }
  return false;
}

// Wait for the pass-through compiler and end the way it ended.
int wait_like(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return exit_code::failure;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (!WIFSIGNALED(status)) return exit_code::failure;
  const int sig = WTERMSIG(status);
  // Die of the same signal where that is harmless (no core dump of our own).
  if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGPIPE) {
    std::signal(sig, SIG_DFL);
    raise(sig);
  }
  return 128 + sig;
}

// `command` runs unchanged, through `prefix` (prefix_command) when one is set
// and it compiles no device code.
int pass_through(const std::vector<std::string>& compile, const Unchanged& why, const Request& o,
                 const Prefix& prefix) {
  std::vector<std::string> command = compile;
  const bool prefixed = !prefix.words.empty() && may_run_remotely(compile);
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  if (prefixed && !prefix.name.empty()) {  // a masquerade: as the wrapper run as the link
    command.front() = prefix.name;
    env.emplace_back("PATH", prefix.path);
  }
  if (prefixed) command.insert(command.begin(), prefix.words.begin(), prefix.words.end());
  if (o.dry_run) {
    if (o.config.flag("verbose")) std::cerr << "offload-build: running the compiler unchanged: " << why.reason << '\n';
    std::cout << util::shell_join(command) << '\n';
    return exit_code::ok;
  }
  note_unchanged(why, o);
  // --trace: the compile is one event of the make/ninja run's trace.
  std::optional<report::StepTimeline> timeline;
  std::optional<report::TimedStep> step;
  const auto trace = o.config.path("trace");
  if (trace) {
    const std::string name =
        fs::path(command.front()).filename().string() + " " + toolchain::frontend::output_arg(command);
    timeline.emplace(name, "launcher");
    step.emplace(&*timeline, "unchanged", "", "unchanged (" + why.code + ") " + name);
  }
  // stdin, stdout and stderr are inherited: the output is the compiler's own.
  auto pid = process::spawn(process::Command{command, {}, env});
  if (!pid) {
    std::cerr << "offload-build: error: " << (prefixed ? "prefix_command: " : "") << pid.error().message << '\n';
    return 127;  // as a shell says for a command it cannot run
  }
  const int code = wait_like(*pid);
  if (step) {
    step->done(code == 0 ? "ran" : "failed");
    if (auto added = report::append_trace(*trace, timeline->finish(code == 0 ? report::BuildResult::Ok : report::BuildResult::Failed));
        !added)
      std::cerr << "offload-build: warning: " << added.error().message << '\n';
  }
  write_launcher_report(o, command, nullptr, &why, code);
  return code;
}

// An MPI compiler wrapper (mpicxx, mpifort ...) is replaced by the command it
// runs when that compiler is a registered frontend's (clang, flang); otherwise
// the reason it runs unchanged.
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

// `command` set up once (launch_setup: the compiler found and recognized,
// response and config files read, paths made base-relative) and asked of its
// frontend once each, in turn, whether it is an offload compile, link or
// one-step build, going straight to that path. -1 with `why` when it runs
// unchanged: the compile's reason, and the link's when that says more.
int split(const std::vector<std::string>& command, const Request& o, Unchanged& why) {
  const auto setup = launch_setup(command, o, why);
  if (!setup) return -1;
  const toolchain::frontend::Frontend& frontend = *setup->frontend;
  auto compile = frontend.parse(setup->argv);
  if (!compile.compile) why = compile.unchanged();
  else if (const int code = split_compile(*setup, *compile.compile, command, o, why); code >= 0) return code;
  std::string link_reason;
  const auto link = frontend.parse_link(setup->argv);
  if (!link.link) link_reason = link.pass_reason;
  else if (const int code = cached_link(*setup, *link.link, command, o, link_reason); code >= 0) return code;
  const auto build = frontend.parse_build(setup->argv);
  if (build.one_step) {  // a one-step offload build: its reason when not split
    why = {build.pass_reason, toolchain::frontend::unchanged::kOneStep, {}};
    if (build.build)
      if (const int code = split_build(*setup, *build.build, command, o, why); code >= 0) return code;
    return -1;
  }
  // The same reason twice (an unreadable response file stops both) is said once.
  if (link_reason != why.reason) why.reason += "; " + link_reason;
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
  const Prefix prefix = take_prefix(command, o);  // `distcc clang ...`: the compiler is clang
  storage::hide_remote_credentials(c);  // before the compiler, run unchanged or not
  exec::hide_remote_execution_secrets(c);
  process::set_echo_policy({c.flag("verbose"), nullptr});
  if (c.flag("disable"))
    return pass_through(command, {"OFFLOAD_BUILD_DISABLE is set", toolchain::frontend::unchanged::kDisabled, {}}, o,
                        prefix);
  const std::vector<std::string> given_command = command;  // what runs when not split
  if (toolchain::frontend::is_compiler_wrapper_name(command.front()))
    if (auto why = unwrap(command, o)) return pass_through(given_command, *why, o, prefix);
  if (!prefix.wrapper.empty() && !may_run_remotely(command)) note_local_offload(prefix, o);
  Unchanged why;
  try {
    // A test hook (tests/integration/test_hardening.cpp): an internal error on demand.
    if (c.flag("test_hook_internal_error"))
      throw std::runtime_error("OFFLOAD_BUILD_TEST_HOOK_INTERNAL_ERROR is set");
    if (const int code = split(command, o, why); code >= 0) return code;
  } catch (const std::exception& e) {
    // Never fail where the compiler would succeed (as ccache): run it
    // unchanged, counted under its own reason.
    why = {"internal error: " + util::shorten(e.what(), 300), toolchain::frontend::unchanged::kInternal, {}};
  }
  return pass_through(given_command, why, o, prefix);
}

}  // namespace ob::run
