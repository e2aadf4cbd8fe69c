// The one option table. The options that set a setting are generated from
// the settings table (config/settings.cpp), as clang's options are from its
// table: each row with a `cli` name gives its option, short name, value name,
// --help line and group, and the value check; what the option is given goes
// into the Request's Config (origin: command line). The options that are no
// settings (-C, --manifest, --target, --dry-run, --project-dir, --report,
// --timings) are written here, grouped by the stage that consumes them.
#include "options.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <thread>

#include "offload_build/config/settings.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cli {

namespace {

constexpr std::string_view kGroups[] = {"Project", "Execution", "Cache", "Output"};

// The option of setting `s`: its value checked by the table's rule, stored
// into `config` as given on the command line (paths made absolute: they are
// relative to where offload-build was started).
void add_setting_option(CLI::App& app, const config::Setting& s, config::Config& config) {
  const std::string names = s.short_cli.empty() ? std::string(s.cli) : fmt::format("{},{}", s.short_cli, s.cli);
  auto store = [&config, &s](std::string text) {
    if (s.type == config::Type::Path && !text.empty()) text = fs::absolute(text).string();
    config.set(s.key, std::move(text), config::Origin::CommandLine, std::string(s.cli));
  };
  CLI::Option* opt = nullptr;
  if (s.type == config::Type::Flag) {
    // --verbose sets it; --verbose=false (CLI11: a count of -1) clears it over a variable.
    opt = app.add_flag_function(names, [store](int64_t n) { store(n > 0 ? "true" : "false"); }, help_of(s.key));
  } else if (s.type == config::Type::List) {
    // Repeatable, one value each time; a higher source replaces the whole list.
    opt = app.add_option_function<std::vector<std::string>>(
                 names, [store](const std::vector<std::string>& v) { store(util::join(v, " ")); },
                 help_of(s.key))
              ->allow_extra_args(false);
  } else {
    opt = app.add_option_function<std::string>(names, [store](const std::string& v) { store(v); },
                                               help_of(s.key));
  }
  if (s.type != config::Type::Flag) {
    opt->option_text(std::string(s.metavar));
    opt->check(CLI::Validator(
        [&s](std::string& text) -> std::string {
          auto ok = config::check_value(s, text);
          return ok ? std::string() : ok.error().message;
        },
        ""));
  }
  opt->group(std::string(s.group));
}

// The table's options of `group`, in the table's order.
void add_settings_of(CLI::App& app, std::string_view group, config::Config& config) {
  for (const auto& s : config::table())
    if (!s.cli.empty() && s.group == group) add_setting_option(app, s, config);
}

}  // namespace

std::string help_of(std::string_view key) {
  const config::Setting* s = config::find_setting(key);
  std::string help(s->doc);
  help += fmt::format(" [setting {}", s->key);
  if (!s->env.empty()) help += fmt::format(", ${}", s->env);
  if (!s->manifest.empty()) help += fmt::format(", offload.json \"{}\"", s->manifest);
  return help + "; `offload-build config`]";
}

void add_global_options(CLI::App& app, Request& o) {
  // Consumed by the manifest stage.
  app.add_option("-C", o.directory, "Change to DIR before doing anything (like make/ninja)")
      ->option_text("DIR")
      ->group("Project");
  app.add_option("--manifest", o.manifest, "Project manifest (default: offload.json in DIR)")
      ->option_text("FILE")
      ->group("Project");
  app.add_option("--target", o.targets,
                 "Offload target, repeatable; replaces the manifest's list (host, sm_90, gfx90a, "
                 "triple:arch)")
      ->option_text("T")
      ->allow_extra_args(false)
      ->group("Project");
  add_settings_of(app, "Project", o.config);  // --two-parse: the planner's
  // Consumed by the executor (and the launcher's pass-through: --prefix-command).
  add_settings_of(app, "Execution", o.config);
  app.add_flag("--dry-run", o.dry_run,
               "Print every command, shell-quoted and re-runnable, and run nothing")
      ->group("Execution");
  // Consumed by the cache.
  add_settings_of(app, "Cache", o.config);
  app.add_option("--project-dir", o.project_dirs,
                 "Launcher mode, repeatable: a directory of the project (the CMake package passes "
                 "CMAKE_SOURCE_DIR and CMAKE_BINARY_DIR): paths under it are keyed and passed "
                 "relative to the working directory, as under --base-dir, and kernel names are "
                 "relative to the one holding the working directory, so a checkout elsewhere hits "
                 "with no base directory set")
      ->option_text("DIR")
      ->group("Cache");
  // Consumed by the subprocess layer (-v) and the report stage (src/report:
  // progress, colors, --report).
  add_settings_of(app, "Output", o.config);
  app.add_option("--report", o.report,
                 "Write a JSON report of the build to FILE (jobs, commands, times, cache "
                 "decisions, tools; docs/REPORT.md), also when it fails")
      ->option_text("FILE")
      ->group("Output");
  app.add_option("--timings", o.timings,
                 "Write the build as one self-contained HTML page: a bar per job on a time axis, "
                 "the critical path, tables per target and kind (default FILE: "
                 "<build dir>/offload-build-timings.html; give FILE with '=': --timings=FILE; "
                 "docs/TIMINGS.md)")
      ->expected(0, 1)
      ->option_text("[=FILE]")
      ->group("Output");
  // A row of another group (a new row's default, "Settings") is listed last.
  for (const auto& s : config::table())
    if (!s.cli.empty() && std::find(std::begin(kGroups), std::end(kGroups), s.group) == std::end(kGroups))
      add_setting_option(app, s, o.config);
}


}  // namespace ob::cli
