// The remote_execution and engine_cache settings (exec/remote/setting.hpp):
// the URL's engine by its scheme (exec/remote/engine_registry.hpp), the attributes
// every engine shares, the redaction of credentials.
#include <charconv>

#include <fmt/format.h>

#include "offload_build/config/config.hpp"
#include "offload_build/exec/remote/setting.hpp"
#include "offload_build/util/secrets.hpp"
#include "offload_build/util/size_text.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::exec {

namespace {

constexpr std::string_view kRedacted = "***";

std::optional<int> parse_duration_ms(std::string_view v) {
  int mult = 1;
  if (v.ends_with("ms")) v.remove_suffix(2);
  else if (v.ends_with("s")) v.remove_suffix(1), mult = 1000;
  else if (v.ends_with("m")) v.remove_suffix(1), mult = 60000;
  long n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n <= 0 || n > 24L * 3600 * 1000 / mult) return std::nullopt;
  return int(n * mult);
}

// ${VAR} in a header value from the environment (a credential: no child sees VAR).
std::optional<std::string> expand(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    if (v.substr(i, 2) == "${") {
      const size_t end = v.find('}', i);
      if (end == std::string_view::npos) return std::nullopt;
      const std::string name(v.substr(i + 2, end - i - 2));
      util::hide_from_children(name);
      auto value = config::env(name.c_str());
      if (!value) return std::nullopt;
      out += *value;
      i = end + 1;
    } else {
      out += v[i++];
    }
  }
  return out;
}

}  // namespace

namespace {

constexpr std::string_view kAttributes[] = {"instance", "jobs", "connect-timeout", "call-timeout",
                                            "execution-timeout", "max-output-size", "header"};

// Whether `attr` ("name=value") names an attribute we know. Any other text
// after a '|' may be the rest of a header value that held a '|'.
bool known_attribute(std::string_view attr) {
  const std::string_view name = attr.substr(0, attr.find('='));
  return attr.find('=') != std::string_view::npos &&
         std::find(std::begin(kAttributes), std::end(kAttributes), name) != std::end(kAttributes);
}

}  // namespace

std::string redact_remote_execution(std::string_view text) {
  std::string out;
  size_t bar = text.find('|');
  out = std::string(text.substr(0, bar));
  while (bar != std::string_view::npos) {
    const size_t next = text.find('|', bar + 1);
    std::string_view attr = text.substr(bar + 1, next == std::string_view::npos ? next : next - bar - 1);
    out += '|';
    if (attr.starts_with("header=")) {
      const size_t colon = attr.find(':');
      out += std::string(attr.substr(0, colon == std::string_view::npos ? attr.size() : colon + 1));
      out += kRedacted;
    } else if (!known_attribute(attr)) {
      out += kRedacted;
    } else {
      out += attr;
    }
    bar = next;
  }
  return out;
}

void hide_remote_execution_secrets(const config::Config& config) {
  for (const auto& value : config.all("remote_execution")) {
    if (value.origin == config::Origin::Environment) util::hide_from_children("OFFLOAD_BUILD_REMOTE_EXECUTION");
    for (size_t at = value.text.find("${"); at != std::string::npos; at = value.text.find("${", at + 2)) {
      const size_t end = value.text.find('}', at);
      if (end == std::string::npos) break;
      util::hide_from_children(value.text.substr(at + 2, end - at - 2));
    }
  }
}

Result<RemoteExecutionConfig> parse_remote_execution(std::string_view text, const EngineRegistry& registry) {
  auto fail = [&](const std::string& why) {
    return Error::usage(fmt::format("remote_execution \"{}\": {}", redact_remote_execution(text), why));
  };
  RemoteExecutionConfig c;
  size_t bar = text.find('|');
  const std::string_view url = text.substr(0, bar);
  c.scheme = registry.find(url);
  if (!c.scheme) {
    std::vector<std::string> usages;
    for (const auto& s : registry.schemes()) usages.push_back(s.usage);
    return fail("unsupported URL; use " + util::join(usages, " or "));
  }
  if (auto problem = c.scheme->parse_address(url.substr(c.scheme->prefix.size()), c.endpoint)) return fail(*problem);
  while (bar != std::string_view::npos) {
    const size_t next = text.find('|', bar + 1);
    std::string_view attr = text.substr(bar + 1, next == std::string_view::npos ? next : next - bar - 1);
    bar = next;
    const size_t eq = attr.find('=');
    const std::string_view name = attr.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : attr.substr(eq + 1);
    if (name == "instance") {
      c.endpoint.instance = std::string(value);
    } else if (name == "jobs") {
      size_t n = 0;
      auto [e, err] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (err != std::errc() || e != value.data() + value.size() || n == 0 || n > 4096)
        return fail("jobs wants a whole number from 1 to 4096");
      c.jobs = n;
    } else if (name == "connect-timeout" || name == "call-timeout" || name == "execution-timeout") {
      auto ms = parse_duration_ms(value);
      if (!ms) return fail(fmt::format("{} wants a duration (250ms, 2s, 10m)", name));
      (name == "connect-timeout" ? c.endpoint.connect_timeout_ms
       : name == "call-timeout"  ? c.endpoint.call_timeout_ms
                                 : c.endpoint.execution_timeout_ms) = *ms;
    } else if (name == "max-output-size") {
      auto bytes = util::parse_size(value);
      if (!bytes || *bytes < 1024) return fail("max-output-size wants a size of at least 1K (256M, 1G)");
      c.endpoint.max_blob_bytes = *bytes;
    } else if (name == "header") {
      const size_t sep = value.find(':');
      if (sep == std::string_view::npos || sep == 0) return fail("header wants NAME:VALUE");
      std::string key(value.substr(0, sep));
      for (char& ch : key) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      auto v = expand(value.substr(sep + 1));
      if (!v) return fail(fmt::format("header {}: an unset variable or an unclosed ${{ in its value", key));
      c.endpoint.headers.emplace_back(key, *v);
    } else {
      // Its name only when it looks like one (lower-case words): the text may
      // be the rest of a header value holding a '|'.
      const bool quotable = eq != std::string_view::npos && !name.empty() && name.size() <= 40 &&
                            name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") == std::string_view::npos;
      return fail(fmt::format("{}; known: instance, jobs, connect-timeout, call-timeout, execution-timeout, "
                              "max-output-size, header (a header value holding '|' goes in a ${{VAR}})",
                              quotable ? fmt::format("unknown attribute \"{}\"", name)
                                       : std::string("an attribute that is not NAME=VALUE")));
    }
  }
  c.display = redact_remote_execution(text);
  return c;
}

std::optional<EngineCache> parse_engine_cache(std::string_view text) {
  if (text == "use") return EngineCache::Use;
  if (text == "trusted") return EngineCache::Trusted;
  if (text == "execute") return EngineCache::Execute;
  if (text == "off") return EngineCache::Off;
  return std::nullopt;
}

Result<RemoteExecutionConfig> parse_remote_execution(std::string_view text) {
  return parse_remote_execution(text, EngineRegistry::builtin());
}

}  // namespace ob::exec
