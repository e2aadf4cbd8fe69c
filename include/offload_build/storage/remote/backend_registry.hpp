// The remote backends by URL scheme, as in ccache: each backend's file
// describes its scheme(s) (`RemoteScheme`: the URL's own part, its own
// attributes and secrets, its display form and a factory) and the list in
// backend_registry.cpp names each backend once. remote_url.cpp knows only the
// shared part: `URL|attribute=value|...`, the common attributes (read-only,
// connect-timeout, operation-timeout, compress, max-entry-size,
// allow-unsigned) and the redaction of text that does not parse.
//
// Adding a backend: define `std::vector<RemoteScheme> NAME_schemes()` in its
// file and add it to the list in backend_registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/storage/remote/remote.hpp"
#include "offload_build/util/scheme_registry.hpp"

namespace ob::storage {

// A failure to parse: the reason, quoted after the redacted URL. nullopt: ok.
using UrlProblem = std::optional<std::string>;

struct RemoteScheme {
  std::string prefix;  // what the URL starts with: "redis://", "redis+unix:"
  std::string usage;   // its form, in "unsupported URL; use ...": "redis://HOST[:PORT][/DB]"
  // What follows `prefix` into `config` (host, port, path, user, password...).
  std::function<UrlProblem(std::string_view rest, RemoteConfig& config)> parse_url;
  // Its own attributes beyond the common ones (named in "known: ..."), and of
  // those the ones whose value is a secret: shown as NAME=*** everywhere.
  std::vector<std::string> attributes;
  std::vector<std::string> secret_attributes;
  std::function<UrlProblem(std::string_view name, std::string_view value, RemoteConfig& config)>
      parse_attribute;
  // The URL without attributes, every credential as ***: rebuilt from the
  // parts, so none can slip through.
  std::function<std::string(const RemoteConfig& config)> display;
  std::function<std::unique_ptr<RemoteBackend>(const RemoteConfig& config)> create;
};

class RemoteBackendRegistry : public util::SchemeRegistry<RemoteScheme> {
 public:
  // Redis and HTTP(S): the one every caller uses.
  static const RemoteBackendRegistry& builtin();
};

// parse_remote_url, redact_remote_url and make_remote_backend over another
// registry (tests, a backend outside the builtin list).
Result<RemoteConfig> parse_remote_url(std::string_view text, const RemoteBackendRegistry& registry);
std::string redact_remote_url(std::string_view text, const RemoteBackendRegistry& registry);
std::unique_ptr<RemoteBackend> make_remote_backend(const RemoteConfig& config,
                                                   const RemoteBackendRegistry& registry);

// Helpers for a backend's parser and display.
//
// "${NAME}": the environment variable's value (unset or empty: "" and
// config.unusable says why, the remote is skipped); anything else as written.
// A `credential`'s variable is kept from every child process from now on.
std::string expand_remote_value(std::string_view value, RemoteConfig& config,
                                bool credential = true);
std::optional<int> parse_remote_int(std::string_view v, int max);
// `[USER[:PASSWORD]@]HOST[:PORT]` then the path (returned in `path`; no query
// allowed) into config.user/password/has_password/host/port. A USER without
// ':' is the password when `bare_user_is_password` (redis://PASSWORD@HOST).
UrlProblem parse_remote_authority(std::string_view rest, RemoteConfig& config,
                                  bool bare_user_is_password, std::string_view& path);
// `[USER:***@]HOST[:PORT]` as parsed (an IPv6 host in brackets).
std::string display_remote_authority(const RemoteConfig& config);

}  // namespace ob::storage
