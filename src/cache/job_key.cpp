#include "offload_build/cache/job_key.hpp"

#include <cstdlib>

#include "offload_build/cache/hash.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cache {

const std::vector<std::string>& relevant_environment(JobKind kind) {
  static const std::vector<std::string> compile = {
      "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
      "OBJCPLUS_INCLUDE_PATH", "SOURCE_DATE_EPOCH", "CCC_OVERRIDE_OPTIONS", "COMPILER_PATH",
      "GCC_EXEC_PREFIX", "RUSTC_BOOTSTRAP"};
  static const std::vector<std::string> link = {"LIBRARY_PATH", "COMPILER_PATH",
                                                "GCC_EXEC_PREFIX", "CCC_OVERRIDE_OPTIONS"};
  static const std::vector<std::string> none;
  switch (kind) {
    case JobKind::HostIr:
    case JobKind::DeviceCompile:
    case JobKind::HostCompile: return compile;
    case JobKind::Link: return link;
    case JobKind::Assemble:
    case JobKind::Package: return none;
  }
  return none;
}

Dep make_dep(const std::string& path, const FileFacts& facts) {
  return Dep{path, facts.sha256, static_cast<uint64_t>(facts.device),
             static_cast<uint64_t>(facts.inode)};
}

Dep make_dep(const Plan& plan, const std::string& path, const FileFacts& facts) {
  Dep dep = make_dep(path, facts);
  const fs::path full = (plan.cwd / path).lexically_normal();
  const fs::path rel = full.lexically_relative(plan.build_dir);
  if (!rel.empty() && *rel.begin() != "..") dep.device = dep.inode = 0;
  return dep;
}

JobKey describe_job(const Plan& plan, const Job& job) {
  JobKey key;
  key.tools.push_back(tool_identity(job.argv.front()));
  for (const auto& t : job.tools) key.tools.push_back(tool_identity(t));

  // Output paths do not decide the output bytes: replace them by placeholders.
  std::vector<std::pair<std::string, std::string>> placeholders;
  for (size_t i = 0; i < job.outputs.size(); ++i)
    placeholders.emplace_back(arg_path(job.outputs[i], plan.cwd).string(),
                              "<output" + std::to_string(i) + ">");
  if (job.depfile) placeholders.emplace_back(arg_path(*job.depfile, plan.cwd).string(), "<depfile>");
  for (std::string a : job.argv) {
    for (const auto& [path, ph] : placeholders) {
      if (a == path) a = ph;
      else if (util::ends_with(a, "=" + path)) a = a.substr(0, a.size() - path.size()) + ph;
    }
    key.argv.push_back(std::move(a));
  }
  key.argv.front() = "<tool0>";  // identified by content above, not by spelling

  for (const auto& name : relevant_environment(job.kind)) {
    const char* v = std::getenv(name.c_str());
    key.env.push_back(v ? name + "=" + v : name + " unset");
  }
  return key;
}

void hash_inputs(JobKey& key, const Plan& plan, const Job& job, FileFactsCache& files) {
  for (const auto& in : job.inputs) {
    const FileFacts& f = files.get(in, plan.cwd);
    if (!f.exists) key.inputs_missing = true;
    key.inputs.push_back(make_dep(plan, arg_path(in, plan.cwd).string(), f));
  }

  Hasher h;
  h.field("format", kKeyFormat).field("kind", job_kind_name(job.kind));
  if (job.target) h.field("target", job.target->triple + ":" + job.target->arch);
  for (const auto& t : key.tools) h.field("tool", t);
  for (const auto& a : key.argv) h.field("arg", a);
  for (const auto& e : key.env) h.field("env", e);
  for (const auto& d : key.inputs) {
    h.field("input", d.path).field("sha", d.sha256);
    if (job.inode_sensitive && d.inode)
      h.field("id", std::to_string(d.device) + ":" + std::to_string(d.inode));
  }
  key.direct = h.hex();
}

JobKey compute_job_key(const Plan& plan, const Job& job, FileFactsCache& files) {
  JobKey key = describe_job(plan, job);
  hash_inputs(key, plan, job, files);
  return key;
}

std::string result_key(const JobKey& key, const std::vector<Dep>& deps, bool inode_sensitive) {
  Hasher h;
  h.field("direct", key.direct);
  for (const auto& d : deps) {
    h.field("dep", d.path).field("sha", d.sha256);
    if (inode_sensitive && d.inode)
      h.field("id", std::to_string(d.device) + ":" + std::to_string(d.inode));
  }
  return h.hex();
}

bool dep_matches(const Dep& dep, const FileFacts& now, bool inode_sensitive) {
  if (!now.exists || now.sha256 != dep.sha256) return false;
  return !inode_sensitive || dep.inode == 0 ||
         (static_cast<uint64_t>(now.device) == dep.device &&
                              static_cast<uint64_t>(now.inode) == dep.inode);
}

}  // namespace ob::cache
