// The device pass derived from what cargo resolved for the host pass, so that
// the two build the same code (docs/RUST.md, "Both passes build the same
// code"): each kernel crate's features from the host pass's unit graph
// (`cargo build --unit-graph`), its dependencies' as `dep/feature` or, for a
// crate further down, by cargo's unification across the workspace, the rustflags of every target in cargo's own
// precedence (environment, `cargo config get`), and a check of the device
// pass's unit graph against the host's that fails naming both sides.
#include "offload_build/plan/cargo_plan.hpp"

#include <algorithm>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::plan {

namespace cargo = toolchain::cargo;

namespace {

// A question to cargo, answered from the session's memo when it can be.
Result<process::Captured> answer(const CargoSession& s, const process::Command& cmd) {
  return s.answers ? s.answers->ask(cmd) : process::capture(cmd);
}

// A cargo command run to completion in the project; its stdout.
Result<std::string> ask_cargo(const CargoSession& s, const cargo::Invocation& inv, const std::string& what) {
  auto out = answer(s, process::Command{inv.argv, s.dir, inv.env});
  if (!out) return out.error();
  if (out->exit_code != 0)
    return Error::usage(fmt::format("{} failed in {}:\n{}\n  command: {}", what, s.dir.string(), util::trim(out->err),
                                    util::shell_join(inv.argv)));
  return out->out;
}

// The user's --config values (cargo's own merge of them into its config files).
std::vector<std::string> config_args(const cargo::UserArgs& u) {
  std::vector<std::string> out;
  for (size_t i = 0; i < u.shared.size(); ++i) {
    if (u.shared[i] == "--config" && i + 1 < u.shared.size()) out.insert(out.end(), {"--config", u.shared[++i]});
    else if (util::starts_with(u.shared[i], "--config=")) out.push_back(u.shared[i]);
  }
  return out;
}

// The triple the host pass builds for: the user's --target, else the host's.
std::string host_triple(const cargo::UserArgs& u) {
  for (size_t i = 0; i < u.all.size(); ++i) {
    if (u.all[i] == "--target" && i + 1 < u.all.size()) return u.all[i + 1];
    if (util::starts_with(u.all[i], "--target=")) return u.all[i].substr(9);
  }
  return std::string(manifest::kHostTriple);
}

std::string feature_list(const std::vector<std::string>& f) {
  return f.empty() ? "no features" : "features [" + util::join(f, ", ") + "]";
}

std::string package_name(const std::string& id) {
  // path+file:///w/kernels#0.1.0, registry+https://...#libm@0.2.0, or the old "name 0.1.0 (...)" form
  const size_t hash = id.rfind('#');
  if (hash == std::string::npos) return id.substr(0, id.find(' '));
  std::string tail = id.substr(hash + 1);
  if (const size_t at = tail.find('@'); at != std::string::npos) return tail.substr(0, at);
  std::string head = id.substr(0, hash);
  return head.substr(head.find_last_of('/') + 1);
}

// The device pass's graph against the host pass's: every package both build,
// with the same features; the kernel crate with the same profile settings.
Result<void> compare(const CargoSession& s, const KernelCrate& c, const manifest::Target& t, const std::string& host,
                     const std::vector<cargo::Unit>& host_units, const std::vector<cargo::Unit>& device_units,
                     const std::string& device_command) {
  for (const auto& d : device_units) {
    if (d.mode != "build" || d.platform != t.triple) continue;
    const cargo::Unit* h = cargo::library_unit(host_units, d.pkg_id, host);
    if (!h) continue;
    const std::string name = package_name(d.pkg_id);
    const bool own = d.pkg_id == c.pkg.id;
    if (h->features != d.features)
      return Error::usage(fmt::format(
          "the device pass and the host pass would build {} with different features, so the kernels would not "
          "be the code the host launches:\n  host pass (cargo build -p {}): {}\n  device pass of {} for {}: {}\n"
          "cargo resolves the device pass of {} on its own, so {}\n  device pass: {}",
          name, s.pkg.name, feature_list(h->features), c.pkg.name, t.short_name(), feature_list(d.features),
          c.pkg.name,
          own && !c.pkg.member
              ? fmt::format("{} is outside the workspace, for which cargo takes no --features: enable {} in the "
                            "dependency on it (features = [...]) or make it a member of the workspace",
                            c.pkg.name, feature_list(h->features))
          : own ? "offload-build gives it the host pass's features; this one could not be matched"
              : fmt::format("only {}'s own Cargo.toml decides {}'s features there: enable {} in {}'s dependency on {} "
                            "(features = [...]; a direct one, added if need be: cargo unifies it) or in {}'s default "
                            "features",
                            c.pkg.name, name, feature_list(h->features), c.pkg.name, name, name),
          device_command));
    if (own && (h->opt_level != d.opt_level || h->debug_assertions != d.debug_assertions ||
                h->overflow_checks != d.overflow_checks))
      return Error::usage(fmt::format(
          "the device pass and the host pass would build {} with different profile settings:\n"
          "  host pass (profile {}): opt-level {}, debug-assertions {}, overflow-checks {}\n"
          "  device pass for {} (profile {}): opt-level {}, debug-assertions {}, overflow-checks {}\n"
          "  device pass: {}",
          name, h->profile, h->opt_level, h->debug_assertions, h->overflow_checks, t.short_name(), d.profile,
          d.opt_level, d.debug_assertions, d.overflow_checks, device_command));
  }
  return {};
}

// cargo builds a package once per target with the union of the features the
// crates of the build enable in it; the device pass of one kernel crate sees
// only its own: each feature the host pass gives a direct dependency of the
// kernel crate beyond the device pass's, as `dep/feature` (cargo's spelling on
// the command line, for a workspace member's dependency). Empty when none is
// missing, or when the device pass has one the host pass has not (compare
// reports that).
std::vector<std::string> unified_features(const KernelCrate& c, const manifest::Target& t, const std::string& host,
                                          const std::vector<cargo::Unit>& host_units,
                                          const std::vector<cargo::Unit>& device_units) {
  std::vector<std::string> out;
  if (!c.pkg.member || !c.features) return out;
  for (const auto& own : device_units) {
    if (own.pkg_id != c.pkg.id || own.mode != "build" || own.platform != t.triple) continue;
    for (size_t i : own.dependencies) {
      if (i >= device_units.size()) continue;
      const cargo::Unit& d = device_units[i];
      const cargo::Unit* h = cargo::library_unit(host_units, d.pkg_id, host);
      if (!h || !std::includes(h->features.begin(), h->features.end(), d.features.begin(), d.features.end())) continue;
      for (const auto& f : h->features)
        if (!std::binary_search(d.features.begin(), d.features.end(), f)) out.push_back(package_name(d.pkg_id) + "/" + f);
    }
  }
  return out;
}

// cargo's [env] table: each NAME with its setting (a string, or a table with
// value, force, relative) as the config reports it.
std::vector<std::pair<std::string, std::string>> config_env(const std::string& config_json) {
  std::vector<std::pair<std::string, std::string>> out;
  const nlohmann::json root = nlohmann::json::parse(config_json, nullptr, false);
  if (!root.is_object() || !root.contains("env") || !root["env"].is_object()) return out;
  for (const auto& [name, setting] : root["env"].items()) out.emplace_back(name, setting.dump());
  return out;
}

cargo::Invocation with_unit_graph(cargo::Invocation inv) {
  auto at = std::find(inv.argv.begin(), inv.argv.end(), "--");
  inv.argv.insert(at, {"--unit-graph", "-Zunstable-options"});
  return inv;
}

}  // namespace

Result<void> resolve_passes(CargoSession& s) {
  // Rustflags: cargo's config as cargo merges it, read once for every triple.
  std::vector<std::string> get{s.cargo_bin.string()};
  for (const auto& a : config_args(s.user)) get.push_back(a);
  for (const auto& a : cargo::lock_flags(s.user)) get.push_back(a);
  get.insert(get.end(), {"-Zunstable-options", "config", "get", "--format", "json"});
  const cargo::Env env{{"RUSTC", s.tc.rust->rustc.string()}};
  auto config = answer(s, process::Command{get, s.dir, env});
  if (!config) return config.error();
  // An empty config is "config value `` is not set" on some versions: nothing set.
  const std::string config_json = config->exit_code == 0 ? config->out : "{}";
  s.config_env = config_env(config_json);
  const std::string host = host_triple(s.user);
  auto host_flags = cargo::effective_rustflags(config_json, host, cargo::RustflagsEnv::from_environment(host));
  if (!host_flags) return host_flags.error();
  s.host_rustflags = *host_flags;
  for (const auto& t : s.targets) {
    auto flags = cargo::effective_rustflags(config_json, t.triple, cargo::RustflagsEnv::from_environment(t.triple));
    if (!flags) return flags.error();
    s.device_rustflags[t.triple] = *flags;
  }

  // Features: what the host pass resolves, from its unit graph (each group's:
  // every group of programs has its own host pass).
  std::vector<std::vector<cargo::Unit>> graphs;
  std::vector<size_t> graph_of(s.crates.size(), 0);  // the host graph each crate's device passes are checked against
  std::vector<bool> known(s.crates.size(), false);  // its features taken from a host graph
  for (const HostGroup& g : s.groups) {
    const cargo::Invocation host_pass = cargo::host_pass(s.cargo_bin, s.tc, s.pkg, g.user, s.targets, std::nullopt,
                                                         std::nullopt, s.host_rustflags.flags);
    auto host_graph = ask_cargo(s, with_unit_graph(host_pass), "`cargo build --unit-graph` (the host pass's plan)");
    if (!host_graph) return host_graph.error();
    auto host_units = cargo::parse_unit_graph(*host_graph);
    if (!host_units) return host_units.error();
    graphs.push_back(std::move(*host_units));
    for (size_t ci : g.crates) {
      KernelCrate& c = s.crates[ci];
      const cargo::Unit* u = cargo::library_unit(graphs.back(), c.pkg.id, host);
      if (!u) continue;
      if (known[ci] && *c.features != u->features)
        return Error::usage(fmt::format(
            "the programs of {} and {} link {}'s kernels but their host passes build it with different features "
            "({} and {}): one device image cannot be both; build them apart (-p)",
            s.groups[graph_of[ci]].packages.front().name, g.packages.front().name, c.pkg.name,
            feature_list(*c.features), feature_list(u->features)));
      if (known[ci]) continue;
      known[ci] = true;
      graph_of[ci] = graphs.size() - 1;
      c.features = u->features;
    }
  }

  // The device passes' graphs, checked against it; each names its pass's configuration.
  for (size_t ci = 0; ci < s.crates.size(); ++ci) {
    KernelCrate& c = s.crates[ci];
    for (const auto& t : s.targets) {
      // A difference the command line cannot name (a crate below a direct
      // dependency): once more with cargo's unification across the
      // workspace's members, kept only if it then matches the host pass.
      std::optional<Error> unnamed;
      for (int round = 0;; ++round) {  // again with the features cargo unifies (a few rounds at most)
        const bool unify = unnamed.has_value();
        const auto inv = cargo::device_pass(s.cargo_bin, s.tc, c.pkg, s.user, t,
                                            {c.features, s.device_rustflags[t.triple].flags, "", unify});
        auto graph = ask_cargo(s, with_unit_graph(inv), "`cargo rustc --unit-graph` (the device pass's plan)");
        if (!graph) return unify ? *unnamed : graph.error();  // a cargo without -Zfeature-unification
        auto units = cargo::parse_unit_graph(*graph);
        if (!units) return unify ? *unnamed : units.error();
        if (auto more = unified_features(c, t, host, graphs[graph_of[ci]], *units); !more.empty() && round < 6) {
          c.features->insert(c.features->end(), more.begin(), more.end());
          continue;
        }
        if (auto same = compare(s, c, t, host, graphs[graph_of[ci]], *units, util::shell_join(inv.argv)); !same) {
          if (unify || !c.pkg.member || !c.features || round >= 6) return unify ? *unnamed : same.error();
          unnamed = same.error();
          continue;
        }
        if (unify) c.unify_workspace.insert(t.triple);
        c.configs[t.triple] = cargo::device_config(*graph, c.pkg, s.device_rustflags[t.triple].flags);
        break;
      }
    }
  }
  return {};
}

}  // namespace ob::plan
