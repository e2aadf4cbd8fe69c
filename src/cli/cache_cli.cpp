// `offload-build cache stats|clear|prune`: resolve the directory and size the
// same way a build does, then hand over to cache_command.cpp.
#include <iostream>
#include <sstream>

#include "cache_cli.hpp"
#include "offload_build/cli/cache_command.hpp"
#include "offload_build/storage/remote/layered.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"  // load_manifest, manifest_options

namespace ob::cli {

void add_cache_commands(CLI::App& app, CacheCli& c) {
  c.command = app.add_subcommand("cache", "Show or manage the kernel cache (alone: its stats)");
  c.command->require_subcommand(0, 1);
  c.command->fallthrough();
  c.stats = c.command->add_subcommand("stats", "Hits, misses by reason, entries, size, evictions");
  c.stats->add_flag("--json", c.json, "Print one JSON object");
  c.stats->add_flag("--zero", c.zero, "Then zero the counters (entries stay), as ccache -z");
  c.clear = c.command->add_subcommand("clear", "Remove every entry and zero the counters");
  c.prune = c.command->add_subcommand("prune", "Evict least-recently-used entries");
  c.prune->add_option("--max-size", c.max_size, "Size to prune to, e.g. 500M, 5G (default: the "
                                                "max_size setting, `offload-build config`)")
      ->option_text("SIZE");
  c.verify = c.command->add_subcommand("verify", "Decode every entry and report corrupt ones");
  for (auto* sub : {c.stats, c.clear, c.prune, c.verify}) sub->fallthrough();
}

namespace {

// The manifest in -C DIR, when there is one: it may name the cache directory,
// its size and remote storage.
Result<std::optional<manifest::Manifest>> manifest_in(const Request& o) {
  const fs::path file = manifest_path(o);
  if (!fs::exists(file)) return std::optional<manifest::Manifest>();
  auto m = manifest::load_manifest(file, toolchain::frontend::manifest_options());
  if (!m) return m.error();
  return std::optional<manifest::Manifest>(std::move(*m));
}

}  // namespace

void doctor_remotes(const Request& o, std::ostream& out) {
  auto m = manifest_in(o);
  std::vector<std::string> from_manifest;
  if (m && *m) from_manifest = (*m)->remote_storage;
  auto remotes = storage::configured_remotes(o.config, from_manifest);
  if (!remotes) {
    out << "\nremote storage\n  error: " << remotes.error().message << '\n';
    return;
  }
  if (remotes->empty()) return;
  out << "\nremote storage\n";
  const bool signing = !storage::Trust::from_config(o.config).signing_key.empty();
  for (const auto& r : *remotes) {
    out << "  " << r.display << ": " << storage::probe_remote(r) << '\n';
    // Who can change what builds get from it.
    if (signing)
      out << "    entries signed: values not signed with OFFLOAD_BUILD_SIGNING_KEY are skipped\n";
    else
      out << "    entries unsigned: anyone who can write to this server can change what builds "
             "get (set OFFLOAD_BUILD_SIGNING_KEY; docs/CACHE.md#what-is-checked-and-the-trust-model)"
          << (r.allow_unsigned ? "; accepted with |allow-unsigned" : "") << '\n';
  }
  out << std::flush;
}

Result<int> run_cache_command(const Request& o, const CacheCli& c) {
  std::optional<fs::path> manifest_dir;
  std::optional<uint64_t> manifest_size;
  auto m = manifest_in(o);
  if (!m) return m.error();
  if (*m) {
    manifest_dir = (*m)->cache_dir;
    manifest_size = (*m)->cache_max_size;
  }
  const fs::path dir = cache_dir_for(o.config, manifest_dir);
  const storage::Trust trust = storage::Trust::from_config(o.config);
  if (*c.stats || c.command->get_subcommands().empty()) {  // `cache` alone: its stats
    const int code = cache_stats(dir, c.json, std::cout, max_size_for(o.config, manifest_size), trust);
    if (code != exit_code::ok || !c.zero) return code;
    std::ostringstream said;  // under --json, only the JSON object on stdout
    const int zeroed = cache_zero(dir, said, trust);
    (zeroed == exit_code::ok && c.json ? std::cerr : std::cout) << said.str();
    return zeroed;
  }
  if (*c.clear) return cache_clear(dir, std::cout, trust);
  if (*c.verify) return cache_verify(dir, std::cout, trust);
  std::optional<uint64_t> limit = max_size_for(o.config, manifest_size);
  if (c.max_size) {
    auto parsed = util::parse_size(*c.max_size);
    if (!parsed) return Error::usage("--max-size " + *c.max_size + ": " + parsed.error().message);
    limit = *parsed;
  }
  return cache_prune(dir, limit, std::cout, trust);
}

}  // namespace ob::cli
