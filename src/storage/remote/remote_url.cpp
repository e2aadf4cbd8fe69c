// Remote storage URLs: `URL|attribute=value|...` (ccache's form), their
// redaction for every message, and the entry names on each kind of server.
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "offload_build/storage/hash.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/storage/remote/remote.hpp"
#include "offload_build/util/secrets.hpp"

namespace ob::cache {

namespace {

constexpr std::string_view kRedacted = "***";

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

// "${NAME}": the environment variable's value; anything else as written. A
// credential's variable is kept from every child process from now on.
std::string expand(std::string_view value, std::string& unusable, bool credential = true) {
  if (value.size() > 3 && starts_with(value, "${") && value.back() == '}') {
    std::string name(value.substr(2, value.size() - 3));
    if (credential) util::hide_from_children(name);
    const char* v = config::env_or_null(name.c_str());
    if (!v || !*v) {
      if (unusable.empty())
        unusable = fmt::format("its credential's environment variable {} is not set", name);
      return {};
    }
    return v;
  }
  return std::string(value);
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

std::optional<int> parse_int(std::string_view v, int max) {
  int n = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), n);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size() || n < 0 || n > max) return std::nullopt;
  return n;
}

// The end of a URL's authority (host part): the first '/', '?' or '|' after "://".
size_t authority_end(std::string_view url, size_t start) {
  size_t end = url.find_first_of("/?|", start);
  return end == std::string_view::npos ? url.size() : end;
}

}  // namespace

std::string redact_remote_url(std::string_view text) {
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
    if (eq != std::string_view::npos && (name == "bearer-token" || name == "password"))
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

Result<RemoteConfig> parse_remote_url(std::string_view text) {
  auto fail = [&](const std::string& what) -> Error {
    return Error::usage(fmt::format("remote storage \"{}\": {}", redact_remote_url(text), what));
  };
  RemoteConfig c;
  size_t bar = text.find('|');
  std::string_view url = text.substr(0, bar);

  std::string_view rest;
  if (starts_with(url, "redis://")) {
    c.scheme = RemoteConfig::Scheme::Redis;
    rest = url.substr(8);
  } else if (starts_with(url, "redis+unix:")) {
    c.scheme = RemoteConfig::Scheme::RedisUnix;
    rest = url.substr(11);
    if (starts_with(rest, "//")) rest.remove_prefix(2);
  } else if (starts_with(url, "http://")) {
    c.scheme = RemoteConfig::Scheme::Http;
    rest = url.substr(7);
  } else if (starts_with(url, "https://")) {
    c.scheme = RemoteConfig::Scheme::Https;
    rest = url.substr(8);
  } else {
    return fail("unsupported URL; use redis://HOST[:PORT][/DB], redis+unix:///SOCKET, "
                "http://HOST[:PORT]/PREFIX or https://...");
  }

  if (c.scheme == RemoteConfig::Scheme::RedisUnix) {
    size_t q = rest.find('?');
    c.path = std::string(rest.substr(0, q));
    if (c.path.empty() || c.path.front() != '/')
      return fail("the socket must be an absolute path: redis+unix:///path/to/socket");
    if (q != std::string_view::npos) {
      std::string_view query = rest.substr(q + 1);
      if (!starts_with(query, "db=")) return fail("the only query is ?db=N");
      auto db = parse_int(query.substr(3), 1 << 20);
      if (!db) return fail("?db= wants a database number");
      c.db = *db;
    }
  } else {
    size_t end = authority_end(rest, 0);
    std::string_view authority = rest.substr(0, end);
    std::string_view path = rest.substr(end);
    if (!path.empty() && path.front() == '?') return fail("no query is allowed here");
    size_t at = authority.rfind('@');
    if (at != std::string_view::npos) {
      std::string_view userinfo = authority.substr(0, at);
      authority.remove_prefix(at + 1);
      size_t colon = userinfo.find(':');
      std::string_view user = userinfo.substr(0, colon);
      std::string_view password;
      if (colon != std::string_view::npos) {
        password = userinfo.substr(colon + 1);
      } else if (c.scheme == RemoteConfig::Scheme::Redis) {
        password = user;  // redis://PASSWORD@HOST
        user = {};
      }
      c.user = expand(percent_decode(user), c.unusable);
      c.password = expand(percent_decode(password), c.unusable);
      c.has_password = !password.empty();
    }
    std::string_view port;
    if (starts_with(authority, "[")) {
      size_t close = authority.find(']');
      if (close == std::string_view::npos) return fail("an IPv6 address lacks its ']'");
      c.host = std::string(authority.substr(1, close - 1));
      std::string_view after = authority.substr(close + 1);
      if (!after.empty()) {
        if (after.front() != ':') return fail("unexpected text after the IPv6 address");
        port = after.substr(1);
      }
    } else {
      size_t colon = authority.rfind(':');
      c.host = std::string(authority.substr(0, colon));
      if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    }
    if (c.host.empty()) return fail("no host");
    if (!port.empty() || authority.find(':') != std::string_view::npos) {
      auto p = parse_int(port, 65535);
      if (!p || *p == 0) return fail("the port must be a number from 1 to 65535");
      c.port = *p;
    }
    if (c.scheme == RemoteConfig::Scheme::Redis) {
      if (!path.empty() && path != "/") {
        auto db = parse_int(path.substr(1), 1 << 20);
        if (!db) return fail("the path of a redis:// URL is a database number (/0, /1, ...)");
        c.db = *db;
      }
    } else {
      while (!path.empty() && path.back() == '/') path.remove_suffix(1);
      c.path = std::string(path);
    }
  }

  const bool http = c.scheme == RemoteConfig::Scheme::Http || c.scheme == RemoteConfig::Scheme::Https;
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
    } else if (name == "layout" && http) {
      if (value == "subdirs") c.layout = RemoteConfig::Layout::Subdirs;
      else if (value == "flat") c.layout = RemoteConfig::Layout::Flat;
      else if (value == "bazel") c.layout = RemoteConfig::Layout::Bazel;
      else return fail("layout is subdirs, flat or bazel");
    } else if (name == "bearer-token" && http) {
      if (value.empty()) return fail("bearer-token wants a token or ${VARIABLE}");
      c.bearer_token = expand(value, c.unusable);
    } else if (name == "ca-file" && c.scheme == RemoteConfig::Scheme::Https) {
      if (value.empty()) return fail("ca-file wants the path of a PEM file of CA certificates");
      c.ca_file = expand(value, c.unusable, false);
      // Unreadable: skipped with one warning (a remote never fails a build).
      if (!c.ca_file.empty() && ::access(c.ca_file.c_str(), R_OK) != 0 && c.unusable.empty())
        c.unusable = fmt::format("its ca-file {} cannot be read ({})", c.ca_file, std::strerror(errno));
    } else {
      return fail(fmt::format(
          "unknown attribute \"{}\"; known: read-only, connect-timeout, operation-timeout, "
          "max-entry-size, compress, allow-unsigned{}{}",
          name, http ? ", layout, bearer-token" : "",
          c.scheme == RemoteConfig::Scheme::Https ? ", ca-file" : ""));
    }
  }

  // The display form: rebuilt from the parts, so no credential can slip through.
  std::string shown;
  switch (c.scheme) {
    case RemoteConfig::Scheme::Redis: shown = "redis://"; break;
    case RemoteConfig::Scheme::RedisUnix: shown = "redis+unix://"; break;
    case RemoteConfig::Scheme::Http: shown = "http://"; break;
    case RemoteConfig::Scheme::Https: shown = "https://"; break;
  }
  if (c.scheme == RemoteConfig::Scheme::RedisUnix) {
    shown += c.path;
    if (c.db) shown += fmt::format("?db={}", c.db);
  } else {
    if (c.has_password) shown += fmt::format("{}:{}@", c.user, kRedacted);
    else if (!c.user.empty()) shown += fmt::format("{}@", kRedacted);  // may be a token
    shown += c.host.find(':') != std::string::npos ? "[" + c.host + "]" : c.host;
    if (c.port) shown += fmt::format(":{}", c.port);
    if (c.scheme == RemoteConfig::Scheme::Redis) {
      if (c.db) shown += fmt::format("/{}", c.db);
    } else {
      shown += c.path;
    }
  }
  if (c.allow_unsigned) shown += "|allow-unsigned";  // a trust setting: shown in doctor and stats
  if (c.read_only) shown += "|read-only";
  if (!c.bearer_token.empty() || (http && text.find("|bearer-token=") != std::string_view::npos))
    shown += fmt::format("|bearer-token={}", kRedacted);
  c.display = shown;
  return c;
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

std::unique_ptr<RemoteBackend> make_remote_backend(const RemoteConfig& config) {
  if (config.scheme == RemoteConfig::Scheme::Redis || config.scheme == RemoteConfig::Scheme::RedisUnix)
    return make_redis_backend(config);
  return make_http_backend(config);
}

}  // namespace ob::cache
