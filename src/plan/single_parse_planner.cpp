#include "single_parse_planner.hpp"

#include <fmt/core.h>

#include <map>

#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"

namespace ob::plan::single_parse_plan {

using common_jobs::DeviceStep;
using toolchain::single_parse::UnitPaths;

namespace {

UnitPaths probed_paths(const manifest::SourceFile& src, const DeviceStep& step, const fs::path& cwd) {
  return {arg_path(src.path, cwd).string(), arg_path(step.out, cwd).string(),
          arg_path(step.dep, cwd).string(), {}, {}};
}

// What decides a device pass's listing besides the TU's paths.
std::string template_key(const manifest::SourceFile& src, const DeviceStep& step, const fs::path& cwd) {
  const UnitPaths p = probed_paths(src, step, cwd);
  std::string key = src.path.extension().string();
  for (const auto& arg : step.argv)
    key += '\0' + (arg == p.source ? "<src>" : arg == p.output ? "<out>" : arg == p.depfile ? "<dep>" : arg);
  return key;
}

std::vector<std::optional<Passes>> none(size_t n, const PlanOptions& o, const std::string& why) {
  if (o.note && n > 0) o.note("two-parse C/C++ pipeline for every translation unit: " + why);
  return std::vector<std::optional<Passes>>(n);
}

}  // namespace

std::vector<std::optional<Passes>> split(const manifest::Manifest& m, const Compiles& compiles,
                                         const std::vector<std::vector<DeviceStep>>& steps,
                                         const fs::path& cwd, const PlanOptions& o) {
  const size_t n = m.sources.size();
  if (!o.probe) return none(n, o, "no driver probe");
  if (o.two_parse) return none(n, o, "--two-parse");
  // The manifest's options are every source's; a frontend may keep its own
  // sources in the two-parse form (flang), which keeps them all.
  for (const auto& compile : compiles)
    if (auto why = compile->two_parse_reason()) return none(n, o, *why);

  // One probe per distinct template, on the first TU that has it: probe k
  // lists commands[k] for the TU paths probed[k]; uses[i] are TU i's probes.
  std::map<std::string, size_t> by_template;
  std::vector<toolchain::single_parse::Argv> commands;
  std::vector<UnitPaths> probed;
  std::vector<const toolchain::frontend::Frontend*> frontends;  // each probe's
  std::vector<std::vector<size_t>> uses(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& step : steps[i]) {
      auto [it, fresh] = by_template.try_emplace(template_key(m.sources[i], step, cwd), commands.size());
      if (fresh) {
        commands.push_back(step.argv);
        probed.push_back(probed_paths(m.sources[i], step, cwd));
        frontends.push_back(&toolchain::frontend::for_language(m.sources[i].language));
      }
      uses[i].push_back(it->second);
    }
  }
  std::vector<std::vector<std::string>> names;
  for (const auto& p : probed) names.push_back({p.source, p.output, p.depfile});
  auto listings = toolchain::list_all(*o.probe, commands, cwd, o.parallel_probes, o.probing, names);
  std::vector<Result<toolchain::single_parse::DevicePass>> results;
  for (size_t k = 0; k < commands.size(); ++k)
    results.push_back(listings[k] ? frontends[k]->split_device_pass(*listings[k], probed[k], true)
                                  : Result<toolchain::single_parse::DevicePass>(listings[k].error()));

  std::vector<std::optional<Passes>> out(n);
  size_t single = 0;
  for (size_t i = 0; i < n; ++i) {
    Passes passes;
    std::string why;
    for (size_t k : uses[i]) {
      const auto& pass = results[k];
      if (!pass) {
        why = pass.error().message;
        break;
      }
      passes.push_back(*pass);
    }
    if (why.empty()) {
      out[i] = std::move(passes);
      ++single;
    } else if (o.note) {
      o.note(fmt::format("two-parse pipeline for {}: {}", arg_path(m.sources[i].path, cwd).string(), why));
    }
  }
  if (o.note)
    o.note(fmt::format("single-parse C/C++ pipeline for {} of {} translation units ({} driver "
                       "probe{})",
                       single, n, commands.size(), commands.size() == 1 ? "" : "s"));
  return out;
}

}  // namespace ob::plan::single_parse_plan
