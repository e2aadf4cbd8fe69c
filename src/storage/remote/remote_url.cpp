// Remote storage URLs: `URL|attribute=value|...` (ccache's form): the shared
// part (the scheme looked up in the registry, which parses the rest; the
// common attributes), the helpers backends parse with, the redaction for
// every message, and the entry names on each kind of server.
#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "offload_build/storage/hash.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/storage/remote/backend_registry.hpp"
#include "offload_build/util/secrets.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::storage {

namespace {

constexpr std::string_view kRedacted = "***";
// What is shown of remote storage text that does not parse: nothing of it,
// since a credential may sit anywhere in text we cannot read.
constexpr std::string_view kUnparsable = "(unparsable; hidden)";

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int v = 0;
      auto r = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
      if (r.ec == std::errc() && r.ptr == s.data() + i + 3) {
        out.push_back(static_cast<char>(v));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

std::optional<bool> parse_bool(std::string_view v) {
  if (v.empty() || v == "true" || v == "on" || v == "yes" || v == "1") return true;
  if (v == "false" || v == "off" || v == "no" || v == "0") return false;
  return std::nullopt;
}

// "250", "250ms" or "2s": milliseconds, 1 to 10 minutes.
std::optional<int> parse_ms(std::string_view v) {
  int scale = 1;
  if (v.size() > 2 && v.substr(v.size() - 2) == "ms") {
    v.remove_suffix(2);
  } else if (v.size() > 1 && v.back() == 's') {
    v.remove_suffix(1);
    scale = 1000;
  }
  int n = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), n);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size() || n <= 0 || n > 600000 / scale)
    return std::nullopt;
  return n * scale;
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// What make_remote_backend gives for a config of a scheme the registry lacks:
// every call fails (the remote is disabled with one warning), nothing crashes.
class NoBackend final : public RemoteBackend {
 public:
  explicit NoBackend(std::string prefix) : why_{RemoteFailure::Kind::Error,
                                                fmt::format("no backend for \"{}\" URLs", prefix)} {}
  RemoteResult<std::optional<std::string>> get(std::string_view, std::string_view) override {
    return why_;
  }
  RemoteResult<bool> put(std::string_view, std::string_view, std::string_view, bool) override {
    return why_;
  }
  RemoteResult<bool> remove(std::string_view, std::string_view) override { return why_; }

 private:
  RemoteFailure why_;
};

// The end of a URL's authority (host part): the first '/', '?', '#' or '|'
// after "://", as URL parsers (RFC 3986, WHATWG, curl) end it; the userinfo is
// everything before its last '@'.
size_t authority_end(std::string_view url, size_t start) {
  size_t end = url.find_first_of("/?#|", start);
  return end == std::string_view::npos ? url.size() : end;
}

// Whether `name` may be quoted in a message about an attribute we do not
// know: an attribute some scheme knows, or a near miss of one (a typo). Any
// other text after a '|' may be the rest of a secret that held a '|'.
bool quotable_attribute(std::string_view name, const RemoteBackendRegistry& registry) {
  std::vector<std::string> known{"read-only", "connect-timeout", "operation-timeout",
                                 "max-entry-size", "compress", "allow-unsigned", "password"};
  for (const auto& scheme : registry.schemes())
    known.insert(known.end(), scheme.attributes.begin(), scheme.attributes.end());
  if (name.empty() || name.size() > 40 || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") !=
                                              std::string_view::npos)
    return false;
  return contains(known, name) || util::closest_match(name, known).has_value();
}

}  // namespace

std::string expand_remote_value(std::string_view value, RemoteConfig& config, bool credential) {
  if (value.size() > 3 && starts_with(value, "${") && value.back() == '}') {
    std::string name(value.substr(2, value.size() - 3));
    if (credential) util::hide_from_children(name);
    const char* v = config::env_or_null(name.c_str());
    if (!v || !*v) {
      if (config.unusable.empty())
        config.unusable = fmt::format("its credential's environment variable {} is not set", name);
      return {};
    }
    return v;
  }
  if (credential && !value.empty()) config.literal_secret = true;
  return std::string(value);
}

std::optional<int> parse_remote_int(std::string_view v, int max) {
  int n = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), n);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size() || n < 0 || n > max) return std::nullopt;
  return n;
}

UrlProblem parse_remote_authority(std::string_view rest, RemoteConfig& c,
                                  bool bare_user_is_password, std::string_view& path) {
  size_t end = authority_end(rest, 0);
  std::string_view authority = rest.substr(0, end);
  path = rest.substr(end);
  // An '@' past the authority: a user name or password holding '/', '?' or
  // '#' unencoded. Parsers disagree on such text; refuse it (the shown
  // text hides it whole).
  if (path.find('@') != std::string_view::npos)
    return "an '@' after the host: a '/', '?', '#' or '|' in a user name or password must be "
           "percent-encoded (%2F, %3F, %23, %7C)";
  if (!path.empty() && path.front() == '?') return "no query is allowed here";
  if (path.find('#') != std::string_view::npos) return "no fragment ('#') is allowed here";
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority.remove_prefix(at + 1);
    size_t colon = userinfo.find(':');
    std::string_view user = userinfo.substr(0, colon);
    std::string_view password;
    if (colon != std::string_view::npos) {
      password = userinfo.substr(colon + 1);
    } else if (bare_user_is_password) {
      password = user;
      user = {};
    }
    const bool literal_before = c.literal_secret;
    c.user = expand_remote_value(percent_decode(user), c);
    if (colon != std::string_view::npos) c.literal_secret = literal_before;  // a name beside a password
    c.password = expand_remote_value(percent_decode(password), c);
    c.has_password = !password.empty();
  }
  std::string_view port;
  if (starts_with(authority, "[")) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return "an IPv6 address lacks its ']'";
    c.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return "unexpected text after the IPv6 address";
      port = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    c.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (c.host.empty()) return "no host";
  if (!port.empty() || authority.find(':') != std::string_view::npos) {
    auto p = parse_remote_int(port, 65535);
    if (!p || *p == 0) return "the port must be a number from 1 to 65535";
    c.port = *p;
  }
  return std::nullopt;
}

std::string display_remote_authority(const RemoteConfig& c) {
  std::string shown;
  if (c.has_password) shown += fmt::format("{}:{}@", c.user, kRedacted);
  else if (!c.user.empty()) shown += fmt::format("{}@", kRedacted);  // may be a token
  shown += c.host.find(':') != std::string::npos ? "[" + c.host + "]" : c.host;
  if (c.port) shown += fmt::format(":{}", c.port);
  return shown;
}

namespace {
Result<RemoteConfig> parse_fields(std::string_view text, const RemoteBackendRegistry& registry);
}  // namespace

std::string redact_remote_url(std::string_view text, const RemoteBackendRegistry& registry) {
  // Text that does not parse is never shown: where its credential ends is
  // exactly what we could not tell.
  if (!parse_fields(text, registry)) return std::string(kUnparsable);
  // It parsed, so the split below is the parser's: the URL up to the first
  // '|', its userinfo up to the last '@' of its authority (no '@' follows).
  std::string out;
  size_t bar = text.find('|');
  std::string_view url = text.substr(0, bar);
  size_t scheme_end = url.find("://");
  if (scheme_end != std::string_view::npos) {
    size_t start = scheme_end + 3;
    size_t end = authority_end(url, start);
    std::string_view authority = url.substr(start, end - start);
    size_t at = authority.rfind('@');
    if (at != std::string_view::npos) {
      std::string_view userinfo = authority.substr(0, at);
      size_t colon = userinfo.find(':');
      std::string shown = colon == std::string_view::npos
                              ? std::string(kRedacted)
                              : fmt::format("{}:{}", userinfo.substr(0, colon), kRedacted);
      out = fmt::format("{}{}{}", url.substr(0, start), shown, url.substr(start + at));
    }
  }
  if (out.empty()) out = std::string(url);
  while (bar != std::string_view::npos) {
    size_t next = text.find('|', bar + 1);
    std::string_view attr = text.substr(bar + 1, next == std::string_view::npos ? next : next - bar - 1);
    size_t eq = attr.find('=');
    std::string_view name = attr.substr(0, eq);
    out += '|';
    // Any scheme's secret: the URL may not name its scheme right.
    bool secret = name == "password";
    for (const auto& scheme : registry.schemes()) secret = secret || contains(scheme.secret_attributes, name);
    if (eq != std::string_view::npos && secret)
      out += fmt::format("{}={}", name, kRedacted);
    else
      out += attr;
    bar = next;
  }
  return out;
}

std::vector<std::string> split_remote_list(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = text.find_first_not_of(" \t\n", i);
    if (start == std::string_view::npos) break;
    size_t end = text.find_first_of(" \t\n", start);
    if (end == std::string_view::npos) end = text.size();
    out.emplace_back(text.substr(start, end - start));
    i = end;
  }
  return out;
}

namespace {

// The parser: a failure's message is the bare reason, which names nothing of
// the text but a known attribute.
Result<RemoteConfig> parse_fields(std::string_view text, const RemoteBackendRegistry& registry) {
  auto fail = [](const std::string& what) -> Error { return Error::usage(what); };
  RemoteConfig c;
  size_t bar = text.find('|');
  std::string_view url = text.substr(0, bar);

  const RemoteScheme* scheme = registry.find(url);
  if (!scheme) {
    std::string forms;
    const auto& all = registry.schemes();
    for (size_t i = 0; i < all.size(); ++i)
      forms += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i].usage;
    return fail("unsupported URL; use " + forms);
  }
  c.prefix = scheme->prefix;
  if (auto problem = scheme->parse_url(url.substr(scheme->prefix.size()), c)) {
    // An '@' past the first '|': a password holding a '|' cut the URL short.
    if (bar != std::string_view::npos && text.find('@', bar) != std::string_view::npos)
      *problem += " (a '|' in a user name or password must be percent-encoded: %7C)";
    return fail(*problem);
  }

  while (bar != std::string_view::npos) {
    size_t next = text.find('|', bar + 1);
    std::string_view attr =
        text.substr(bar + 1, next == std::string_view::npos ? next : next - bar - 1);
    bar = next;
    size_t eq = attr.find('=');
    std::string_view name = attr.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view{} : attr.substr(eq + 1);
    if (name == "read-only" || name == "compress" || name == "allow-unsigned") {
      auto b = parse_bool(value);
      if (!b) return fail(fmt::format("{} wants true or false", name));
      (name == "read-only" ? c.read_only : name == "compress" ? c.compress : c.allow_unsigned) = *b;
    } else if (name == "connect-timeout" || name == "operation-timeout") {
      auto ms = parse_ms(value);
      if (!ms) return fail(fmt::format("{} wants milliseconds (250, 250ms, 2s)", name));
      (name == "connect-timeout" ? c.connect_timeout_ms : c.operation_timeout_ms) = *ms;
    } else if (name == "max-entry-size") {
      auto bytes = parse_size(value);
      if (!bytes || *bytes < 1024)
        return fail("max-entry-size wants a size of at least 1K (64M, 256M; K, M, G are binary)");
      c.max_entry_bytes = *bytes;
    } else if (contains(scheme->attributes, name)) {
      if (auto problem = scheme->parse_attribute(name, value, c)) return fail(*problem);
    } else {
      std::string known = "read-only, connect-timeout, operation-timeout, max-entry-size, compress, "
                          "allow-unsigned";
      for (const auto& own : scheme->attributes) known += ", " + own;
      if (!quotable_attribute(name, registry))
        return fail(fmt::format("an attribute that is not one (not shown: a '|' inside a password "
                                "or token must be written %7C); known: {}", known));
      return fail(fmt::format("unknown attribute \"{}\"; known: {}", name, known));
    }
  }

  std::string shown = scheme->display(c);
  if (c.allow_unsigned) shown += "|allow-unsigned";  // a trust setting: shown in doctor and stats
  if (c.read_only) shown += "|read-only";
  for (const auto& secret : scheme->secret_attributes)
    if (text.find("|" + secret + "=") != std::string_view::npos)
      shown += fmt::format("|{}={}", secret, kRedacted);
  c.display = shown;
  return c;
}

}  // namespace

Result<RemoteConfig> parse_remote_url(std::string_view text, const RemoteBackendRegistry& registry) {
  auto c = parse_fields(text, registry);
  if (!c) return Error::usage(fmt::format("remote storage {}: {}", kUnparsable, c.error().message));
  return c;
}

Result<RemoteConfig> parse_remote_url(std::string_view text) {
  return parse_remote_url(text, RemoteBackendRegistry::builtin());
}

std::string redact_remote_url(std::string_view text) {
  return redact_remote_url(text, RemoteBackendRegistry::builtin());
}

std::unique_ptr<RemoteBackend> make_remote_backend(const RemoteConfig& config,
                                                   const RemoteBackendRegistry& registry) {
  const RemoteScheme* scheme = registry.find(config.prefix);
  if (!scheme) return std::make_unique<NoBackend>(config.prefix);
  return scheme->create(config);
}

std::unique_ptr<RemoteBackend> make_remote_backend(const RemoteConfig& config) {
  return make_remote_backend(config, RemoteBackendRegistry::builtin());
}

std::string redis_key(std::string_view kind, std::string_view key) {
  return fmt::format("offload-build:v{}:{}:{}", kFormatVersion, kind, key);
}

std::string http_path(RemoteConfig::Layout layout, std::string_view kind, std::string_view key) {
  switch (layout) {
    case RemoteConfig::Layout::Flat:
      return fmt::format("v{}-{}-{}", kFormatVersion, kind, key);
    case RemoteConfig::Layout::Bazel:
      return "ac/" + sha256_hex(redis_key(kind, key));
    case RemoteConfig::Layout::Subdirs:
      break;
  }
  return fmt::format("v{}/{}/{}/{}", kFormatVersion, kind, key.substr(0, 2), key);
}


}  // namespace ob::storage
