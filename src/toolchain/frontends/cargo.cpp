#include "offload_build/toolchain/frontends/cargo.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::cargo {

namespace {

using nlohmann::json;

// Exactly these flags for every crate (an empty list too): cargo then reads
// no other source (CARGO_ENCODED_RUSTFLAGS wins over RUSTFLAGS and the config).
void encoded_rustflags(Invocation& inv, const std::vector<std::string>& flags) {
  inv.env.emplace_back("CARGO_ENCODED_RUSTFLAGS", util::join(flags, "\x1f"));
}

bool has_kind(const json& target, std::string_view kind) {
  for (const auto& k : target.value("kind", json::array()))
    if (k.is_string() && k.get<std::string>() == kind) return true;
  return false;
}

Result<Package> read_package(const json& pkg, const fs::path& target_dir, const fs::path& workspace_root) {
  Package p;
  p.workspace_root = workspace_root;
  p.name = pkg.value("name", "");
  p.id = pkg.value("id", "");
  p.manifest_path = pkg.value("manifest_path", "");
  p.target_directory = target_dir;
  for (const auto& t : pkg.value("targets", json::array())) {
    if (has_kind(t, "lib") || has_kind(t, "rlib") || has_kind(t, "staticlib") || has_kind(t, "cdylib")) {
      p.lib = rustc::crate_name(t.value("name", p.name));
      p.lib_root = t.value("src_path", "");
    }
    if (has_kind(t, "bin")) p.bins.push_back(t.value("name", ""));
  }
  const json meta = pkg.value("metadata", json::object());
  const json offload = meta.is_object() ? meta.value("offload", json::object()) : json::object();
  if (!offload.is_object())
    return Error::usage(fmt::format("{}: [package.metadata.offload] must be a table", p.manifest_path.string()));
  for (const auto& t : offload.value("targets", json::array()))
    if (t.is_string()) p.targets.push_back(t.get<std::string>());
  if (offload.contains("device_cfg") && offload["device_cfg"].is_string())
    p.device_cfg = offload["device_cfg"].get<std::string>();
  return p;
}

}  // namespace

Result<std::vector<Package>> select_packages(std::string_view text, const fs::path& project_dir,
                                            const Selection& sel) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    return Error::failure(std::string("cannot read `cargo metadata` output: ") + e.what());
  }
  const fs::path target_dir = root.value("target_directory", "");
  const fs::path workspace_root = root.value("workspace_root", "");
  std::vector<std::string> members;  // in cargo's order
  for (const auto& id : root.value("workspace_members", json::array()))
    if (id.is_string()) members.push_back(id.get<std::string>());
  std::vector<const json*> pkgs;
  std::vector<std::string> names;
  const json packages = root.value("packages", json::array());  // outlives the pointers into it
  for (const auto& p : packages)
    if (members.empty() || std::count(members.begin(), members.end(), p.value("id", ""))) {
      pkgs.push_back(&p);
      names.push_back(p.value("name", ""));
    }
  auto is_program = [](const json* p) {
    const json targets = p->value("targets", json::array());
    return std::any_of(targets.begin(), targets.end(), [](const json& t) { return has_kind(t, "bin"); });
  };
  std::vector<const json*> chosen;
  if (!sel.packages.empty()) {  // -p, as many as given
    for (const auto& name : sel.packages) {
      auto it = std::find_if(pkgs.begin(), pkgs.end(), [&](const json* p) { return p->value("name", "") == name; });
      if (it == pkgs.end())
        return Error::usage(fmt::format("no package \"{}\" in this workspace; packages: {}", name,
                                        util::join(names, ", ")));
      if (std::find(chosen.begin(), chosen.end(), *it) == chosen.end()) chosen.push_back(*it);
    }
  } else if (sel.workspace) {  // --workspace, --all: every member but --exclude
    for (const auto* p : pkgs)
      if (!std::count(sel.exclude.begin(), sel.exclude.end(), p->value("name", ""))) chosen.push_back(p);
  } else {
    for (const auto* p : pkgs)  // the package in the directory
      if ((fs::path(p->value("manifest_path", "")).parent_path() / "").lexically_normal() ==
          (project_dir / "").lexically_normal())
        chosen = {p};
    if (chosen.empty()) {  // a workspace root: its default members, else all of them, as cargo builds
      std::vector<std::string> defaults;
      for (const auto& id : root.value("workspace_default_members", json::array()))
        if (id.is_string()) defaults.push_back(id.get<std::string>());
      for (const auto* p : pkgs)
        if (defaults.empty() || std::count(defaults.begin(), defaults.end(), p->value("id", ""))) chosen.push_back(p);
    }
  }
  if (!sel.bins.empty()) {  // --bin: cargo builds only the packages that have one of them
    std::vector<const json*> with_bin;
    for (const auto* p : chosen)
      for (const auto& t : p->value("targets", json::array()))
        if (has_kind(t, "bin") && std::count(sel.bins.begin(), sel.bins.end(), t.value("name", "")) &&
            std::find(with_bin.begin(), with_bin.end(), p) == with_bin.end())
          with_bin.push_back(p);
    if (!with_bin.empty()) chosen = with_bin;  // else cargo says there is no such program
  }
  if (chosen.empty()) return Error::usage(fmt::format("no package to build (packages: {})", util::join(names, ", ")));
  // The first program first: its name is the build's (the summary, offload/<profile>/).
  std::stable_partition(chosen.begin(), chosen.end(), is_program);
  std::vector<Package> out;
  for (const auto* p : chosen) {
    auto pkg = read_package(*p, target_dir, workspace_root);
    if (!pkg) return pkg.error();
    out.push_back(std::move(*pkg));
  }
  return out;
}

std::vector<Package> local_dependencies(std::string_view text, const Package& chosen) {
  const json root = json::parse(text, nullptr, false);
  if (!root.is_object()) return {};
  std::map<std::string, std::vector<std::string>> edges;
  const json resolve = root.value("resolve", json::object());
  for (const auto& node : resolve.is_object() ? resolve.value("nodes", json::array()) : json::array())
    for (const auto& d : node.value("dependencies", json::array()))
      if (d.is_string()) edges[node.value("id", "")].push_back(d.get<std::string>());
  std::set<std::string> seen{chosen.id};
  std::vector<std::string> todo{chosen.id};
  while (!todo.empty()) {
    const std::string id = todo.back();
    todo.pop_back();
    for (const auto& d : edges[id])
      if (seen.insert(d).second) todo.push_back(d);
  }
  std::set<std::string> members;
  for (const auto& m : root.value("workspace_members", json::array()))
    if (m.is_string()) members.insert(m.get<std::string>());
  std::vector<Package> out;
  for (const auto& p : root.value("packages", json::array())) {
    const std::string id = p.value("id", "");
    const bool local = !p.contains("source") || p["source"].is_null();
    if (id == chosen.id || !local || !seen.count(id)) continue;
    auto pkg = read_package(p, chosen.target_directory, chosen.workspace_root);
    if (!pkg || !pkg->lib) continue;
    pkg->member = members.count(id) > 0;
    out.push_back(*pkg);
  }
  std::sort(out.begin(), out.end(), [](const Package& a, const Package& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> inactive_optional_dependencies(std::string_view text, const Package& chosen) {
  const json root = json::parse(text, nullptr, false);
  if (!root.is_object()) return {};
  std::set<std::string> active;
  for (const auto& d : local_dependencies(text, chosen)) active.insert(d.name);
  std::vector<std::string> out;
  for (const auto& p : root.value("packages", json::array())) {
    if (p.value("id", "") != chosen.id) continue;
    for (const auto& d : p.value("dependencies", json::array())) {
      if (!d.is_object() || !d.value("optional", false) || !d.contains("path")) continue;
      const std::string name = d.value("name", "");
      if (!name.empty() && !active.count(name)) out.push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<Artifact> parse_artifact(std::string_view line) {
  if (line.find("\"compiler-artifact\"") == std::string_view::npos) return std::nullopt;
  json m = json::parse(line, nullptr, false);
  if (!m.is_object() || m.value("reason", "") != "compiler-artifact") return std::nullopt;
  Artifact a;
  a.package_id = m.value("package_id", "");
  const json target = m.value("target", json::object());
  for (const auto& k : target.value("kind", json::array()))
    if (k.is_string()) a.kinds.push_back(k.get<std::string>());
  for (const auto& f : m.value("filenames", json::array()))
    if (f.is_string()) a.filenames.emplace_back(f.get<std::string>());
  if (m.contains("executable") && m["executable"].is_string()) a.executable = m["executable"].get<std::string>();
  a.fresh = m.value("fresh", false);
  a.target_name = target.value("name", "");
  a.test = m.value("profile", json::object()).value("test", false);
  a.manifest_path = m.value("manifest_path", "");
  a.src_path = target.value("src_path", "");
  return a;
}

std::optional<bool> parse_build_finished(std::string_view line) {
  if (line.find("\"build-finished\"") == std::string_view::npos) return std::nullopt;
  json m = json::parse(line, nullptr, false);
  if (!m.is_object() || m.value("reason", "") != "build-finished") return std::nullopt;
  return m.value("success", false);
}

std::string device_profile(const UserArgs& user) {
  return user.profile == "test" || user.profile == "bench" ? "offload-" + user.profile : user.profile;
}

std::string profile_lto_var(const std::string& profile) {
  std::string up;
  for (char c : profile) up += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "CARGO_PROFILE_" + up + "_LTO";
}

fs::path device_target_dir(const Package& p, const manifest::Target& t, const std::string& config) {
  return p.target_directory / "offload-device" / t.short_name() / (config.empty() ? p.name : p.name + "-" + config);
}

fs::path device_output(const Package& p, const manifest::Target& t, const std::string& config) {
  return device_target_dir(p, t, config) / "offload" /
         (p.lib.value_or(p.name) + "." + t.short_name() + rustc::device_output_suffix(t));
}

std::optional<fs::path> device_archive(const std::vector<std::string>& messages, const Package& p) {
  for (const auto& m : messages)
    if (auto a = parse_artifact(m); a && a->package_id == p.id)
      for (const auto& f : a->filenames)
        if (f.extension() == ".a") return f;
  return std::nullopt;
}

fs::path device_image(const Package& p, const manifest::Target& t, const std::string& config) {
  return device_target_dir(p, t, config) / "offload" /
         (p.lib.value_or(p.name) + "." + t.short_name() + rustc::device_image_suffix(t));
}

namespace {

// `text` with every `from` replaced by `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

std::string cargo_home() {
  if (const char* h = config::env_or_null("CARGO_HOME")) return h;
  if (const char* h = config::env_or_null("HOME")) return std::string(h) + "/.cargo";
  return "";
}

}  // namespace

DeviceConfig device_config(std::string_view unit_graph, const Package& p, const std::vector<std::string>& rustflags) {
  const json root = json::parse(unit_graph, nullptr, false);
  std::string units = root.is_object() && root.contains("units") ? root["units"].dump() : std::string(unit_graph);
  units = replace_all(replace_all(units, p.workspace_root.string() + "/", "<workspace>/"), cargo_home() + "/",
                      "<cargo-home>/");
  std::string portable = "units " + units;
  for (const auto& f : rustflags) portable += "\nrustflag " + f;
  DeviceConfig c;
  c.portable = content_hash(portable);
  c.place = content_hash(portable + "\nworkspace " + p.workspace_root.string() + "\nmanifest " +
                         p.manifest_path.string() + "\ntarget-dir " + p.target_directory.string());
  return c;
}

namespace {

bool set_by_cargo(const std::string& name) { return util::starts_with(name, "CARGO_") || name == "OUT_DIR"; }

}  // namespace

std::optional<std::string> device_depfile(const fs::path& archive, const std::vector<std::string>& config_env) {
  fs::path depinfo = archive;
  depinfo.replace_extension(".d");
  auto text = util::read_file(depinfo, util::kMaxBuildOutput);
  if (!text) return std::nullopt;
  std::string out = *text;  // one rule: the archive and what it was made of
  if (!out.empty() && out.back() != '\n') out += '\n';
  // Environment: rustc's env-deps of every crate compiled for the target
  // (deps/*.d), build scripts' rerun-if-env-changed (build/*/output).
  std::set<std::string> names, by_scripts;
  const fs::path profile_dir = archive.parent_path();
  std::error_code ec;
  for (fs::directory_iterator it(profile_dir / "deps", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".d")
      if (auto d = util::read_file(it->path(), util::kMaxBuildOutput))
        for (const auto& line : util::split(*d, '\n'))
          if (util::starts_with(line, "# env-dep:")) names.insert(line.substr(10, line.find('=') - 10));
  for (fs::directory_iterator it(profile_dir / "build", ec), end; !ec && it != end; it.increment(ec))
    if (auto o = util::read_file(it->path() / "output", util::kMaxBuildOutput))
      for (std::string line : util::split(*o, '\n')) {
        if (util::starts_with(line, "cargo::")) line.erase(5, 1);  // the 2024 spelling
        if (util::starts_with(line, "cargo:rerun-if-env-changed=")) names.insert(util::trim(line.substr(27)));
        if (util::starts_with(line, "cargo:rustc-env=")) by_scripts.insert(line.substr(16, line.find('=', 16) - 16));
      }
  for (const auto& n : names)
    if (!n.empty() && !set_by_cargo(n) && !by_scripts.count(n) &&
        std::find(config_env.begin(), config_env.end(), n) == config_env.end())
      out += "# env-dep:" + n + "\n";
  return out;
}

fs::path offload_dir(const Package& p, const std::string& profile) {
  return p.target_directory / "offload" / profile;
}

fs::path images_dir(const Package& p, const std::string& profile, const std::vector<std::string>& configs) {
  return offload_dir(p, profile) / ("images-" + content_hash(util::join(configs, "\n")));
}

namespace {

// The arguments every device-side cargo command shares: --offline unless
// given, the user's shared flags, and the features: exactly the host pass's
// set (defaults included by name when they were on) once resolved, else the
// user's own.
// `cargo rustc|check --profile test|bench` builds the library as a test
// harness: a device pass gets a profile of its own that inherits the user's
// (offload-test: [profile.test]'s settings, no harness), given in --config.
void push_shared_and_features(std::vector<std::string>& argv, const Package& p, const UserArgs& user,
                              const DeviceInputs& in) {
  if (std::find(user.shared.begin(), user.shared.end(), "--offline") == user.shared.end())
    argv.push_back("--offline");
  const std::string profile = device_profile(user);
  for (size_t i = 0; i < user.shared.size(); ++i) {
    if (profile != user.profile && user.shared[i] == "--profile" && i + 1 < user.shared.size()) {
      argv.insert(argv.end(), {"--profile", profile});
      ++i;
    } else if (profile != user.profile && util::starts_with(user.shared[i], "--profile=")) {
      argv.push_back("--profile=" + profile);
    } else {
      argv.push_back(user.shared[i]);
    }
  }
  if (profile != user.profile)
    argv.insert(argv.end(), {"--config", "profile." + profile + ".inherits=\"" + user.profile + "\""});
  if (in.unify_workspace)
    argv.insert(argv.end(), {"-Zfeature-unification", "--config", "resolver.feature-unification=\"workspace\""});
  // A path dependency outside the workspace: cargo takes no --features for it
  // ("cannot specify features for packages outside of workspace") and gives it
  // what the workspace's members enable, as it does for `cargo build -p` of it
  // (a difference from the host pass is the resolve's to report).
  if (!p.member) return;
  if (!in.features) {
    argv.insert(argv.end(), user.features.begin(), user.features.end());
  } else {
    argv.push_back("--no-default-features");
    if (!in.features->empty()) argv.insert(argv.end(), {"--features", util::join(*in.features, ",")});
  }
}

}  // namespace

Invocation device_pass(const fs::path& cargo, const Toolchain& tc, const Package& p,
                       const UserArgs& user, const manifest::Target& t, const DeviceInputs& in) {
  Invocation inv;
  inv.argv = {cargo.string(), "rustc", "--lib", "-p", p.name, "--crate-type", rustc::device_crate_type(t),
              "--target", t.triple, "--target-dir", device_target_dir(p, t, in.config).string()};
  set_message_format(inv, user);
  push_shared_and_features(inv.argv, p, user, in);
  inv.argv.push_back("--");
  // Fat LTO comes from the profile (cargo then embeds bitcode in the dependencies).
  for (const auto& f : rustc::device_codegen_flags(*tc.rust, p.device_cfg, t, /*fat_lto=*/false))
    inv.argv.push_back(f);
  inv.argv.push_back("--check-cfg=cfg(" + p.device_cfg + ")");
  // The host device's archive is cargo's own output (an --emit=link=PATH would
  // leave cargo's fingerprint looking for it forever); a GPU's bitcode is extra.
  if (!rustc::needs_device_link(t))
    inv.argv.push_back("--emit=" + rustc::device_emit_kind(t) + "=" + device_output(p, t, in.config).string());
  // The MIR (the kernels' signatures) and the host device's crate object, at
  // fixed places: a path in the pass's flags is part of cargo's fingerprint.
  for (auto& f : rustc::device_side_emits(t, device_output(p, t, in.config))) inv.argv.push_back(std::move(f));
  inv.env = {{"RUSTC", tc.rust->rustc.string()}, {"CARGO_INCREMENTAL", "0"},
             {profile_lto_var(device_profile(user)), "fat"}};
  // The flags as resolved (cargo's precedence, cargo_resolve): set even when
  // empty, so that this pass reads no other source than the host pass did.
  encoded_rustflags(inv, in.rustflags);
  return inv;
}

std::vector<std::string> device_clean(const fs::path& cargo, const Package& p, const UserArgs& user,
                                      const manifest::Target& t, const std::string& config) {
  return {cargo.string(), "clean", "-p", p.name, "--target", t.triple, "--profile", device_profile(user),
          "--target-dir", device_target_dir(p, t, config).string()};
}


bool links_with_lld(const std::vector<std::string>& rustflags) {
  return std::any_of(rustflags.begin(), rustflags.end(), [](const std::string& f) {
    return f.find("-fuse-ld=lld") != std::string::npos || f.find("-fuse-ld=ld.lld") != std::string::npos ||
           (f.find("--ld-path=") != std::string::npos && f.find("lld") != std::string::npos);
  });
}

Invocation host_pass(const fs::path& cargo, const Toolchain& tc, const Package& p,
                     const UserArgs& user, const std::vector<manifest::Target>& targets,
                     const std::optional<fs::path>& embedded_object,
                     const std::optional<fs::path>& native_host_out,
                     const std::vector<std::string>& user_rustflags) {
  Invocation inv;
  inv.argv = {cargo.string(), user.command == "test" ? "test" : "build"};
  set_message_format(inv, user);
  if (std::find(user.shared.begin(), user.shared.end(), "--offline") == user.shared.end())
    inv.argv.push_back("--offline");
  // An explicit host target keeps these flags off build scripts and proc macros.
  if (!user.has_target) inv.argv.insert(inv.argv.end(), {"--target", std::string(manifest::kHostTriple)});
  if (user.implied_package) inv.argv.insert(inv.argv.end(), {"-p", *user.implied_package});
  inv.argv.insert(inv.argv.end(), user.all.begin(), user.all.end());
  if (user.command == "test" && !user.after.empty()) {
    inv.argv.push_back("--");
    inv.argv.insert(inv.argv.end(), user.after.begin(), user.after.end());
  }
  std::vector<std::string> flags = user_rustflags;
  flags.push_back("-Clto=fat");  // -Zoffload needs it in every crate that launches kernels
  if (links_with_lld(user_rustflags)) flags.push_back("-Clink-arg=-Wl,-z,nostart-stop-gc");
  flags.push_back("--check-cfg=cfg(" + p.device_cfg + ")");
  for (const auto& f : rustc::host_link_flags(tc, targets, embedded_object, native_host_out)) flags.push_back(f);
  // Each crate's MIR beside its output (artifact_mir): the launches, checked
  // against the images. Not rustdoc's (its --emit has other kinds).
  std::vector<std::string> rustc_flags = flags;
  for (auto& f : rustc::host_mir_emits(std::nullopt)) rustc_flags.push_back(std::move(f));
  // RUSTFLAGS reads best (-v, --dry-run); the encoded form only when a flag has a space.
  const bool spaces = std::any_of(rustc_flags.begin(), rustc_flags.end(), [](const std::string& f) {
    return f.find_first_of(" \t") != std::string::npos;
  });
  inv.env = {{"RUSTC", tc.rust->rustc.string()},
             {spaces ? "CARGO_ENCODED_RUSTFLAGS" : "RUSTFLAGS", util::join(rustc_flags, spaces ? "\x1f" : " ")},
             {spaces ? "RUSTFLAGS" : "CARGO_ENCODED_RUSTFLAGS", std::nullopt},
             {profile_lto_var(user.profile), "fat"}};
  // cargo test runs the doc tests with `rustdoc` from PATH (rustup's default
  // toolchain, maybe a stable one that rejects #![feature]) unless told: the
  // one beside the rustc both passes use.
  std::error_code ec;
  if (const fs::path rustdoc = tc.rust->rustc.parent_path() / "rustdoc"; fs::exists(rustdoc, ec))
    inv.env.emplace_back("RUSTDOC", rustdoc.string());
  // A doc test is linked by rustdoc, which reads RUSTDOCFLAGS, not RUSTFLAGS:
  // the same link (the images, the runtime), after the user's own.
  if (user.command == "test") {
    std::vector<std::string> doc;
    if (const char* e = config::env_or_null("CARGO_ENCODED_RUSTDOCFLAGS"); e && *e) doc = util::split(e, '\x1f');
    else if (const char* d = config::env_or_null("RUSTDOCFLAGS")) doc = split_spaces(d);
    doc.insert(doc.end(), flags.begin() + static_cast<long>(user_rustflags.size()), flags.end());
    inv.env.emplace_back("CARGO_ENCODED_RUSTDOCFLAGS", util::join(doc, "\x1f"));
  }
  return inv;
}

Result<std::vector<Unit>> parse_unit_graph(std::string_view text) {
  const json root = json::parse(text, nullptr, false);
  if (!root.is_object() || !root.contains("units") || !root["units"].is_array())
    return Error::failure("cannot read cargo's --unit-graph output (no \"units\" array)");
  std::vector<Unit> out;
  for (const auto& u : root["units"]) {
    if (!u.is_object()) continue;
    Unit unit;
    unit.pkg_id = u.value("pkg_id", "");
    const json target = u.value("target", json::object());
    for (const auto& k : target.value("kind", json::array()))
      if (k.is_string()) unit.kinds.push_back(k.get<std::string>());
    if (u.contains("platform") && u["platform"].is_string()) unit.platform = u["platform"].get<std::string>();
    unit.mode = u.value("mode", "");
    for (const auto& f : u.value("features", json::array()))
      if (f.is_string()) unit.features.push_back(f.get<std::string>());
    std::sort(unit.features.begin(), unit.features.end());
    const json profile = u.value("profile", json::object());
    unit.profile = profile.value("name", "");
    if (profile.contains("opt_level") && profile["opt_level"].is_string())
      unit.opt_level = profile["opt_level"].get<std::string>();
    unit.debug_assertions = profile.value("debug_assertions", false);
    unit.overflow_checks = profile.value("overflow_checks", false);
    for (const auto& d : u.value("dependencies", json::array()))
      if (d.is_object() && d.contains("index") && d["index"].is_number_unsigned())
        unit.dependencies.push_back(d["index"].get<size_t>());
    out.push_back(std::move(unit));
  }
  return out;
}

const Unit* library_unit(const std::vector<Unit>& units, const std::string& id, const std::string& triple) {
  // Built as a library; else (cargo test of a library alone) its test harness.
  for (const char* mode : {"build", "test"})
    for (const auto& u : units) {
      if (u.pkg_id != id || u.mode != mode || u.platform != triple) continue;
      for (const auto& k : u.kinds)
        if (k == "lib" || k == "rlib" || k == "staticlib" || k == "cdylib" || k == "dylib") return &u;
    }
  return nullptr;
}

namespace {

// cargo, or cargo-clippy run as `cargo-clippy clippy` (CARGO: the toolchain's cargo).
Invocation checker(const fs::path& cargo, const fs::path& cargo_clippy, const Toolchain& tc, const UserArgs& user) {
  Invocation inv;
  if (user.command == "clippy") inv.argv = {cargo_clippy.string(), "clippy"};
  else inv.argv = {cargo.string(), "check"};
  inv.env = {{"RUSTC", tc.rust->rustc.string()}, {"CARGO", cargo.string()}};
  return inv;
}

}  // namespace

Invocation device_check(const fs::path& cargo, const fs::path& cargo_clippy, const Toolchain& tc, const Package& p,
                        const UserArgs& user, const manifest::Target& t, const DeviceInputs& in) {
  const std::vector<std::string>& clippy_args = user.after;
  Invocation inv = checker(cargo, cargo_clippy, tc, user);
  inv.argv.insert(inv.argv.end(), {"--lib", "-p", p.name, "--target", t.triple, "--target-dir",
                                   (device_target_dir(p, t, in.config) / "check").string()});
  push_shared_and_features(inv.argv, p, user, in);
  set_message_format(inv, user);
  if (!clippy_args.empty()) {
    inv.argv.push_back("--");
    inv.argv.insert(inv.argv.end(), clippy_args.begin(), clippy_args.end());
  }
  // The device cfg reaches every crate built for the target here (cargo rustc
  // gives it to the kernel crate only): a dependency that tests it is checked
  // as its device side.
  std::vector<std::string> flags = in.rustflags;
  flags.insert(flags.end(), {"--cfg", p.device_cfg, "--check-cfg=cfg(" + p.device_cfg + ")"});
  encoded_rustflags(inv, flags);
  return inv;
}

Invocation host_check(const fs::path& cargo, const fs::path& cargo_clippy, const Toolchain& tc, const Package& p,
                      const UserArgs& user, const std::vector<std::string>& user_rustflags) {
  const std::vector<std::string>& clippy_args = user.after;
  Invocation inv = checker(cargo, cargo_clippy, tc, user);
  if (std::find(user.shared.begin(), user.shared.end(), "--offline") == user.shared.end())
    inv.argv.push_back("--offline");
  if (!user.has_target) inv.argv.insert(inv.argv.end(), {"--target", std::string(manifest::kHostTriple)});
  if (user.implied_package) inv.argv.insert(inv.argv.end(), {"-p", *user.implied_package});
  inv.argv.insert(inv.argv.end(), user.all.begin(), user.all.end());
  set_message_format(inv, user);
  if (!clippy_args.empty()) {
    inv.argv.push_back("--");
    inv.argv.insert(inv.argv.end(), clippy_args.begin(), clippy_args.end());
  }
  std::vector<std::string> flags = user_rustflags;
  flags.push_back("--check-cfg=cfg(" + p.device_cfg + ")");
  encoded_rustflags(inv, flags);
  return inv;
}

std::string content_hash(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::string display(const Invocation& inv) {
  std::string out;  // env's options (-u NAME) come before its assignments
  for (const auto& [k, v] : inv.env)
    if (!v) out += "-u " + k + " ";
  for (const auto& [k, v] : inv.env)
    if (v) out += k + "=" + util::shell_quote(*v) + " ";
  if (!out.empty()) out = "env " + out;
  return out + util::shell_join(inv.argv);
}

}  // namespace ob::toolchain::cargo
