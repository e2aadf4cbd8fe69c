// Dependency manifests kept in the engine (docs/DISTRIBUTED.md, "A fresh
// checkout without a scan"): per job, what its last dependency scan found
// (every file read, with its digest) and the lookups that found nothing, so
// that another checkout, or the next machine, validates them by hashing
// files it already has and builds the job's action with no scan. A listed
// file changed or missing, or a path once looked for and now present (a
// header that would shadow one read), and the job is scanned as before.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "offload_build/exec/remote/action.hpp"
#include "offload_build/util/paths.hpp"

namespace ob::exec {

namespace {

constexpr const char* kFormat = "offload-build dependency manifest 1";

}  // namespace

// A path as the manifest names it: relative to the working directory when
// under the plan's root (so every checkout of the project names it alike),
// else absolute (the worker's toolchain, files outside the project).
std::string ActionBuilder::manifest_path(const fs::path& p, const fs::path& cwd) const {
  return util::is_under(p, root_) ? p.lexically_relative(cwd).string() : p.string();
}

std::optional<std::string> ActionBuilder::manifest_text(const Built& built, const std::vector<std::string>& absent) {
  const fs::path& cwd = built.cwd;
  nlohmann::json reads = nlohmann::json::array(), lost = nlohmann::json::array();
  for (const auto& f : built.reads) {
    const auto d = digest_of(f);
    if (!d) return std::nullopt;  // gone since the scan: nothing to vouch for
    reads.push_back({manifest_path(f, cwd), d->hash, d->size});
  }
  for (const auto& a : absent) lost.push_back(manifest_path(a, cwd));
  std::string text = nlohmann::json{{"format", kFormat}, {"reads", reads}, {"absent", lost}}.dump();
  if (text.size() > reapi::kMaxManifestBytes) return std::nullopt;
  return text;
}

std::optional<ActionBuilder::Manifest> ActionBuilder::manifest_match(std::string_view text,
                                                                     const process::Command& cmd, std::string& why) {
  const fs::path cwd = cwd_of(cmd);
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != kFormat || !j["reads"].is_array() ||
      !j["absent"].is_array()) {
    why = "a dependency manifest of another format";
    return std::nullopt;
  }
  auto place = [&](const nlohmann::json& name) -> std::optional<fs::path> {
    if (!name.is_string() || name.get_ref<const std::string&>().empty()) return std::nullopt;
    const fs::path p(name.get<std::string>());
    return (p.is_absolute() ? p : cwd / p).lexically_normal();
  };
  Manifest m;
  for (const auto& r : j["reads"]) {
    const auto p = r.is_array() && r.size() == 3 ? place(r[0]) : std::nullopt;
    if (!p || !r[1].is_string() || !r[2].is_number_integer()) {
      why = "a malformed dependency manifest";
      return std::nullopt;
    }
    const auto d = digest_of(*p);
    if (!d || d->hash != r[1].get<std::string>() || d->size != r[2].get<int64_t>()) {
      why = "a file its last scan read changed: " + p->string();
      return std::nullopt;
    }
    m.reads.push_back(*p);
  }
  for (const auto& a : j["absent"]) {
    const auto p = place(a);
    struct stat st{};
    if (!p) {
      why = "a malformed dependency manifest";
      return std::nullopt;
    }
    if (::lstat(p->c_str(), &st) == 0) {
      why = "a file appeared where its last scan looked: " + p->string();
      return std::nullopt;
    }
    m.absent.push_back(p->string());
  }
  return m;
}

}  // namespace ob::exec
