// The manifest build's parts (manifest_parts.hpp).
#include "manifest_parts.hpp"

#include <iostream>
#include <map>

#include <fmt/core.h>

#include "offload_build/storage/hash.hpp"
#include "offload_build/toolchain/device_runtime_check.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"
#include "rust_launch_check.hpp"

namespace ob::run {

fs::path manifest_path(const Request& o) {
  fs::path dir = o.directory;
  if (!o.manifest) return dir / "offload.json";
  return o.manifest->is_absolute() ? *o.manifest : dir / *o.manifest;
}

Error no_manifest(const fs::path& file) {
  return Error::usage(fmt::format(
      "no manifest at {}; `offload-build init DIR` creates a project that builds as is, or write "
      "an offload.json there (docs/MANIFEST.md), or pass -C DIR or --manifest FILE",
      file.string()));
}

// C/C++ compiles name kernels from each file's place relative to the
// project directory (when it lies under the project or the base directory)
// and the project's namespace, its name (docs/CACHE.md).
toolchain::NameRoots kernel_name_roots(const manifest::Manifest& m, const fs::path& base) {
  std::error_code ec;
  toolchain::NameRoots roots;
  roots.anchor = fs::canonical(m.project_dir, ec);
  if (ec) roots.anchor = m.project_dir;
  roots.bases = {roots.anchor};
  if (!base.empty() && base != roots.anchor) roots.bases.push_back(base);
  return roots;
}

// What names the build's working set in the engine (exec/remote/working_set.hpp):
// the manifest, its targets, and each source's place in the project and
// content; the same in every checkout of the same tree, known before the
// plan (the set is fetched while the build plans).
std::string working_set_identity(const manifest::Manifest& m) {
  storage::Hasher h;
  h.field("manifest", util::read_file(m.file).value_or(""));
  for (const auto& t : m.targets) h.field("target", t.short_name());
  for (const auto& source : m.sources) {
    h.field("source", source.path.lexically_relative(m.project_dir).generic_string());
    h.field("content", util::read_file(source.path).value_or(""));
  }
  return h.hex();
}

// What a job wrote, checked before it is committed: a Rust program's
// launches against the kernels its device passes compiled; a GPU object
// built without a device runtime for calls into it.
Result<void> check_outputs(const manifest::Manifest& m, const toolchain::Toolchain& tc, const plan::Plan& plan,
                           const plan::Job& job, const std::vector<fs::path>& outs) {
  if (m.is_rust() && job.kind == plan::JobKind::Link && outs.size() > 1)
    return check_rust_launches(plan, tc, {outs[1]}, {outs[0]}, m.device_cfg);
  if (!job.forbid_device_runtime_calls || !job.target) return {};
  return toolchain::check_device_object(*job.target, plan::arg_path(job.source, plan.cwd), outs.front());
}

// Why an option list leaves compiles uncached, said once a build (--explain
// says it for each job; cache stats counts them under "uncacheable").
void say_uncached(const plan::Plan& plan, const config::Config& c) {
  if (c.flag("quiet") || c.flag("no_cache")) return;
  std::map<std::string, size_t> why;
  for (const auto& job : plan.jobs)
    if (!job.cacheable && util::starts_with(job.uncacheable_reason, "offload.json")) ++why[job.uncacheable_reason];
  for (const auto& [reason, n] : why)
    std::cerr << fmt::format("offload-build: note: {} compile job{} not cached: {}\n", n, n == 1 ? "" : "s", reason);
}

}  // namespace ob::run
