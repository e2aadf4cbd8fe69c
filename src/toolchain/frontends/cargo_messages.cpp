// How the cargo flow's build passes report: the --message-format each runs
// with, and cargo's diagnostics (compiler-message) read and summarised as cargo
// itself would print them (see cargo.hpp: Diagnostic, warning_summary).
#include "offload_build/toolchain/frontends/cargo.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/util/strings.hpp"
#include "offload_build/util/style.hpp"

namespace ob::toolchain::cargo {

namespace {

using nlohmann::json;

bool has(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// `text` without its escape sequences (rustc writes SGR ones: ESC [ ... m).
std::string strip_ansi(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x1b') {
      out += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '[') {
      for (i += 2; i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7e); ++i) {
      }
    } else {
      ++i;  // a two-byte sequence
    }
  }
  return out;
}

std::vector<std::string> kinds_of(const json& target) {
  std::vector<std::string> out;
  for (const auto& k : target.value("kind", json::array()))
    if (k.is_string()) out.push_back(k.get<std::string>());
  return out;
}

// The package's name in a package id: `path+file:///w/kern#0.1.0` (the
// directory's name), `registry+...#serde@1.0.0`, or the old `kern 0.1.0 (...)`.
std::string package_name(const std::string& id) {
  const size_t hash = id.find('#');
  if (hash == std::string::npos) return id.substr(0, id.find(' '));
  const std::string fragment = id.substr(hash + 1);
  if (const size_t at = fragment.find('@'); at != std::string::npos) return fragment.substr(0, at);
  const std::string url = id.substr(0, hash);
  return url.substr(url.find_last_of('/') + 1);
}

// cargo's Target::description_named: "lib", "bin \"app\"", "build script".
std::string described(const Artifact& a) {
  static const std::vector<std::string> libs = {"lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"};
  for (const auto& k : a.kinds) {
    if (has(libs, k)) return "lib";
    if (k == "custom-build") return "build script";
    if (k == "bin" || k == "test" || k == "bench" || k == "example") return fmt::format("{} \"{}\"", k, a.target_name);
  }
  return "lib";
}

}  // namespace

bool wants_json(const UserArgs& user) {
  return std::any_of(user.message_format.begin(), user.message_format.end(),
                     [](const std::string& v) { return util::starts_with(v, "json"); });
}

std::string message_format(const UserArgs& user) {
  const std::vector<std::string>& given = user.message_format;
  if (!wants_json(user))
    return has(given, "short") ? "--message-format=json-diagnostic-rendered-ansi,json-diagnostic-short"
                               : "--message-format=json-diagnostic-rendered-ansi";
  if (!has(given, "json-render-diagnostics")) return "--message-format=" + util::join(given, ",");
  std::vector<std::string> values;  // cargo's JSON with the diagnostics in it, which offload-build renders
  for (const auto& v : given)
    if (v != "json-render-diagnostics" && v != "json-diagnostic-rendered-ansi") values.push_back(v);
  values.push_back("json-diagnostic-rendered-ansi");
  return "--message-format=" + util::join(values, ",");
}

void set_message_format(Invocation& inv, const UserArgs& user) {
  inv.argv.push_back(message_format(user));
  inv.echo_json = wants_json(user);
  inv.render = !inv.echo_json || has(user.message_format, "json-render-diagnostics");
  inv.colour = inv.render && diagnostics_colour(user);
  inv.quiet = has(user.shared, "-q") || has(user.shared, "--quiet");
}

bool diagnostics_colour(const UserArgs& user) {
  std::optional<util::ColorChoice> choice;
  for (size_t i = 0; i < user.all.size(); ++i) {
    if (util::starts_with(user.all[i], "--color=")) choice = util::parse_color_choice(user.all[i].substr(8));
    else if (user.all[i] == "--color" && i + 1 < user.all.size()) choice = util::parse_color_choice(user.all[++i]);
  }
  if (!choice)
    if (const char* e = config::env_or_null("CARGO_TERM_COLOR")) choice = util::parse_color_choice(e);
  auto env = [](const char* name) {
    const char* v = config::env_or_null(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  return util::decide_color(choice.value_or(util::ColorChoice::Auto),
                            {env("NO_COLOR"), env("CLICOLOR_FORCE"), env("TERM")}, 2);
}

std::optional<Diagnostic> parse_diagnostic(std::string_view line) {
  if (line.find("\"compiler-message\"") == std::string_view::npos) return std::nullopt;
  const json m = json::parse(line, nullptr, false);
  if (!m.is_object() || m.value("reason", "") != "compiler-message") return std::nullopt;
  const json message = m.value("message", json::object());
  if (!message.is_object() || !message.contains("rendered") || !message["rendered"].is_string()) return std::nullopt;
  const json target = m.value("target", json::object());
  Diagnostic d;
  d.unit = unit_key(m.value("package_id", ""), target.value("name", ""), kinds_of(target));
  d.level = message.value("level", "");
  d.rendered = message["rendered"].get<std::string>();
  if (d.rendered.empty() || d.rendered.back() != '\n') d.rendered += '\n';
  d.plain = strip_ansi(d.rendered);
  const json code = message.value("code", json());
  d.key = d.level + '\n' + (code.is_object() ? code.value("code", "") : "") + '\n' + message.value("message", "");
  for (const auto& span : message.value("spans", json::array()))
    if (span.is_object() && span.value("is_primary", false))
      d.key += fmt::format("\n{}:{}:{}-{}:{}", span.value("file_name", ""), span.value("line_start", 0),
                           span.value("column_start", 0), span.value("line_end", 0), span.value("column_end", 0));
  for (const auto& child : message.value("children", json::array()))
    for (const auto& span : child.value("spans", json::array()))
      if (span.is_object() && span.value("suggestion_applicability", json()) == "MachineApplicable") d.fixable = true;
  return d;
}

std::string unit_key(const std::string& package_id, const std::string& target_name,
                     const std::vector<std::string>& kinds) {
  return package_id + '\n' + target_name + '\n' + util::join(kinds, ",");
}

std::string warning_summary(const Artifact& unit, const WarningCount& count, bool clippy) {
  const bool harness = unit.test && !has(unit.kinds, "test") && !has(unit.kinds, "bench");
  const std::string name = package_name(unit.package_id), what = described(unit);
  std::string out = fmt::format("`{}` ({}{}) generated {} warning{}", name, what, harness ? " test" : "", count.total,
                                count.total == 1 ? "" : "s");
  if (count.duplicates > 0)
    out += fmt::format(" ({} duplicate{})", count.duplicates, count.duplicates == 1 ? "" : "s");
  const bool local = util::starts_with(unit.package_id, "path+");
  if (local && count.fixable > 0 && what != "build script")
    out += fmt::format(" (run `{} --{} -p {}{}` to apply {} suggestion{})", clippy ? "cargo clippy --fix" : "cargo fix",
                       what, name,
                       harness ? " --tests" : "", count.fixable, count.fixable == 1 ? "" : "s");
  return out;
}

std::optional<std::string> script_warning(std::string_view line) {
  std::string plain = strip_ansi(line);
  plain.erase(std::remove(plain.begin(), plain.end(), '\r'), plain.end());
  while (!plain.empty() && plain.back() == '\n') plain.pop_back();
  if (!util::starts_with(plain, "warning: ")) return std::nullopt;
  const size_t at = plain.find('@', 9), colon = plain.find(": ", 9);  // NAME@VERSION: text
  if (at == std::string::npos || colon == std::string::npos || at > colon ||
      plain.find(' ', 9) < colon || at + 1 == colon || !std::isdigit(static_cast<unsigned char>(plain[at + 1])))
    return std::nullopt;
  return plain;
}

std::optional<std::string> executable_line(const Artifact& a, const fs::path& cwd, bool colour) {
  if (!a.test || !a.executable) return std::nullopt;
  // cargo's strip_prefix: relative only when under the directory.
  auto under = [](const fs::path& p, const fs::path& dir) {
    const fs::path rel = p.lexically_relative(dir);
    return rel.empty() || *rel.begin() == ".." ? p : rel;
  };
  const fs::path src = under(a.src_path, a.manifest_path.parent_path());
  const bool integration = std::find(a.kinds.begin(), a.kinds.end(), "test") != a.kinds.end();
  return fmt::format("{}{} ({})\n", colour ? "\x1b[1m\x1b[32m  Executable\x1b[0m " : "  Executable ",
                     integration ? src.string() : "unittests " + src.string(), under(*a.executable, cwd).string());
}

std::string warning_line(const std::string& text, bool colour) {
  return (colour ? "\x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m:\x1b[0m " : "warning: ") + text + "\n";
}

std::optional<fs::path> artifact_mir(const Artifact& a) {
  std::error_code ec;
  for (const auto& f : a.filenames) {
    const fs::path dir = f.parent_path();
    std::string stem = f.stem().string();
    if (dir.filename() == "deps") {
      if (f.extension() == ".rlib" || f.extension() == ".rmeta" || f.extension() == ".a" || f.extension() == ".so")
        stem = util::starts_with(stem, "lib") ? stem.substr(3) : stem;
      else stem = f.filename().string();  // a test harness: deps/NAME-HASH
      if (const fs::path mir = dir / (stem + ".mir"); fs::is_regular_file(mir, ec)) return mir;
      continue;
    }
    // An uplifted program: the deps/ file it is a hard link of.
    const std::string crate = rustc::crate_name(a.target_name) + "-";
    for (fs::directory_iterator it(dir / "deps", ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!util::starts_with(name, crate) || it->path().has_extension() || !fs::equivalent(it->path(), f, ec)) continue;
      if (const fs::path mir = it->path().string() + ".mir"; fs::is_regular_file(mir, ec)) return mir;
    }
  }
  return std::nullopt;
}

}  // namespace ob::toolchain::cargo
