#include "offload_build/cli/app.hpp"
#include "offload_build/config/config.hpp"
#include "config_command.hpp"

#include "offload_build/exec/remote/setting.hpp"
#include "offload_build/storage/remote/layered.hpp"

#include <algorithm>
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "offload_build/cli/cargo_command.hpp"
#include "cargo_args.hpp"
#include "offload_build/cli/commands.hpp"
#include "offload_build/run/launcher.hpp"
#include "offload_build/run/masquerade.hpp"
#include "offload_build/util/style.hpp"
#include "offload_build/toolchain/doctor.hpp"
#include "offload_build/util/strings.hpp"
#include "offload_build/run/pictures.hpp"
#include "cache_cli.hpp"
#include "init_command.hpp"
#include "options.hpp"

namespace ob::cli {

namespace {

int report_error(const Error& e) {
  // Diagnostics that already say "error:" (file:line:col: error: ...) print as they are.
  // Every line at most 1000 bytes: a message quoting a huge value (a 100 KB
  // manifest string, an argv) stays readable.
  const std::string message = util::shorten_lines(e.message, 1000);
  const std::string first_line = message.substr(0, message.find('\n'));
  if (first_line.find("error:") != std::string::npos) std::cerr << util::paint_diagnostic(message) << '\n';
  else std::cerr << util::paint_diagnostic("offload-build: error: " + message) << '\n';
  return e.code;
}

// `offload-build [OPTIONS] wrap [--] COMPILER ARGS...`: the index of `wrap`;
// what follows is the compiler's and CLI11 must not see it. argc when none.
int wrap_index(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg != "wrap") continue;
    const CLI::Option* prev = app.get_option_no_throw(argv[i - 1]);
    if (prev && prev->get_expected_min() > 0) continue;  // an option's value, as in -C wrap
    return i;
  }
  return argc;
}

// `run ... -m event -s small` without `--`: options offload-build does not
// know after `run` (and the words among them) are the program's. An error
// naming them in their order, with the command line that puts them after `--`.
int stray_program_arguments(const CLI::App& app, const CLI::App& run, int argc, char** argv) {
  auto known = [&](const std::string& token, bool& takes_value) {
    std::string name = token.substr(0, token.find('='));
    const CLI::Option* opt = run.get_option_no_throw(name);
    if (!opt) opt = app.get_option_no_throw(name);
    if (!opt && token.size() > 2 && token[1] != '-') {  // -j4
      opt = app.get_option_no_throw(token.substr(0, 2));
      return opt != nullptr && opt->get_expected_min() > 0;
    }
    takes_value = opt && opt->get_expected_min() > 0 && name == token;
    return opt != nullptr;
  };
  int run_at = 1;
  while (run_at < argc && std::string_view(argv[run_at]) != "run") ++run_at;
  std::vector<std::string> ours{"offload-build"}, theirs, unknown;
  int i = 1;
  for (; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    const std::string token = argv[i];
    bool takes_value = false;
    if (i <= run_at || (token.size() > 1 && token[0] == '-' && known(token, takes_value))) {
      ours.push_back(token);
      if (takes_value && i + 1 < argc) ours.emplace_back(argv[++i]);
      continue;
    }
    theirs.push_back(token);
    if (token.size() > 1 && token[0] == '-') unknown.push_back(token);
  }
  ours.emplace_back("--");
  ours.insert(ours.end(), theirs.begin(), theirs.end());
  for (++i; i < argc; ++i) ours.emplace_back(argv[i]);
  std::cerr << "offload-build: error: run does not know " << util::join(unknown, " ")
            << "; arguments for the program go after `--`:\n  " << util::shell_join(ours) << '\n';
  return exit_code::usage;
}

// What the commands' options fill, and what every handler reads.
struct Call {
  Request global;
  ProgramOptions run_options;
  CacheCli cache_cli;
  ConfigCli config_cli;
  InitOptions init_options;
  fs::path trace_to_draw;
  fs::path masquerade_dir;                 // masquerade DIR
  std::vector<std::string> masquerade_names;  // and NAME...
  CLI::App* cargo = nullptr;
  int argc = 0;
  char** argv = nullptr;
  int program_at = 0;  // verify's PROGRAM
  std::string flags_compiler;            // runtime-flags --compiler
  std::vector<std::string> flags_targets;  // runtime-flags TARGET...
};

// A command word: its --help line (null: it adds itself and its
// subcommands), whether the global options may follow it, its own options,
// and what it runs (after the settings are resolved).
struct Command {
  const char* name;
  const char* help;
  bool fallthrough;
  void (*add)(CLI::App& app, CLI::App* sub, Call& call);
  Result<int> (*handle)(Call& call);
};

Result<int> exit_of(const Result<fs::path>& built) {
  if (!built) return built.error();
  return exit_code::ok;
}

// In the order `offload-build --help` lists them.
const Command kCommands[] = {
    {"build", "Build the project described by the manifest", true,
     [](CLI::App&, CLI::App* sub, Call& c) {
       sub->add_flag("--compdb", c.global.compdb,
                     "Also write compile_commands.json (every host and device pass) into the "
                     "build directory, for clangd");
     },
     [](Call& c) { return exit_of(build(c.global)); }},
    {"run", "Build, then run the program (OMP_TARGET_OFFLOAD=MANDATORY unless set)", true,
     [](CLI::App&, CLI::App* sub, Call& c) {
       sub->add_flag("--verify", c.run_options.verify,
                     "Read the offload runtime's log, print a summary, fail if no kernel "
                     "was launched on an offload device");
       sub->add_option("args", c.run_options.args, "Arguments for the program (after --)");
     },
     [](Call& c) { return run(c.global, c.run_options); }},
    {"doctor", "List the tools, device runtimes and GPUs found, and what that means for each target", true,
     nullptr,
     [](Call& c) -> Result<int> {
       const int code = toolchain::run_doctor(std::nullopt, c.global.config.path("llvm"), std::cout);
       doctor_remotes(c.global, std::cout);  // a remote is optional: never changes the exit code
       return code;
     }},
    {"runtime-flags",
     "Print (JSON) the compile options COMPILER needs to reach its LLVM's device runtime for TARGET... "
     "(the CMake package's offload_build_targets asks)",
     false,
     [](CLI::App&, CLI::App* sub, Call& c) {
       sub->add_option("--compiler", c.flags_compiler, "The C or C++ compiler (a path or a name on PATH)")->required();
       sub->add_option("targets", c.flags_targets, "Offload targets: host, sm_XX, gfxNNN")->required();
     },
     [](Call& c) { return runtime_flags(c.flags_compiler, c.flags_targets); }},
    {"cargo",
     "Rust offload on a cargo project: cargo build|run|test|check|clippy [CARGO ARGS] [-- ARGS] (`cargo --help`)",
     false,
     [](CLI::App&, CLI::App* sub, Call& c) {
       sub->prefix_command();  // everything after `cargo` is cargo's
       sub->set_help_flag();   // --help included: `offload-build cargo --help` is cargo_command's
       c.cargo = sub;
     },
     [](Call& c) {
       const std::vector<std::string> rest = c.cargo->remaining();  // after `cargo`; before it, ours
       const int at = std::max(1, c.argc - static_cast<int>(rest.size()) - 1);
       return cargo(c.global, rest, std::vector<std::string>(c.argv + 1, c.argv + at));
     }},
    {"cache", nullptr, false, [](CLI::App& app, CLI::App*, Call& c) { add_cache_commands(app, c.cache_cli); },
     [](Call& c) { return run_cache_command(c.global, c.cache_cli); }},
    {"config", nullptr, false, [](CLI::App& app, CLI::App*, Call& c) { add_config_command(app, c.config_cli); },
     [](Call& c) -> Result<int> { return run_config(c.global, c.config_cli, std::cout); }},
    {"init", "Create a project that builds and runs as is (offload.json, sources, README)", false,
     [](CLI::App&, CLI::App* sub, Call& c) {
       sub->add_option("--lang", c.init_options.lang, "Language of the project (default: c)")
           ->option_text("c|cxx|rust|cargo")
           ->check(CLI::IsMember({"c", "cxx", "rust", "cargo"}));
       sub->add_option("dir", c.init_options.dir, "Directory to create the project in")->required();
     },
     [](Call& c) -> Result<int> {
       // Like every path on the command line, DIR is relative to -C.
       InitOptions& init = c.init_options;
       if (init.dir.is_relative()) init.dir = (c.global.directory / init.dir).lexically_normal();
       init.templates = c.global.config.path("templates");
       OB_TRY(init_project(init, std::cout));
       return exit_code::ok;
     }},
    {"clean", "Remove the manifest's build directory (never the cache); --dry-run says what", true, nullptr,
     [](Call& c) { return clean(c.global); }},
    {"verify",
     "verify -- PROGRAM ARGS: run any program as run --verify does; fail if no kernel ran on an offload device",
     true, nullptr,
     [](Call& c) { return verify(c.global, std::vector<std::string>(c.argv + c.program_at, c.argv + c.argc)); }},
    {"timings",
     "timings TRACE: draw a --trace file (a whole launcher-mode build: OFFLOAD_BUILD_TRACE) as the --timings "
     "page, to --timings=FILE or TRACE.html (docs/TIMINGS.md)",
     true, [](CLI::App&, CLI::App* sub, Call& c) { sub->add_option("trace", c.trace_to_draw, "The trace file")->required(); },
     [](Call& c) { return run::draw_trace(c.global, c.trace_to_draw); }},
    {"masquerade",
     "masquerade DIR [NAME...]: symlinks named after compilers (default: each clang, flang, gcc, cc found on PATH) "
     "that run offload-build; put DIR first on PATH (docs/LAUNCHER.md)",
     true,
     [](CLI::App&, CLI::App* sub, Call& c) {
       sub->add_option("dir", c.masquerade_dir, "The directory to make")->required();
       sub->add_option("names", c.masquerade_names, "The compilers it stands in for");
     },
     [](Call& c) { return run::make_masquerade_dir(c.global.directory / c.masquerade_dir, c.masquerade_names, std::cout); }},
    // Handled before the settings are read (dispatch): the compile's own.
    {"wrap",
     "Compiler launcher: wrap -- COMPILER ARGS; an OpenMP offload compile is split into cached device and host "
     "passes, anything else runs unchanged (docs/LAUNCHER.md)",
     false, nullptr, nullptr},
};

// `verify [OPTIONS] [--] PROGRAM ARGS...`: where PROGRAM is (from there on,
// the words are the program's, not parsed, as for wrap); argc for any other command.
int program_index(const CLI::App& app, int argc, char** argv) {
  const int at = command_word(app, argc, argv);
  if (at >= argc || std::string_view(argv[at]) != "verify") return argc;
  const int word = command_word(app, argc, argv, at + 1);
  return word < argc ? word : int(std::find(argv + at + 1, argv + argc, std::string_view("--")) - argv);
}

// CLI11's parse error, said as offload-build says it.
int parse_error(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const CLI::App* run_cmd = app.get_subcommand("run");
  if (dynamic_cast<const CLI::ExtrasError*>(&e) && run_cmd->count() > 0)
    return stray_program_arguments(app, *run_cmd, argc, argv);
  // `offload-build --release cargo build`: cargo's option before `cargo`.
  if (const auto c = std::find(argv + 1, argv + argc, std::string_view("cargo")); c != argv + argc)
    if (auto misplaced = cargo_args::misplaced_cargo_option({"offload-build"}, {argv + 1, c}, {"cargo"},
                                                            {c + 1, argv + argc})) {
      std::cerr << "offload-build: error: " << *misplaced << '\n';
      return exit_code::usage;
    }
  std::cerr << "offload-build: error: " << e.what() << "\n"
            << "Run 'offload-build --help' for the commands and options.\n";
  return exit_code::usage;
}

int dispatch(int argc, char** argv);

// A launcher call with options before the compiler (`offload-build -v
// clang++ ARGS...`, as `wrap -- COMPILER ...`; the compiler first is
// dispatch's): its exit code; nullopt for any other command line.
std::optional<int> launcher_call(CLI::App& app, int argc, char** argv, const Request& global) {
  std::vector<std::string> subcommands;
  for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
    subcommands.push_back(sub->get_name());
  if (const int at = command_word(app, argc, argv); at > 1 && at < argc && run::is_launcher_call(subcommands, argv[at])) {
    std::vector<char*> words(argv, argv + at);
    char wrap[] = "wrap", dashes[] = "--";
    words.insert(words.end(), {wrap, dashes});
    words.insert(words.end(), argv + at, argv + argc);
    return dispatch(static_cast<int>(words.size()), words.data());
  }
  return std::nullopt;
}

int dispatch(int argc, char** argv) {
  // Started through a symlink named after a compiler (run/masquerade.hpp).
  if (auto name = run::masquerade_name(argc > 0 ? argv[0] : nullptr))
    return run::masquerade(*name, std::vector<std::string>(argv + 1, argv + argc));
  // The compiler first (how CMake and make call a launcher, once per compile):
  // launched before the parser of every other command line is built.
  if (argc > 1) {
    std::vector<std::string> names;
    for (const Command& command : kCommands) names.emplace_back(command.name);
    if (run::is_launcher_call(names, argv[1])) {
      Request global;
      global.command_line.assign(argv, argv + argc);
      return run::launch(std::vector<std::string>(argv + 1, argv + argc), global);
    }
  }
  CLI::App app{"offload-build: the build driver for single-source GPU offload code", "offload-build"};
  app.set_version_flag("--version", std::string("offload-build ") + OB_VERSION);
  app.require_subcommand(1);
  Call call;
  call.argc = argc;
  call.argv = argv;
  call.global.command_line.assign(argv, argv + argc);
  add_global_options(app, call.global);
  std::vector<std::pair<CLI::App*, const Command*>> subs;
  for (const Command& command : kCommands) {
    CLI::App* sub = command.help ? app.add_subcommand(command.name, command.help) : nullptr;
    if (sub && command.fallthrough) sub->fallthrough();
    if (command.add) command.add(app, sub, call);
    subs.emplace_back(sub ? sub : app.get_subcommand(command.name), &command);
  }
  const int wrap_at = wrap_index(app, argc, argv);
  if (auto code = launcher_call(app, argc, argv, call.global)) return *code;
  if (auto code = check_command_words(app, wrap_at < argc ? wrap_at + 1 : argc, argv)) return *code;
  call.program_at = program_index(app, argc, argv);
  const int parsed_to = call.program_at < argc ? call.program_at : wrap_at < argc ? wrap_at + 1 : argc;
  try {
    app.parse(parsed_to, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e, argc, argv);
  }
  if (*app.get_subcommand("wrap")) return run::launch(std::vector<std::string>(argv + wrap_at + 1, argv + argc), call.global);
  if (auto settings = resolve_settings(call.global); !settings) return report_error(settings.error());
  storage::hide_remote_credentials(call.global.config);  // before any command starts
  exec::hide_remote_execution_secrets(call.global.config);
  util::set_color(util::decide_color(
      util::parse_color_choice(call.global.config.text("color")).value_or(util::ColorChoice::Auto),
      {config::env("NO_COLOR"), config::env("CLICOLOR_FORCE"), config::env("TERM")}));
  for (const auto& [sub, command] : subs)
    if (*sub) {
      auto result = command->handle(call);
      return result ? *result : report_error(result.error());
    }
  return exit_code::usage;  // require_subcommand(1): not reached
}

}  // namespace

int main(int argc, char** argv) {
  // The one catch-all: anything unexpected becomes a clean message, never a crash.
  try {
    return dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "offload-build: internal error: " << util::shorten(e.what(), 1000) << "\n";
  } catch (...) {
    std::cerr << "offload-build: internal error\n";
  }
  return exit_code::failure;
}

}  // namespace ob::cli
