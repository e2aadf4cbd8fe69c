// The cache key material of `offload-build cargo`'s device passes (see cargo_cache.hpp).
#include "offload_build/cache/cargo_cache.hpp"

#include <algorithm>

#include "offload_build/storage/hash.hpp"
#include "offload_build/util/file_identity.hpp"
#include "offload_build/util/files.hpp"

namespace ob::cache::cargo_cache {

namespace {

// Every regular file under `dir`, sorted, without target/ and hidden entries.
std::vector<fs::path> crate_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || (it.depth() == 0 && name == "target")) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A file's content for the key: bounded reads (a planted FIFO or /dev/zero
// costs nothing); a file that cannot be read whole is keyed by its identity
// (size and mtime), so a change to it still changes the key.
std::string content(const fs::path& f, const char* missing) {
  if (auto text = util::read_file(f, util::kMaxBuildOutput)) return std::move(*text);
  std::error_code ec;
  return fs::exists(f, ec) ? "<unreadable> " + util::file_identity(f) : std::string(missing);
}

}  // namespace

std::map<std::string, std::string> file_hashes(const fs::path& workspace_root, const std::vector<fs::path>& dirs) {
  std::map<std::string, std::string> out;
  auto add = [&](const fs::path& f, const char* missing) {
    storage::Hasher h;
    h.field("content", content(f, missing));
    out[f.lexically_relative(workspace_root).string()] = h.hex();
  };
  add(workspace_root / "Cargo.lock", "<none>");
  for (const auto& dir : dirs)
    for (const auto& f : crate_files(dir)) add(f, "<unreadable>");
  return out;
}

std::string files_digest(const fs::path& workspace_root, const std::vector<fs::path>& crate_dirs) {
  storage::Hasher h;
  h.field("Cargo.lock", content(workspace_root / "Cargo.lock", "<none>"));
  for (const auto& dir : crate_dirs)
    for (const auto& f : crate_files(dir)) {
      h.field("file", f.lexically_relative(workspace_root).string());
      h.field("content", content(f, "<unreadable>"));
    }
  return h.hex();
}

std::string key(const KeyInputs& in) {
  storage::Hasher h;
  h.field("cargo-device", "2");
  h.field("rustc", in.rustc_version);
  h.field("llvm", in.llvm);
  for (const auto& a : in.argv) h.field("arg", a);
  for (const auto& k : in.kernels) h.field("kernel", k);
  for (const auto& f : in.rustflags) h.field("rustflag", f);
  h.field("config", in.config);
  for (const auto& e : in.env) h.field("config-env", e);
  h.field("files", in.files);
  return h.hex();
}

namespace {

// The device image's key: the pass with paths relative to the workspace, and
// `files`, the digest of the kernel crate's files and its local dependencies'.
std::string image_key(const plan::CargoSession& s, const plan::KernelCrate& c, const manifest::Target& t,
                      const std::vector<std::string>& pass, const std::string& files) {
  KeyInputs in;
  in.rustc_version = s.tc.rust->version_line;
  in.llvm = s.tc.root.filename().string();
  const std::string root = c.pkg.workspace_root.string() + "/";
  const toolchain::cargo::DeviceConfig& config = c.config(t.triple);
  // The pass's own dir is named by where it is (DeviceConfig::place): keyed as what it stands for.
  const std::string dir = toolchain::cargo::device_target_dir(c.pkg, t, config.place).string();
  for (size_t i = 1; i < pass.size(); ++i) {  // not cargo's own path
    std::string a = pass[i];
    for (size_t at; (at = a.find(dir)) != std::string::npos;) a.replace(at, dir.size(), "<device-dir>");
    for (size_t at; (at = a.find(root)) != std::string::npos;) a.replace(at, root.size(), "<workspace>/");
    in.argv.push_back(a);
  }
  in.kernels = c.kernels;
  in.rustflags = s.device_rustflags.at(t.triple).flags;
  in.config = config.portable;
  for (const auto& [name, setting] : s.config_env) in.env.push_back(name + "=" + setting);
  in.files = files;
  return key(in);
}

}  // namespace

void add_keys(plan::CargoPlan& p, const plan::CargoSession& s) {
  for (const auto& c : s.crates) {
    std::optional<std::string> files;
    for (const auto& [id, step] : p.devices) {
      if (step.pkg.id != c.pkg.id) continue;
      if (!files) files = files_digest(c.pkg.workspace_root, c.dirs);
      plan::Job& job = p.plan.jobs[id];
      job.key_material = image_key(s, c, step.target, job.argv, *files);
    }
  }
}

}  // namespace ob::cache::cargo_cache
