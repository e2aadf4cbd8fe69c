// What the clang driver reads besides its argv: configuration files
// (--config FILE, and the default ones beside the binary) and
// CCC_OVERRIDE_OPTIONS. A launcher compile is parsed, keyed and sent to
// prefix_command by the command line the driver works on, never by argv
// alone. docs/LAUNCHER.md, docs/DISTRIBUTED.md.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include <fmt/core.h>

#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/probe.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::clang_cli {

namespace {

using util::starts_with;

// A file in `dir` clang may read as a default configuration file (any
// *.cfg: the names depend on the target and driver mode), or "". A
// directory listed with no *.cfg name at all is remembered in `memo` by its
// mtime and inode (not one modified within the last two seconds: a file
// added in the same timestamp tick would go unseen), so the next launcher
// call stats /usr/bin instead of listing its 1,500 entries.
std::string default_config_in(const fs::path& dir, const std::optional<fs::path>& memo) {
  struct stat st{};
  const bool stamped = memo && ::stat(dir.c_str(), &st) == 0;
  const std::string stamp =
      stamped ? fmt::format("{}.{:09} {}", st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ino) : std::string();
  if (stamped)
    if (auto known = probe::recall(memo, "no-cfg", dir.string()); known && known->is_string() && *known == stamp)
      return {};
  std::error_code ec;
  bool named = false;
  for (fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".cfg") continue;
    named = true;
    if (it->is_regular_file(ec)) return it->path().string();
  }
  const auto age = std::chrono::system_clock::now().time_since_epoch() - std::chrono::seconds(st.st_mtim.tv_sec);
  if (stamped && !ec && !named && age > std::chrono::seconds(2)) probe::remember(memo, "no-cfg", dir.string(), stamp);
  return {};
}

// A configuration file's text as arguments (LLVM's tokenizeConfigFile): a
// line whose first non-blank character is '#' is a comment, backslash-newline
// continues a line, the rest is split as a response file; <CFGDIR> is the
// file's directory.
std::vector<std::string> config_arguments(std::string_view text, const fs::path& dir) {
  std::string joined;
  bool line_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (line_start && (c == ' ' || c == '\t')) {
      joined += c;
      continue;
    }
    if (line_start && c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      joined += '\n';
      continue;
    }
    line_start = false;
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text.substr(i + 1, 2) == "\r\n")) {
      i += text[i + 1] == '\n' ? 1 : 2;
      continue;
    }
    joined += c;
    if (c == '\n') line_start = true;
  }
  auto args = split_response_file(joined);
  for (auto& a : args)
    for (size_t at; (at = a.find("<CFGDIR>")) != std::string::npos;) a.replace(at, 8, dir.string());
  return args;
}

// The value of --config FILE / --config=FILE at argv[i] (advancing i past it).
std::optional<std::string> config_value(const std::vector<std::string>& argv, size_t& i) {
  if (starts_with(argv[i], "--config=")) return argv[i].substr(9);
  if (argv[i] == "--config" && i + 1 < argv.size()) return argv[++i];
  return std::nullopt;
}

}  // namespace

DriverEnvironment driver_environment(const fs::path& compiler) {
  DriverEnvironment env;
  if (const char* v = config::env_or_null("CCC_OVERRIDE_OPTIONS")) env.override_options = v;
  const char* no_default = config::env_or_null("CLANG_NO_DEFAULT_CONFIG");
  env.no_default_config = no_default && *no_default;
  std::error_code ec;
  env.binary_dirs.push_back(compiler.parent_path());
  const fs::path real = fs::canonical(compiler, ec);
  if (!ec && real.parent_path() != compiler.parent_path()) env.binary_dirs.push_back(real.parent_path());
  return env;
}

std::optional<DriverArgv> driver_argv(const std::vector<std::string>& argv, const fs::path& cwd,
                                      const DriverEnvironment& env, std::string* problem) {
  auto fail = [&](std::string why) -> std::optional<DriverArgv> {
    if (problem) *problem = std::move(why);
    return std::nullopt;
  };
  std::string why;
  auto expanded = expand_response_files(argv, cwd, &why);
  if (!expanded) return fail("a response file cannot be read: " + why);
  DriverArgv out;
  if (env.override_options && !env.override_options->empty()) {
    out.doubt = "CCC_OVERRIDE_OPTIONS edits the command line";
  }
  std::vector<fs::path> user_dirs, system_dirs;
  bool no_default = env.no_default_config;
  std::vector<std::string> configs;
  for (size_t i = 1; i < expanded->size(); ++i) {
    const std::string& a = (*expanded)[i];
    if (a == "--no-default-config") no_default = true;
    else if (starts_with(a, "--config-user-dir=")) user_dirs.push_back(a.substr(18));
    else if (starts_with(a, "--config-system-dir=")) system_dirs.push_back(a.substr(20));
    else if (auto v = config_value(*expanded, i)) configs.push_back(*v);
  }
  // clang's default configuration files (<triple>-<mode>.cfg, <mode>.cfg,
  // ...; the names depend on the target and driver mode): any .cfg file
  // where clang looks for them may be one, and the compile is left alone.
  if (!no_default && out.doubt.empty()) {
    std::vector<fs::path> dirs = env.binary_dirs;
    dirs.insert(dirs.end(), user_dirs.begin(), user_dirs.end());
    dirs.insert(dirs.end(), system_dirs.begin(), system_dirs.end());
    for (const auto& dir : dirs)
      if (const std::string file = default_config_in(dir, env.memo); !file.empty()) {
        out.doubt = "clang may read the default configuration file " + file;
        break;
      }
  }
  // --config FILE: a path when it holds a '/', else looked up in the user,
  // system and binary directories; its arguments come before the command
  // line's, those written `$ARG` after them (clang's tail options).
  std::vector<std::string> head, tail;
  for (const auto& name : configs) {
    fs::path file;
    if (name.find('/') != std::string::npos) {
      file = fs::path(name).is_absolute() ? fs::path(name) : cwd / name;
    } else {
      std::vector<fs::path> dirs = user_dirs;
      dirs.insert(dirs.end(), system_dirs.begin(), system_dirs.end());
      dirs.insert(dirs.end(), env.binary_dirs.begin(), env.binary_dirs.end());
      for (const auto& d : dirs) {
        std::error_code ec;
        if (fs::is_regular_file(d / name, ec)) {
          file = d / name;
          break;
        }
      }
      if (file.empty()) return fail("configuration file " + name + " not found (the compiler reports it)");
    }
    auto text = util::read_regular_file(file, kMaxResponseFile, "a configuration file");
    if (!text) return fail(text.error().message);
    // @FILE inside is relative to the configuration file.
    auto args = expand_response_files(config_arguments(*text, file.parent_path()), file.parent_path(), &why);
    if (!args) return fail("a response file in " + file.string() + " cannot be read: " + why);
    for (auto& a : *args) {
      if (a == "--config" || starts_with(a, "--config=") || starts_with(a, "--config-"))
        return fail(file.string() + " names another configuration file, which clang refuses");
      if (starts_with(a, "$")) tail.push_back(a.substr(1));
      else head.push_back(std::move(a));
    }
    out.config_files.push_back(file.lexically_normal());
  }
  out.argv.push_back(expanded->front());
  out.argv.insert(out.argv.end(), head.begin(), head.end());
  for (size_t i = 1; i < expanded->size(); ++i) {
    const std::string& a = (*expanded)[i];
    if (config_value(*expanded, i) || starts_with(a, "--config-user-dir=") ||
        starts_with(a, "--config-system-dir="))
      continue;  // read above: the passes get its arguments
    out.argv.push_back(a);
  }
  out.argv.insert(out.argv.end(), tail.begin(), tail.end());
  return out;
}

std::optional<std::vector<std::string>> apply_override_options(std::vector<std::string> argv,
                                                               std::string_view edits) {
  // clang's ApplyQAOverride: space-separated edits; a leading '#' only
  // silences it. '+X' appends X, '^X' inserts X after argv[0], 'xOPT'
  // removes OPT, 'XOPT' removes OPT and the argument after it. 's/.../.../'
  // and 'Ox' rewrite arguments: not modeled (nullopt).
  for (auto edit : util::split(edits, ' ')) {
    if (edit.empty()) continue;
    if (edit.front() == '#') edit = edit.substr(1);
    if (edit.empty()) continue;
    const char op = edit.front();
    const std::string rest = edit.substr(1);
    if (op == '+') {
      argv.push_back(rest);
    } else if (op == '^') {
      argv.insert(argv.begin() + (argv.empty() ? 0 : 1), rest);
    } else if (op == 'x' || op == 'X') {
      for (size_t i = 1; i < argv.size();) {
        if (argv[i] != rest) {
          ++i;
          continue;
        }
        const size_t n = op == 'X' && i + 1 < argv.size() ? 2 : 1;
        argv.erase(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.begin() + static_cast<std::ptrdiff_t>(i + n));
      }
    } else {
      return std::nullopt;
    }
  }
  return argv;
}

}  // namespace ob::toolchain::clang_cli
