// --explain for `offload-build cargo` (see cargo_explain.hpp).
#include "cargo_explain.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/core.h>

#include "offload_build/cache/cargo_cache.hpp"
#include "offload_build/cache/depfile.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/storage/hash.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::run {

namespace {

// Paths under the workspace written relative to it, so a record stays true
// for a moved checkout.
std::string relative(std::string text, const fs::path& workspace_root) {
  const std::string root = workspace_root.string() + "/";
  for (size_t at; (at = text.find(root)) != std::string::npos;) text.replace(at, root.size(), "");
  return text;
}

std::vector<std::string> minus(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::multiset<std::string> in_b(b.begin(), b.end());
  std::vector<std::string> out;
  for (const auto& x : a) {
    auto it = in_b.find(x);
    if (it == in_b.end()) out.push_back(x);
    else in_b.erase(it);
  }
  return out;
}

// What a device pass's depfile (rustc's dep-info of every crate it compiled,
// toolchain::cargo::device_depfile) says it read beyond the crates' files: a
// file outside them (include_str!, a registry crate), each environment
// variable (env!, option_env!, rerun-if-env-changed); each with its hash now.
nlohmann::json depfile_reads(const plan::Job& job, const fs::path& root, const std::vector<fs::path>& dirs) {
  nlohmann::json read = nlohmann::json::object();
  if (!job.depfile) return read;
  const auto text = util::read_file(*job.depfile, util::kMaxBuildOutput);
  if (!text) return read;
  for (const auto& dep : cache::parse_depfile(*text)) {
    const fs::path p = (fs::path(dep).is_absolute() ? fs::path(dep) : root / dep).lexically_normal();
    if (std::any_of(dirs.begin(), dirs.end(), [&](const fs::path& d) { return util::starts_with(p.string(), d.string() + "/"); }))
      continue;  // in "files"
    const auto bytes = util::read_file(p);
    read[relative(p.string(), root)] = bytes ? storage::sha256_hex(*bytes) : "<absent>";
  }
  for (const auto& name : cache::parse_env_deps(*text)) {
    const char* v = config::env_or_null(name.c_str());
    read[std::string(cache::kEnvDepPrefix) + name] = storage::sha256_hex(v ? "set " + std::string(v) : "unset");
  }
  return read;
}

std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '-';
  return out;
}

}  // namespace

fs::path CargoExplain::record_path(const plan::Job& job) const {
  std::string name = job.describe(s_.dir);
  if (job.id == p_.host) name = s_.user.command + " " + name;  // cargo test links other programs
  return toolchain::cargo::offload_dir(s_.pkg, s_.user.profile) / "explain" / (slug(name) + ".json");
}

std::optional<nlohmann::json> CargoExplain::inputs(const plan::Job& job) const {
  const fs::path& root = s_.pkg.workspace_root;
  std::vector<fs::path> dirs;
  nlohmann::json in;
  if (auto d = p_.devices.find(job.id); d != p_.devices.end()) {
    for (const auto& c : s_.crates)
      if (c.pkg.id == d->second.pkg.id) dirs = c.dirs;
  } else if (job.id == p_.host) {
    dirs.push_back(root);  // the package and every crate of its workspace
    for (const auto& c : s_.crates) dirs.insert(dirs.end(), c.dirs.begin(), c.dirs.end());
    // The device images it embeds: the package's content names the copy it links.
    std::string images;
    for (const auto& h : p_.host_steps) {
      auto bytes = util::read_file(h.package, util::kMaxBuildOutput);
      images += (images.empty() ? "" : " ") + (bytes ? toolchain::cargo::content_hash(*bytes) : "<none>");
    }
    in["images"] = images;
  } else {
    return std::nullopt;
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  std::vector<std::string> argv, env;
  for (size_t i = 1; i < job.argv.size(); ++i) argv.push_back(relative(job.argv[i], root));
  for (const auto& [k, v] : job.env) env.push_back(k + "=" + (v ? relative(*v, root) : "<unset>"));
  in["rustc"] = s_.tc.rust->version_line;
  in["argv"] = argv;
  in["env"] = env;
  in["files"] = cache::cargo_cache::file_hashes(root, dirs);
  if (p_.devices.count(job.id)) in["read"] = depfile_reads(job, root, dirs);
  return in;
}

std::optional<std::string> CargoExplain::changed(const plan::Job& job) const {
  auto now = inputs(job);
  if (!now) return std::nullopt;
  auto text = util::read_file(record_path(job), util::kMaxBuildOutput);
  nlohmann::json before = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (!before.is_object()) return "no earlier build of this job recorded (in this profile)";
  std::vector<std::string> why;
  try {
    if (before.value("rustc", "") != (*now)["rustc"].get<std::string>())
      why.push_back("rustc changed: " + (*now)["rustc"].get<std::string>());
    const auto a = (*now)["argv"].get<std::vector<std::string>>();
    const auto b = before.value("argv", std::vector<std::string>{});
    for (const auto& x : minus(a, b)) why.push_back("flag added: " + x);
    for (const auto& x : minus(b, a)) why.push_back("flag removed: " + x);
    const auto e = (*now)["env"].get<std::vector<std::string>>();
    for (const auto& x : minus(e, before.value("env", std::vector<std::string>{})))
      why.push_back("environment changed: " + x.substr(0, x.find('=')));
    if (now->contains("images") && before.value("images", "") != (*now)["images"].get<std::string>())
      why.push_back("device images changed (the package it embeds)");
    const auto f = (*now)["files"].get<std::map<std::string, std::string>>();
    const auto g = before.value("files", std::map<std::string, std::string>{});
    for (const auto& [path, hash] : f) {
      auto it = g.find(path);
      if (it == g.end()) why.push_back("file added: " + path);
      else if (it->second != hash) why.push_back("changed: " + path);
    }
    for (const auto& [path, hash] : g)
      if (!f.count(path)) why.push_back("file removed: " + path);
    // What the pass read last time, as it is now (the depfile is that run's).
    const auto r = now->value("read", std::map<std::string, std::string>{});
    for (const auto& [path, hash] : before.value("read", std::map<std::string, std::string>{})) {
      auto it = r.find(path);
      if (it == r.end() || it->second == hash) continue;
      why.push_back(util::starts_with(path, cache::kEnvDepPrefix)
                        ? "environment variable changed: " + path.substr(cache::kEnvDepPrefix.size())
                        : "changed: " + path);
    }
  } catch (const nlohmann::json::exception&) {
    return "no earlier build of this job recorded (in this profile)";
  }
  if (!why.empty()) return util::join(why, "; ");
  if (job.id == p_.host)
    return "no input changed since it last ran: cargo's fingerprint finds it fresh (up to date) unless a file "
           "outside the workspace changed";
  return "no input changed since it last ran: the image is not in the cache (evicted, cleared, or another "
         "cache directory)";
}

void CargoExplain::record(const plan::Job& job) const {
  auto in = inputs(job);
  if (!in) return;
  const fs::path path = record_path(job);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  (void)util::write_file_atomic(path, in->dump(1) + "\n");
}

}  // namespace ob::run
