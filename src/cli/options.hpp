#pragma once

#include <CLI/CLI.hpp>

#include "offload_build/cli/commands.hpp"
#include "offload_build/run/request.hpp"

namespace ob::cli {

// The global options: the settings table's (their values go into
// `options.config` as the command line's) and the others (options.cpp).
// `options` must outlive `app`'s parse.
void add_global_options(CLI::App& app, Request& options);

// The --help line of the option that sets setting `key`: the table's doc line
// and where else the setting comes from.
std::string help_of(std::string_view key);
// Before CLI11 parses argv: an unknown command word (with the closest one
// suggested), no command at all (the commands listed), `help`. The exit code
// when it answered; nullopt when argv is CLI11's to parse.
std::optional<int> check_command_words(const CLI::App& app, int argc, char** argv);
// The index of the first word at or after `from` that is not a global option
// or its value; argc at `--`, at a help flag or at the end.
int command_word(const CLI::App& app, int argc, char** argv, int from = 1);
using run::resolve_settings;

}  // namespace ob::cli
