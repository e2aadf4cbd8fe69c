// The rustflags cargo gives a crate, as cargo resolves them: its environment
// (CARGO_ENCODED_RUSTFLAGS, RUSTFLAGS, CARGO_BUILD_RUSTFLAGS,
// CARGO_TARGET_<TRIPLE>_RUSTFLAGS) over its config's [target] and [build]
// tables (toolchain/frontends/cargo.hpp).
#include <cctype>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/frontends/cargo.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::cargo {

using json = nlohmann::json;

std::vector<std::string> split_spaces(const std::string& s) {
  std::vector<std::string> out;
  for (auto& f : util::split(s, ' '))
    if (!f.empty()) out.push_back(std::move(f));
  return out;
}

namespace {

std::optional<std::string> env_value(const char* name) {
  if (const char* v = config::env_or_null(name)) return std::string(v);
  return std::nullopt;
}

// A config value that is a string (split on spaces) or an array of strings.
Result<std::vector<std::string>> flag_list(const json& v, const std::string& key) {
  if (v.is_string()) return split_spaces(v.get<std::string>());
  std::vector<std::string> out;
  if (!v.is_array()) return Error::usage("cargo's config: " + key + " must be a string or an array of strings");
  for (const auto& f : v)
    if (f.is_string()) out.push_back(f.get<std::string>());
    else return Error::usage("cargo's config: " + key + " must be a string or an array of strings");
  return out;
}

}  // namespace

RustflagsEnv RustflagsEnv::from_environment(const std::string& triple) {
  std::string var = "CARGO_TARGET_";
  for (char c : triple) var += c == '-' || c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  var += "_RUSTFLAGS";
  return {env_value("CARGO_ENCODED_RUSTFLAGS"), env_value("RUSTFLAGS"), env_value("CARGO_BUILD_RUSTFLAGS"),
          env_value(var.c_str())};
}

Result<Rustflags> effective_rustflags(std::string_view config_text, const std::string& triple,
                                      const RustflagsEnv& env) {
  if (env.encoded && !env.encoded->empty())
    return Rustflags{util::split(*env.encoded, '\x1f'), "CARGO_ENCODED_RUSTFLAGS"};
  if (env.encoded) return Rustflags{{}, "CARGO_ENCODED_RUSTFLAGS"};
  if (env.plain) return Rustflags{split_spaces(*env.plain), "RUSTFLAGS"};
  const json config = config_text.empty() ? json::object() : json::parse(config_text, nullptr, false);
  if (!config.is_object()) return Error::failure("cannot read `cargo config get --format json`'s output");
  const json targets = config.value("target", json::object());
  Rustflags out;
  if (targets.is_object()) {
    for (const auto& [key, table] : targets.items())
      if (util::starts_with(key, "cfg(") && table.is_object() && table.contains("rustflags"))
        return Error::usage(fmt::format(
            "cargo's config sets target.'{}'.rustflags, which cargo gives the host pass when the cfg holds "
            "for its target; offload-build does not evaluate cfg(...) keys, so it cannot give the device pass "
            "the same flags: write them under [target.{}] (and [target.<triple>] for each GPU target) instead",
            key, triple));
    if (targets.contains(triple) && targets[triple].is_object() && targets[triple].contains("rustflags")) {
      auto flags = flag_list(targets[triple]["rustflags"], "target." + triple + ".rustflags");
      if (!flags) return flags.error();
      out = {*flags, "target." + triple + ".rustflags"};
    }
  }
  if (env.target) {
    for (auto& f : split_spaces(*env.target)) out.flags.push_back(f);
    out.origin = "target." + triple + ".rustflags";
  }
  if (!out.origin.empty()) return out;
  const json build = config.value("build", json::object());
  if (build.is_object() && build.contains("rustflags")) {
    auto flags = flag_list(build["rustflags"], "build.rustflags");
    if (!flags) return flags.error();
    out = {*flags, "build.rustflags"};
  }
  if (env.build) {
    for (auto& f : split_spaces(*env.build)) out.flags.push_back(f);
    out.origin = "build.rustflags";
  }
  return out;
}

}  // namespace ob::toolchain::cargo
