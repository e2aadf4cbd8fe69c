// The Rust side of offload.json: "toolchain" as {"llvm", "rustc"}, "device_cfg",
// and the shape of a Rust project (one crate root; defines become --cfg).
#include "rust_manifest.hpp"

#include <algorithm>
#include <cctype>

#include "offload_build/util/strings.hpp"

namespace ob::manifest::detail {
namespace {

fs::path resolve(const fs::path& project_dir, const std::string& p) {
  fs::path out = (project_dir / p).lexically_normal();
  if (!out.has_filename() && out.has_relative_path()) out = out.parent_path();
  return out;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// Where source number `i` (after expansion) came from: the entry itself when each
// entry named one file, else the list.
std::string source_pointer(const Reader& r, size_t i) {
  const auto& list = r.root().at("sources");
  if (list.size() > i) return json_pointer("/sources", i);
  return list.size() == 1 ? json_pointer("/sources", 0) : "/sources";
}

}  // namespace

Result<void> read_toolchain(const Reader& r, Manifest& m) {
  const auto it = r.root().find("toolchain");
  if (it == r.root().end()) return {};
  if (!it->is_object()) {
    auto llvm = r.optional_string("toolchain");
    OB_TRY(llvm);
    m.toolchain = resolve(m.project_dir, **llvm);
    return {};
  }
  static const std::vector<std::string> keys = {"llvm", "rustc"};
  for (const auto& [key, value] : it->items()) {
    const std::string where = json_pointer("/toolchain", key);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string msg = "unknown key \"" + key + "\" in \"toolchain\"; ";
      if (auto near = util::closest_match(key, keys)) msg += "did you mean \"" + *near + "\"?";
      else msg += "accepted: \"llvm\" (the LLVM root) and \"rustc\" (the rustc program)";
      return r.error_at_key(where, msg);
    }
    if (!value.is_string() || value.get<std::string>().empty())
      return r.error_at(where, "\"toolchain\" \"" + key + "\" must be a non-empty string, e.g. " +
                                   (key == "llvm" ? std::string(R"("llvm": "/usr/lib/llvm-22")")
                                                  : std::string(R"("rustc": "/opt/rust/bin/rustc")")));
    (key == "llvm" ? m.toolchain : m.rustc) = resolve(m.project_dir, value.get<std::string>());
  }
  return {};
}

Result<void> read_rust(const Reader& r, Manifest& m) {
  auto cfg = r.optional_string("device_cfg");
  OB_TRY(cfg);
  if (*cfg) {
    if (!is_identifier(**cfg))
      return r.error_at("/device_cfg", "\"device_cfg\" \"" + **cfg + "\" is not a cfg name; write "
                                           "an identifier, e.g. \"offload_device\"");
    m.device_cfg = **cfg;
  }
  if (!m.is_rust()) {
    if (*cfg) return r.error_at("/device_cfg", "\"device_cfg\" applies to Rust crates only; remove it");
    for (size_t i = 0; i < m.sources.size(); ++i)
      if (m.sources[i].language == Language::Rust)
        return r.error_at(source_pointer(r, i),
                          "a Rust crate is built from its crate root alone; list C and C++ sources "
                          "in one manifest and the Rust crate root in another");
    return {};
  }
  const auto shown = [&](size_t i) { return m.sources[i].path.lexically_relative(m.project_dir).string(); };
  if (m.sources.size() > 1) {
    const size_t other = 1;
    if (m.sources[other].language != Language::Rust)
      return r.error_at(source_pointer(r, other),
                        "\"" + shown(other) + "\" is not Rust; a Rust crate is built from its crate "
                        "root alone, so list only it (C and C++ sources need a manifest of their own)");
    return r.error_at(source_pointer(r, other),
                      "a Rust crate has one crate root, but \"sources\" names \"" + shown(0) +
                          "\" and \"" + shown(other) + "\"; list only the crate root (e.g. "
                          "\"src/main.rs\"): rustc finds the modules it declares (mod x;) itself");
  }
  if (!r.root().value("include_dirs", nlohmann::json::array()).empty())
    return r.error_at("/include_dirs", "\"include_dirs\" does not apply to a Rust crate (rustc "
                                       "finds modules from the crate root); remove it");
  for (size_t i = 0; i < m.defines.size(); ++i)
    if (m.defines[i].find('(') < m.defines[i].find('='))
      return r.error_at(json_pointer("/defines", i),
                        "define \"" + m.defines[i] + "\" has parameters; for Rust, defines become "
                        "--cfg NAME or --cfg NAME=\"VALUE\", so write NAME or NAME=VALUE");
  return {};
}

}  // namespace ob::manifest::detail
