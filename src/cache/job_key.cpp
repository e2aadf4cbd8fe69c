#include "offload_build/cache/job_key.hpp"
#include "offload_build/cache/lookups.hpp"
#include "offload_build/config/config.hpp"

#include <atomic>
#include <cstdlib>

#include "offload_build/storage/hash.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/program_identity.hpp"
#include "offload_build/toolchain/stable_names.h"
#include "offload_build/util/paths.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cache {

const std::vector<std::string>& relevant_environment(plan::JobKind kind) {
  static const std::vector<std::string> compile = {
      "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
      "OBJCPLUS_INCLUDE_PATH", "SOURCE_DATE_EPOCH", "CCC_OVERRIDE_OPTIONS", "COMPILER_PATH",
      "GCC_EXEC_PREFIX", "RUSTC_BOOTSTRAP"};
  static const std::vector<std::string> link = {"LIBRARY_PATH", "COMPILER_PATH",
                                                "GCC_EXEC_PREFIX", "CCC_OVERRIDE_OPTIONS"};
  static const std::vector<std::string> none;
  switch (kind) {
    case plan::JobKind::HostIr:
    case plan::JobKind::DeviceCompile:
    case plan::JobKind::HostCompile: return compile;
    case plan::JobKind::Link: return link;
    case plan::JobKind::Assemble:
    case plan::JobKind::ImageLink:
    case plan::JobKind::Package:
    case plan::JobKind::EmbedStub: return none;
  }
  return none;
}

namespace {

// Key fields of a Dep: the content, and the identity kernel names embed.
void hash_dep(storage::Hasher& h, const char* field, const Dep& d) {
  h.field(field, d.path).field("sha", d.sha256);
  if (d.inode) h.field("id", std::to_string(d.device) + ":" + std::to_string(d.inode));
  if (!d.name.empty()) h.field("name", d.name);
}

}  // namespace

Dep make_dep(const plan::Plan& plan, const plan::Job& job, const std::string& path, const FileFacts& facts) {
  Dep dep{path, facts.sha256, 0, 0, {}};
  const fs::path full = (plan.cwd / path).lexically_normal();
  if (fs::path(path).is_absolute())
    for (const auto& base : plan.base_dirs)
      if (util::is_under(full, base)) {
        dep.path = full.lexically_relative(plan.cwd).string();
        break;
      }
  if (!job.inode_sensitive || util::is_under(full, plan.build_dir)) return dep;
  if (job.stable_names) {
    dep.name = facts.name;
  } else {
    dep.device = static_cast<uint64_t>(facts.device);
    dep.inode = static_cast<uint64_t>(facts.inode);
  }
  return dep;
}

namespace {
std::atomic<size_t> described{0};
}  // namespace

size_t describe_job_count() { return described.load(); }

JobKey describe_job(const plan::Plan& plan, const plan::Job& job) {
  ++described;
  JobKey key;
  if (job.key_material) {  // the planner's word on what decides the outputs (Job::key_material)
    key.argv = {*job.key_material};
    return key;
  }
  key.tools.push_back(tool_identity(job.argv.front()));
  for (const auto& t : job.tools) key.tools.push_back(tool_identity(t));

  // Output paths do not decide the output bytes: replace them by placeholders.
  std::vector<std::pair<std::string, std::string>> placeholders;
  for (size_t i = 0; i < job.outputs.size(); ++i)
    placeholders.emplace_back(plan::arg_path(job.outputs[i], plan.cwd).string(),
                              "<output" + std::to_string(i) + ">");
  if (job.depfile) placeholders.emplace_back(plan::arg_path(*job.depfile, plan.cwd).string(), "<depfile>");
  for (std::string a : job.argv) {
    for (const auto& [path, ph] : placeholders) {
      if (a == path) a = ph;
      else if (util::ends_with(a, "=" + path)) a = a.substr(0, a.size() - path.size()) + ph;
    }
    key.argv.push_back(std::move(a));
  }
  key.argv.front() = "<tool0>";  // identified by content above, not by spelling

  for (const auto& name : relevant_environment(job.kind)) {
    const char* v = config::env_or_null(name.c_str());
    key.env.push_back(v ? name + "=" + v : name + " unset");
  }
  // The job's own environment: the stable-names library's salt decides the
  // kernel names; the library's path, the base directories and the anchor
  // are places (the names they give are keyed with each file, make_dep), and
  // so is where the lookups are recorded.
  for (const auto& [name, value] : job.env)
    if (!toolchain::is_place_variable(name))
      key.env.push_back(value ? name + "=" + *value : name + " unset");
  if (job.stable_names) key.env.push_back("kernel names: " OB_STABLE_VERSION);
  // -march=native and friends: what they mean here, not their spelling.
  if (toolchain::frontend::machine_dependent_option(job.argv))
    key.env.push_back("native: " + toolchain::native_cpu());
  for (const auto& fact : job.key_facts) key.env.push_back("fact: " + fact);
  return key;
}

void hash_inputs(JobKey& key, const plan::Plan& plan, const plan::Job& job, FileFactsCache& files) {
  for (const auto& in : job.inputs) {
    const FileFacts& f = files.get(in, plan.cwd);
    if (!f.exists) key.inputs_missing = true;
    key.inputs.push_back(make_dep(plan, job, plan::arg_path(in, plan.cwd).string(), f));
  }
  // Where the job may read a file nothing orders: its content, or its
  // absence. A module file names no kernel: keyed without its place's name.
  for (const auto& in : job.unordered_reads) {
    const FileFacts& f = files.get(in, plan.cwd);
    Dep d = make_dep(plan, job, plan::arg_path(in, plan.cwd).string(), f);
    key.inputs.push_back(Dep{d.path, f.exists ? d.sha256 : std::string(kAbsent), 0, 0, {}});
  }

  storage::Hasher h;
  h.field("format", kKeyFormat).field("kind", plan::job_kind_name(job.kind));
  if (job.target) h.field("target", job.target->triple + ":" + job.target->arch);
  for (const auto& t : key.tools) h.field("tool", t);
  for (const auto& a : key.argv) h.field("arg", a);
  for (const auto& e : key.env) h.field("env", e);
  for (const auto& d : key.inputs) hash_dep(h, "input", d);
  key.direct = h.hex();
}

JobKey compute_job_key(const plan::Plan& plan, const plan::Job& job, FileFactsCache& files) {
  JobKey key = describe_job(plan, job);
  hash_inputs(key, plan, job, files);
  return key;
}

exec::ActionKey action_key(const plan::Plan& plan, const plan::Job& job, const JobKey& key,
                           const std::vector<fs::path>& reads, FileFactsCache& files, bool allow_time_macros) {
  exec::ActionKey out;
  storage::Hasher h;
  h.field("format", kKeyFormat).field("kind", plan::job_kind_name(job.kind));
  for (const auto& t : key.tools) h.field("tool", t);
  for (const auto& e : key.env) h.field("env", e);
  // A system file is the worker's own: keyed by its identity here. Every
  // other file travels by digest, at a path relative to the input root.
  for (const auto& f : reads) {
    const FileFacts& facts = files.get(f, plan.cwd);
    if (files.is_system(f)) h.field("system file", f.string()).field("sha", facts.sha256);
    out.do_not_cache |= facts.time_macros && !allow_time_macros;
  }
  out.stamp = h.hex();
  for (const auto& name : relevant_environment(job.kind))
    if (const char* v = config::env_or_null(name.c_str())) out.env.emplace_back(name, v);
  return out;
}

std::string result_key(const JobKey& key, const std::vector<Dep>& deps) {
  storage::Hasher h;
  h.field("direct", key.direct);
  for (const auto& d : deps) hash_dep(h, "dep", d);
  return h.hex();
}

std::pair<std::string, std::string> first_entry(const plan::Job& job, const JobKey& key) {
  if (job.depfile) return {kManifestEntryKind, key.direct};
  return {kResultEntryKind, result_key(key, {})};
}

std::vector<fs::path> project_dirs(const plan::Plan& plan) {
  std::vector<fs::path> dirs{plan.cwd, plan.build_dir};
  dirs.insert(dirs.end(), plan.base_dirs.begin(), plan.base_dirs.end());
  return dirs;
}

PlanKeys::PlanKeys(const plan::Plan& plan, std::vector<fs::path> system_dirs, bool allow_time_macros)
    : plan_(plan),
      files_(project_dirs(plan), std::move(system_dirs), toolchain::NameRoots{plan.base_dirs, plan.name_anchor}),
      allow_time_macros_(allow_time_macros) {}

const JobKey& JobKeyTable::key_of(const plan::Job& job) {
  auto it = keys_.find(job.id);
  if (it == keys_.end()) it = keys_.emplace(job.id, compute_job_key(plan_, job, files_)).first;
  return it->second;
}

std::optional<std::string> PlanKeys::direct(const plan::Job& job) {
  std::lock_guard lock(mu_);
  const JobKey& key = key_of(job);
  if (key.inputs_missing) return std::nullopt;
  return key.direct;
}

std::optional<std::pair<std::string, std::string>> PlanKeys::first_entry(const plan::Job& job) {
  std::lock_guard lock(mu_);
  const JobKey& key = key_of(job);
  if (key.inputs_missing) return std::nullopt;
  return cache::first_entry(job, key);
}

exec::ActionKey PlanKeys::action_key(const plan::Job& job, const std::vector<fs::path>& reads) {
  std::lock_guard lock(mu_);
  return cache::action_key(plan_, job, key_of(job), reads, files_, allow_time_macros_);
}

bool dep_matches(const Dep& dep, const FileFacts& now) {
  if (!now.exists || now.sha256 != dep.sha256) return false;
  if (!dep.name.empty() && now.name != dep.name) return false;
  return dep.inode == 0 || (static_cast<uint64_t>(now.device) == dep.device &&
                            static_cast<uint64_t>(now.inode) == dep.inode);
}

}  // namespace ob::cache
