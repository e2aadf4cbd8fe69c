#include "offload_build/config/config.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fmt/format.h>
#include <mutex>
#include <set>
#include <stdexcept>
#include <pwd.h>
#include <unistd.h>

#include "offload_build/util/file_trust.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/size_text.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::config {

namespace {

constexpr uint64_t kMaxConfigFile = 1 << 20;

std::string home_dir() {
  if (auto h = env("HOME"); h && !h->empty()) return *h;
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return {};
}

std::string trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> keys_of_files() {
  std::vector<std::string> keys;
  for (const auto& s : table())
    if (s.in_file) keys.emplace_back(s.key);
  return keys;
}

// The computed defaults the table describes in words.
void add_defaults(Config& c) {
  for (const auto& s : table())
    if (!s.default_text.empty()) c.set(s.key, std::string(s.default_text), Origin::Default, "default");
  // XDG: a relative $XDG_CACHE_HOME is invalid and ignored.
  fs::path cache;
  if (auto x = env("XDG_CACHE_HOME"); x && !x->empty() && fs::path(*x).is_absolute())
    cache = fs::path(*x) / "offload-build";
  else if (std::string home = home_dir(); !home.empty())
    cache = fs::path(home) / ".cache" / "offload-build";
  else
    cache = fs::temp_directory_path() / fmt::format("offload-build-cache-{}", ::getuid());
  c.set("cache_dir", cache.string(), Origin::Default, "default");
}

// The cache's trust rules for a config file (util::distrust_config): one
// that another user may write (the file, or the directory holding it) could
// set prefix_command to any program, so it is refused, never used silently.
Result<void> check_config_file_trust(const fs::path& file) {
  struct stat st {};
  if (file.empty() || ::stat(file.c_str(), &st) != 0) return {};  // missing: nothing is read
  auto refuse = [&](const std::string& what, const fs::path& fix) {
    return Error::usage(fmt::format(
        "config file {}: not used: {}, so another user could change your settings "
        "(prefix_command runs the program it names); make it yours and not writable by others "
        "(chown, chmod go-w {}) or remove it",
        file.string(), what, fix.string()));
  };
  if (std::string why = util::distrust_config(st); !why.empty()) return refuse("it " + why, file);
  std::error_code ec;
  std::vector<fs::path> dirs{fs::absolute(file, ec).parent_path()};
  if (fs::path real = fs::canonical(file, ec); !ec && real.parent_path() != dirs[0])
    dirs.push_back(real.parent_path());
  for (const auto& dir : dirs) {
    struct stat d {};
    if (::stat(dir.c_str(), &d) != 0) continue;
    if (std::string why = util::distrust_config(d); !why.empty())
      return refuse(fmt::format("its directory {} {}", dir.string(), why), dir);
  }
  return {};
}

Result<void> add_file(Config& c, const fs::path& file, Origin origin) {
  if (auto trusted = check_config_file_trust(file); !trusted) return trusted.error();
  auto lines = read_config_file(file);
  if (!lines) return lines.error();
  for (auto& l : *lines)
    c.set(l.key, std::move(l.value), origin, fmt::format("{}:{}", file.string(), l.line));
  return {};
}

Result<void> add_environment(Config& c) {
  for (const auto& s : table()) {
    if (s.env.empty()) continue;
    auto v = env(std::string(s.env).c_str());
    if (!v) continue;
    // An empty variable means unset (OFFLOAD_BUILD_BASE_DIR= sets nothing), but
    // an empty list is a list: OFFLOAD_BUILD_REMOTE_STORAGE= means no remote.
    if (v->empty() && s.type != Type::Flag && s.type != Type::List) continue;
    if (auto ok = check_value(s, *v); !ok)
      return Error::usage(fmt::format("{}: {}", s.env, ok.error().message));
    c.set(s.key, *v, Origin::Environment, std::string(s.env));
  }
  return {};
}

}  // namespace

std::string_view origin_name(Origin origin) {
  switch (origin) {
    case Origin::CommandLine: return "command line";
    case Origin::Environment: return "environment";
    case Origin::Manifest: return "manifest";
    case Origin::UserFile: return "user config";
    case Origin::SystemFile: return "system config";
    case Origin::Default: return "default";
  }
  return "";
}

namespace {

// The names of the variables this process read (a no-op build's record
// checks each again); read from the lookup threads too.
struct EnvNames {
  std::mutex mu;
  std::set<std::string, std::less<>> names;
};

EnvNames& env_names() {
  static EnvNames names;
  return names;
}

}  // namespace

const char* env_or_null(const char* name) {
  auto& read = env_names();
  {
    std::lock_guard lock(read.mu);
    if (read.names.find(std::string_view(name)) == read.names.end()) read.names.emplace(name);
  }
  return std::getenv(name);
}

std::optional<std::string> env(const char* name) {
  const char* v = env_or_null(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

std::vector<std::string> env_with_prefixes(std::initializer_list<std::string_view> prefixes) {
  std::vector<std::string> vars;
  auto& read = env_names();
  std::lock_guard lock(read.mu);
  for (char** e = environ; e && *e; ++e) {
    const std::string_view v(*e);
    for (std::string_view p : prefixes)
      if (v.substr(0, p.size()) == p) {
        vars.emplace_back(v);
        read.names.emplace(v.substr(0, v.find('=')));
        break;
      }
  }
  std::sort(vars.begin(), vars.end());
  return vars;
}

std::vector<std::string> env_names_read() {
  auto& read = env_names();
  std::lock_guard lock(read.mu);
  return {read.names.begin(), read.names.end()};
}

void Config::set(std::string_view key, std::string text, Origin origin, std::string where) {
  if (!find_setting(key)) return;
  auto it = values_.find(key);
  if (it == values_.end()) it = values_.emplace(std::string(key), decltype(values_)::mapped_type{}).first;
  it->second[static_cast<size_t>(origin)] = Value{std::move(text), origin, std::move(where)};
}

const Value* Config::get(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return nullptr;
  for (const auto& v : it->second)
    if (v) return &*v;
  return nullptr;
}

std::optional<Value> Config::get(std::string_view key, const std::optional<std::string>& manifest,
                                 std::string_view where) const {
  const Value* v = get(key);
  if (manifest && (!v || v->origin > Origin::Manifest))
    return Value{*manifest, Origin::Manifest, std::string(where)};
  if (!v) return std::nullopt;
  return *v;
}

namespace {

const Setting& row(std::string_view key) {
  const Setting* s = find_setting(key);
  if (!s) throw std::logic_error(fmt::format("no setting '{}' in the settings table", key));
  return *s;
}

}  // namespace

std::string Config::text(std::string_view key) const {
  row(key);
  const Value* v = get(key);
  return v ? v->text : std::string();
}

bool Config::flag(std::string_view key) const {
  row(key);
  const Value* v = get(key);
  return v && flag_value(v->text);
}

size_t Config::count(std::string_view key) const {
  row(key);
  const Value* v = get(key);
  size_t n = 0;
  if (v) std::from_chars(v->text.data(), v->text.data() + v->text.size(), n);
  return n;
}

uint64_t Config::size(std::string_view key) const {
  row(key);
  const Value* v = get(key);
  auto bytes = v ? util::parse_size(v->text) : Result<uint64_t>(uint64_t{0});
  return bytes ? *bytes : 0;
}

std::optional<fs::path> Config::path(std::string_view key) const {
  row(key);
  const Value* v = get(key);
  if (!v || v->text.empty()) return std::nullopt;
  return fs::path(v->text);
}

std::vector<Value> Config::all(std::string_view key) const {
  std::vector<Value> out;
  if (auto it = values_.find(key); it != values_.end())
    for (const auto& v : it->second)
      if (v) out.push_back(*v);
  return out;
}

fs::path user_config_file() {
  if (auto f = env("OFFLOAD_BUILD_CONFIG"); f && !f->empty()) return *f;
  if (auto x = env("XDG_CONFIG_HOME"); x && !x->empty() && fs::path(*x).is_absolute())
    return fs::path(*x) / "offload-build" / "config";
  std::string home = home_dir();
  if (home.empty()) return {};
  return fs::path(home) / ".config" / "offload-build" / "config";
}

fs::path system_config_file() {
  if (auto f = env("OFFLOAD_BUILD_SYSTEM_CONFIG"); f && !f->empty()) return *f;
  return "/etc/offload-build.conf";
}

Result<std::vector<FileLine>> read_config_file(const fs::path& file) {
  std::error_code ec;
  if (file.empty() || !fs::exists(file, ec)) return std::vector<FileLine>{};
  auto text = util::read_regular_file(file, kMaxConfigFile, "a config file");
  if (!text) return Error::usage(text.error().message);
  std::vector<FileLine> out;
  size_t number = 0;
  for (const auto& raw : util::split(*text, '\n')) {
    ++number;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    auto at = [&](const std::string& what) {
      return Error::usage(fmt::format("{}:{}: {}", file.string(), number, what));
    };
    const size_t eq = line.find('=');
    if (eq == std::string::npos)
      return at(fmt::format("'{}' is not a setting: write `key = value` (see `offload-build config`)",
                            util::shorten(line, 80)));
    FileLine l{trim(line.substr(0, eq)), trim(line.substr(eq + 1)), number};
    const Setting* s = find_setting(l.key);
    if (!s) {
      auto near = util::closest_match(l.key, keys_of_files());
      return at(fmt::format("unknown setting '{}'{}; `offload-build config` lists them",
                            util::shorten(l.key, 60), near ? " (did you mean '" + *near + "'?)" : ""));
    }
    if (!s->in_file)
      return at(fmt::format("{} cannot be set in a config file (it is a secret): use ${}{}", l.key,
                            s->env, l.key == "signing_key" ? " or signing_key_file" : ""));
    if (auto ok = check_value(*s, l.value); !ok) return at(ok.error().message);
    out.push_back(std::move(l));
  }
  return out;
}

Result<void> write_config_file(const fs::path& file, std::string_view key,
                               const std::optional<std::string>& value) {
  if (file.empty()) return Error::usage("no user config file: $HOME is not set");
  std::string old;
  std::error_code ec;
  if (fs::exists(file, ec)) {
    auto read = read_config_file(file);  // refuse to rewrite a file we cannot read
    if (!read) return read.error();
    auto text = util::read_regular_file(file, kMaxConfigFile, "a config file");
    if (!text) return Error::usage(text.error().message);
    old = std::move(*text);
  }
  std::string out;
  bool written = false;
  for (const auto& raw : util::split(old, '\n')) {
    const std::string line = trim(raw);
    const size_t eq = line.find('=');
    if (!line.empty() && line[0] != '#' && eq != std::string::npos && trim(line.substr(0, eq)) == key) {
      if (value && !written) out += fmt::format("{} = {}\n", key, *value);
      written = true;
      continue;
    }
    out += raw + "\n";
  }
  while (out.size() >= 2 && out.substr(out.size() - 2) == "\n\n") out.pop_back();
  if (out == "\n") out.clear();
  if (value && !written) out += fmt::format("{} = {}\n", key, *value);
  fs::create_directories(file.parent_path(), ec);
  return util::write_file_atomic(file, out);
}

Result<Config> load(Config given) {
  Config c = std::move(given);
  add_defaults(c);
  if (auto r = add_file(c, system_config_file(), Origin::SystemFile); !r) return r.error();
  if (auto r = add_file(c, user_config_file(), Origin::UserFile); !r) return r.error();
  if (auto r = add_environment(c); !r) return r.error();
  return c;
}

Config defaults() {
  Config c;
  add_defaults(c);
  return c;
}

}  // namespace ob::config
