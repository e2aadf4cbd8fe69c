// `offload-build config`: every setting with its value and where it came
// from (`ccache -p`, `git config --show-origin`); get, set and unset in the
// user config file.
#include "config_command.hpp"

#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "offload_build/config/config.hpp"
#include "offload_build/exec/remote/setting.hpp"
#include "offload_build/manifest/json_locator.hpp"
#include "offload_build/manifest/manifest.hpp"
#include "offload_build/storage/remote/remote.hpp"
#include "offload_build/storage/remote/layered.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cli {

namespace {

using config::Origin;

// The manifest's settings, as written, each with its line:column.
config::Config with_manifest(const Request& o) {
  config::Config c = o.config;
  const fs::path file = manifest_path(o);
  std::error_code ec;
  if (!fs::exists(file, ec)) return c;
  auto text = util::read_regular_file(file, manifest::kMaxManifestSize, "a manifest");
  if (!text) return c;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object()) return c;
  const manifest::JsonLocator locate(*text);
  for (const auto& s : config::table()) {
    if (s.manifest.empty() || !j.contains(s.manifest)) continue;
    const auto& v = j[std::string(s.manifest)];
    std::string value;
    if (v.is_string()) value = v.get<std::string>();
    else if (v.is_array())
      for (const auto& e : v) value += (value.empty() ? "" : " ") + (e.is_string() ? e.get<std::string>() : e.dump());
    else value = v.dump();
    std::string where = file.filename().string();
    if (auto pos = locate.value("/" + std::string(s.manifest)))
      where = fmt::format("{}:{}:{}", file.string(), pos->line, pos->column);
    c.set(s.key, value, Origin::Manifest, where);
  }
  return c;
}

// What `config` may print of a value: secrets never, remote URLs redacted.
std::string shown(const config::Setting& s, const std::string& text) {
  if (s.secret) return text.empty() ? "" : "(set; hidden)";
  if (s.key == "remote_storage") {
    std::vector<std::string> urls;
    for (const auto& u : storage::split_remote_list(text)) urls.push_back(storage::redact_remote_url(u));
    return util::join(urls, " ");
  }
  if (s.key == "remote_execution") return exec::redact_remote_execution(text);
  return text;
}

std::string origin_text(const config::Value& v) {
  if (v.origin == Origin::Default) return "default";
  return fmt::format("{}: {}", config::origin_name(v.origin), v.where);
}

Result<const config::Setting*> setting_named(const std::string& key) {
  if (const auto* s = config::find_setting(key)) return s;
  std::vector<std::string> keys;
  for (const auto& s : config::table()) keys.emplace_back(s.key);
  auto near = util::closest_match(key, keys);
  return Error::usage(fmt::format("config: unknown setting '{}'{}; `offload-build config` lists them",
                                  util::shorten(key, 60), near ? " (did you mean '" + *near + "'?)" : ""));
}

int list(const Request& o, bool json, std::ostream& out) {
  const config::Config c = with_manifest(o);
  if (json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& s : config::table()) {
      const config::Value* v = c.get(s.key);
      nlohmann::json row{{"key", s.key}, {"type", config::type_name(s.type)}};
      row["value"] = v ? nlohmann::json(shown(s, v->text)) : nlohmann::json(nullptr);
      row["origin"] = v ? std::string(config::origin_name(v->origin)) : "unset";
      row["where"] = v ? v->where : "";
      if (!s.cli.empty()) row["option"] = s.cli;
      if (!s.env.empty()) row["env"] = s.env;
      if (!s.manifest.empty()) row["manifest"] = s.manifest;
      all.push_back(row);
    }
    out << nlohmann::json{{"user_config", config::user_config_file().string()},
                          {"system_config", config::system_config_file().string()},
                          {"settings", all}}
                  .dump(2)
        << '\n';
    return 0;
  }
  size_t width = 0;
  for (const auto& s : config::table()) width = std::max(width, s.key.size());
  for (const auto& s : config::table()) {
    const config::Value* v = c.get(s.key);
    if (!v) {
      out << fmt::format("{:<{}} = (unset)\n", s.key, width);
      continue;
    }
    out << fmt::format("{:<{}} = {:<30}  ({})\n", s.key, width, shown(s, v->text), origin_text(*v));
  }
  out << fmt::format("\nuser config:   {}\nsystem config: {}\n", config::user_config_file().string(),
                     config::system_config_file().string());
  return 0;
}

}  // namespace

void add_config_command(CLI::App& app, ConfigCli& c) {
  c.command = app.add_subcommand(
      "config", "Show every setting with its value and origin; config get|set|unset KEY [VALUE] "
                "(the user config file; docs/CONFIG.md)");
  c.command->add_flag("--json", c.json, "Print one JSON object");
  c.command->add_flag("--markdown", c.markdown, "Print the settings table as Markdown (docs/CONFIG.md)");
  c.command->add_option("words", c.words, "get KEY | set KEY VALUE | unset KEY");
  c.command->fallthrough();
}

int run_config(const Request& o, const ConfigCli& c, std::ostream& out) {
  auto fail = [](const Error& e) {
    std::cerr << "offload-build: error: " << e.message << '\n';
    return exit_code::usage;
  };
  if (c.markdown) {
    out << config::markdown_table();
    return 0;
  }
  if (c.words.empty()) return list(o, c.json, out);
  const std::string& verb = c.words[0];
  const size_t want = verb == "set" ? 3 : 2;
  if ((verb != "get" && verb != "set" && verb != "unset") || c.words.size() != want)
    return fail(Error::usage("config: usage: offload-build config [--json] | config get KEY | "
                             "config set KEY VALUE | config unset KEY"));
  auto s = setting_named(c.words[1]);
  if (!s) return fail(s.error());
  const config::Setting& setting = **s;
  if (verb == "get") {
    const config::Config all = with_manifest(o);
    const config::Value* v = all.get(setting.key);
    if (!v) return 1;  // unset, as `git config` says it
    out << shown(setting, v->text) << '\n';
    return 0;
  }
  const fs::path file = config::user_config_file();
  std::optional<std::string> value;
  if (verb == "set") {
    value = c.words[2];
    if (!setting.in_file)
      return fail(Error::usage(fmt::format("config: {} cannot be kept in a config file (it is a "
                                           "secret): set ${}", setting.key, setting.env)));
    if (auto ok = config::check_value(setting, *value); !ok) return fail(ok.error());
    // A remote URL that does not parse is refused, with the reason (and
    // nothing of the text: it may hold a password).
    if (setting.key == "remote_storage")
      for (const auto& u : storage::split_remote_list(*value))
        if (auto parsed = storage::parse_remote_url(u); !parsed)
          return fail(Error::usage(fmt::format("config: remote_storage: {}", parsed.error().message)));
    // The engine's URL likewise; and a header's value (a token) is never
    // written to the file: it goes in a variable the URL names as ${VAR}.
    if (setting.key == "remote_execution") {
      std::vector<std::string> checked;  // the headers apart: their variables may be set later
      for (const auto& attr : util::split(*value, '|'))
        if (!attr.starts_with("header=")) checked.push_back(attr);
      if (auto parsed = exec::parse_remote_execution(util::join(checked, "|")); !parsed)
        return fail(Error::usage(fmt::format("config: {}", parsed.error().message)));
      for (const auto& attr : util::split(*value, '|'))
        if (attr.starts_with("header=")) {
          const std::string header_value = attr.substr(attr.find(':') + 1);
          if (header_value.find("${") == std::string::npos)  // "Bearer ${TOKEN}"
            return fail(Error::usage(fmt::format(
                "config: remote_execution: a header's value is kept out of the config file (it is a "
                "credential): write it with ${{VAR}} (header={}Bearer ${{VAR}}) and set VAR in the environment",
                attr.substr(7, attr.find(':') - 6))));
        }
    }
  }
  if (auto w = config::write_config_file(file, setting.key, value); !w) return fail(w.error());
  out << fmt::format("{} {} in {}\n", verb == "set" ? "set" : "unset", setting.key, file.string());
  // A higher source still wins: say so rather than leave the user puzzled.
  if (const config::Value* v = o.config.get(setting.key);
      v && v->origin < Origin::UserFile && v->origin != Origin::Manifest)
    out << fmt::format("note: {} from the {} ({}) takes precedence over the user config file\n",
                       setting.key, config::origin_name(v->origin), v->where);
  return 0;
}

}  // namespace ob::cli
