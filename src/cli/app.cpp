#include "offload_build/cli/app.hpp"
#include "offload_build/config/config.hpp"
#include "config_command.hpp"

#include "offload_build/exec/remote_runner.hpp"
#include "offload_build/storage/remote/layered.hpp"

#include <algorithm>
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "offload_build/cli/cargo_command.hpp"
#include "cargo_args.hpp"
#include "offload_build/cli/commands.hpp"
#include "offload_build/run/launcher.hpp"
#include "offload_build/util/style.hpp"
#include "offload_build/toolchain/doctor.hpp"
#include "offload_build/util/strings.hpp"
#include "offload_build/run/pictures.hpp"
#include "cache_cli.hpp"
#include "init_command.hpp"
#include "options.hpp"

namespace ob::cli {

namespace {

// Every line at most kMaxLine bytes: a message quoting a huge value (a
// 100 KB manifest string, an argv) stays readable.
constexpr size_t kMaxLine = 1000;
std::string shorten_lines(const std::string& text) {
  std::string out;
  for (const auto& line : util::split(text, '\n')) {
    if (!out.empty()) out += '\n';
    out += util::shorten(line, kMaxLine);
  }
  return out;
}

int report_error(const Error& e) {
  // Diagnostics that already say "error:" (file:line:col: error: ...) print as they are.
  const std::string message = shorten_lines(e.message);
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

int dispatch(int argc, char** argv) {
  CLI::App app{"offload-build: the build driver for single-source GPU offload code", "offload-build"};
  app.set_version_flag("--version", std::string("offload-build ") + OB_VERSION);
  app.require_subcommand(1);

  Request global;
  global.command_line.assign(argv, argv + argc);
  add_global_options(app, global);

  ProgramOptions run_options;
  auto* build_cmd = app.add_subcommand("build", "Build the project described by the manifest");
  auto* run_cmd = app.add_subcommand(
      "run", "Build, then run the program (OMP_TARGET_OFFLOAD=MANDATORY unless set)");
  run_cmd->add_flag("--verify", run_options.verify,
                    "Read the offload runtime's log, print a summary, fail if no kernel "
                    "was launched on an offload device");
  run_cmd->add_option("args", run_options.args, "Arguments for the program (after --)");
  auto* doctor_cmd =
      app.add_subcommand("doctor", "List the tools, device runtimes and GPUs found, and what "
                                   "that means for each target");
  for (auto* sub : {build_cmd, run_cmd, doctor_cmd}) sub->fallthrough();
  auto* cargo_cmd = app.add_subcommand(
      "cargo", "Rust offload on a cargo project: cargo build|run|test|check|clippy [CARGO ARGS] [-- ARGS] "
               "(`cargo --help`)");
  cargo_cmd->prefix_command();  // everything after `cargo` is cargo's
  cargo_cmd->set_help_flag();   // --help included: `offload-build cargo --help` is cargo_command's
  CacheCli cache_cli;
  add_cache_commands(app, cache_cli);
  ConfigCli config_cli;
  add_config_command(app, config_cli);
  InitOptions init_options;
  auto* init_cmd = app.add_subcommand(
      "init", "Create a project that builds and runs as is (offload.json, sources, README)");
  init_cmd->add_option("--lang", init_options.lang, "Language of the project (default: c)")
      ->option_text("c|cxx|rust|cargo")
      ->check(CLI::IsMember({"c", "cxx", "rust", "cargo"}));
  init_cmd->add_option("dir", init_options.dir, "Directory to create the project in")
      ->required();
  build_cmd->add_flag("--compdb", global.compdb,
                      "Also write compile_commands.json (every host and device pass) into the "
                      "build directory, for clangd");
  auto* clean_cmd = app.add_subcommand(
      "clean", "Remove the manifest's build directory (never the cache); --dry-run says what");
  clean_cmd->fallthrough();
  auto* verify_cmd = app.add_subcommand(
      "verify", "verify -- PROGRAM ARGS: run any program as run --verify does; fail if no kernel "
                "ran on an offload device");
  verify_cmd->fallthrough();
  fs::path trace_to_draw;
  auto* timings_cmd = app.add_subcommand(
      "timings", "timings TRACE: draw a --trace file (a whole launcher-mode build: OFFLOAD_BUILD_TRACE) as "
                 "the --timings page, to --timings=FILE or TRACE.html (docs/TIMINGS.md)");
  timings_cmd->add_option("trace", trace_to_draw, "The trace file")->required();
  timings_cmd->fallthrough();
  auto* wrap_cmd = app.add_subcommand(
      "wrap", "Compiler launcher: wrap -- COMPILER ARGS; an OpenMP offload compile is split into "
              "cached device and host passes, anything else runs unchanged (docs/LAUNCHER.md)");
  const int wrap_at = wrap_index(app, argc, argv);

  // `offload-build clang++ ARGS...`: how CMake calls a <LANG>_COMPILER_LAUNCHER.
  std::vector<std::string> subcommands;
  for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
    subcommands.push_back(sub->get_name());
  if (argc > 1 && run::is_launcher_call(subcommands, argv[1]))
    return run::launch(std::vector<std::string>(argv + 1, argv + argc), global);
  // Options before a compiler (`offload-build -v clang++ ...`): `wrap -- COMPILER ...`.
  if (const int at = command_word(app, argc, argv); at > 1 && at < argc && run::is_launcher_call(subcommands, argv[at])) {
    std::vector<char*> words(argv, argv + at);
    char wrap[] = "wrap", dashes[] = "--";
    words.insert(words.end(), {wrap, dashes});
    words.insert(words.end(), argv + at, argv + argc);
    return dispatch(static_cast<int>(words.size()), words.data());
  }
  if (auto code = check_command_words(app, wrap_at < argc ? wrap_at + 1 : argc, argv)) return *code;
  // `verify [OPTIONS] [--] PROGRAM ARGS...`: from PROGRAM on, the words are
  // the program's (not parsed, as for wrap).
  int program_at = argc;
  if (const int at = command_word(app, argc, argv); at < argc && std::string_view(argv[at]) == "verify") {
    const int word = command_word(app, argc, argv, at + 1);
    program_at = word < argc ? word : int(std::find(argv + at + 1, argv + argc, std::string_view("--")) - argv);
  }
  const int parsed_to = program_at < argc ? program_at : wrap_at < argc ? wrap_at + 1 : argc;

  try {
    app.parse(parsed_to, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
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
  if (*wrap_cmd) return run::launch(std::vector<std::string>(argv + wrap_at + 1, argv + argc), global);
  if (auto settings = resolve_settings(global); !settings) return report_error(settings.error());
  storage::hide_remote_credentials(global.config);  // before any command starts
  exec::hide_remote_execution_secrets(global.config);

  util::set_color(util::decide_color(
      util::parse_color_choice(global.config.text("color")).value_or(util::ColorChoice::Auto),
      {config::env("NO_COLOR"), config::env("CLICOLOR_FORCE"), config::env("TERM")}));
  if (*doctor_cmd) {
    const int code = toolchain::run_doctor(std::nullopt, global.config.path("llvm"), std::cout);
    doctor_remotes(global, std::cout);  // a remote is optional: never changes the exit code
    return code;
  }
  if (*init_cmd) {
    // Like every path on the command line, DIR is relative to -C.
    if (init_options.dir.is_relative()) init_options.dir = (global.directory / init_options.dir).lexically_normal();
    init_options.templates = global.config.path("templates");
    auto result = init_project(init_options, std::cout);
    return result ? exit_code::ok : report_error(result.error());
  }
  if (*config_cli.command) return run_config(global, config_cli, std::cout);
  if (*cache_cli.command) {
    auto result = run_cache_command(global, cache_cli);
    return result ? *result : report_error(result.error());
  }
  if (*clean_cmd) {
    auto result = clean(global);
    return result ? *result : report_error(result.error());
  }
  if (*timings_cmd) {
    auto result = run::draw_trace(global, trace_to_draw);
    return result ? *result : report_error(result.error());
  }
  if (*verify_cmd) {
    auto result = verify(global, std::vector<std::string>(argv + program_at, argv + argc));
    return result ? *result : report_error(result.error());
  }
  if (*cargo_cmd) {
    const std::vector<std::string> rest = cargo_cmd->remaining();  // after `cargo`; before it, ours
    const int at = std::max(1, argc - static_cast<int>(rest.size()) - 1);
    auto result = cargo(global, rest, std::vector<std::string>(argv + 1, argv + at));
    return result ? *result : report_error(result.error());
  }
  if (*run_cmd) {
    auto result = run(global, run_options);
    return result ? *result : report_error(result.error());
  }
  auto result = build(global);
  return result ? exit_code::ok : report_error(result.error());
}

}  // namespace

int main(int argc, char** argv) {
  // The one catch-all: anything unexpected becomes a clean message, never a crash.
  try {
    return dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "offload-build: internal error: " << util::shorten(e.what(), kMaxLine) << "\n";
  } catch (...) {
    std::cerr << "offload-build: internal error\n";
  }
  return exit_code::failure;
}

}  // namespace ob::cli
