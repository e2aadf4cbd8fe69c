// The command words before CLI11 sees them: `offload-build bild` (unknown: the
// closest command suggested, as the manifest's unknown keys are),
// `offload-build` alone (the commands listed), `cache stat`, `help`.
#include <iostream>

#include <fmt/format.h>

#include "offload_build/util/strings.hpp"
#include "options.hpp"

namespace ob::cli {

namespace {

std::vector<const CLI::App*> subcommands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// Whether words after this command are its own (a program's arguments, a directory).
bool takes_words(const CLI::App& app) {
  if (app.get_prefix_command()) return true;
  return !app.get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
}

void list_commands(const CLI::App& app, std::ostream& out) {
  out << "usage: offload-build [OPTIONS] COMMAND [ARGS...]\n"
         "       offload-build COMPILER ARGS...   (as a compiler launcher: docs/LAUNCHER.md)\n\n"
         "commands:\n";
  size_t width = 0;
  for (const auto* sub : subcommands_of(app)) width = std::max(width, sub->get_name().size());
  for (const auto* sub : subcommands_of(app))
    out << fmt::format("  {:<{}}  {}\n", sub->get_name(), width, sub->get_description());
  out << "\nRun 'offload-build --help' for the options, 'offload-build COMMAND --help' for a command's.\n";
}

int unknown_command(const CLI::App& level, const std::string& path, const std::string& word) {
  std::vector<std::string> names;
  for (const auto* sub : subcommands_of(level)) names.push_back(sub->get_name());
  std::string message = fmt::format("offload-build: error: unknown command '{}{}'", path, word);
  if (auto near = util::closest_match(word, names))
    message += fmt::format("; did you mean '{}{}'?", path, *near);
  else
    message += fmt::format("; the commands{} are: {}", path.empty() ? "" : " of '" + path.substr(0, path.size() - 1) + "'",
                           util::join(names, ", "));
  std::cerr << util::shorten(message, 1000) << "\nRun 'offload-build "
            << path << "--help' for the commands and options.\n";
  return exit_code::usage;
}

}  // namespace

namespace {

constexpr int kHelp = -1;  // next_word: a help or version flag

// The index of the first word at or after `i` that is neither an option nor an
// option's value: argc at the end or at `--`, kHelp at a help or version flag.
int next_word(const CLI::App& app, const CLI::App& level, int i, int argc, char** argv) {
  for (; i < argc; ++i) {
    const std::string token = argv[i];
    if (token == "--") return argc;
    if (token == "-h" || token == "--help" || token == "--help-all" || token == "--version") return kHelp;
    if (token.size() < 2 || token.front() != '-') return i;
    const std::string name = token.substr(0, token.find('='));
    const CLI::Option* opt = level.get_option_no_throw(name);
    if (!opt) opt = app.get_option_no_throw(name);  // global options fall through
    if (opt && opt->get_expected_min() > 0 && name == token) ++i;  // its value
  }
  return argc;
}

}  // namespace

int command_word(const CLI::App& app, int argc, char** argv, int from) {
  const int at = next_word(app, app, from, argc, argv);
  return at == kHelp ? argc : at;
}

std::optional<int> check_command_words(const CLI::App& app, int argc, char** argv) {
  const CLI::App* level = &app;
  std::string path;  // the command words so far, each followed by a space
  for (int i = next_word(app, app, 1, argc, argv); i < argc; i = next_word(app, *level, i + 1, argc, argv)) {
    if (i == kHelp) return std::nullopt;
    const std::string token = argv[i];
    const CLI::App* sub = nullptr;
    for (const auto* s : subcommands_of(*level))
      if (s->get_name() == token) sub = s;
    if (!sub) {
      if (level == &app && token == "help") {
        std::cout << app.help();
        return exit_code::ok;
      }
      if (takes_words(*level) || subcommands_of(*level).empty()) return std::nullopt;
      if (std::string_view(argv[i - 1]) == "--timings") {  // its FILE is optional: only with '='
        std::cerr << util::shorten("offload-build: error: --timings takes its file with '=': --timings=" + token, 1000)
                  << '\n';
        return exit_code::usage;
      }
      return unknown_command(*level, path, token);
    }
    level = sub;
    path += token + " ";
    if (takes_words(*level)) return std::nullopt;
  }
  if (level != &app) return std::nullopt;
  list_commands(app, std::cerr);
  return exit_code::usage;
}

}  // namespace ob::cli
