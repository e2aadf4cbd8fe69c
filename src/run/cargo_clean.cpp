// offload-build's outputs of the crates and profiles `cargo clean` cleans
// (see cargo_clean.hpp).
#include "cargo_clean.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/toolchain/frontends/cargo.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::run {

namespace {

namespace cargo = toolchain::cargo;

// The directory cargo names a profile's outputs by: debug for dev (and test),
// release for release (and bench), else the profile's own name.
std::string profile_dir(const std::string& profile) {
  if (profile == "dev" || profile == "test") return "debug";
  if (profile == "bench") return "release";
  return profile;
}

// `name` is CRATE-<configuration digest> (cargo::device_target_dir).
bool names_crate(const std::string& name, const std::string& crate) {
  if (name.size() != crate.size() + 17 || name.compare(0, crate.size() + 1, crate + "-") != 0) return false;
  return std::all_of(name.end() - 16, name.end(), [](unsigned char c) { return std::isxdigit(c); });
}

// Whether the device pass's target dir `d` holds outputs of the profile directory `pdir`
// (<d>/<triple>/<pdir>, or <d>/<pdir> for its build scripts).
bool of_profile(const fs::path& d, const std::string& pdir) {
  std::error_code ec;
  if (fs::is_directory(d / pdir, ec)) return true;
  for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec))
    if (fs::is_directory(it->path() / pdir, ec)) return true;
  return false;
}

Result<fs::path> target_directory(const Request& o, const fs::path& cargo_bin, const cargo::UserArgs& u) {
  const fs::path dir = fs::absolute(o.directory).lexically_normal();
  if (u.target_dir) return (dir / *u.target_dir).lexically_normal();
  std::vector<std::string> argv{cargo_bin.string(), "metadata", "--no-deps", "--format-version", "1", "--offline"};
  for (size_t i = 0; i + 1 < u.shared.size(); ++i)
    if (u.shared[i] == "--manifest-path") argv.insert(argv.end(), {"--manifest-path", u.shared[i + 1]});
  for (const auto& f : cargo::lock_flags(u)) argv.push_back(f);
  auto out = process::capture(process::Command{argv, dir, {}});
  if (!out) return out.error();
  const nlohmann::json root = nlohmann::json::parse(out->out, nullptr, false);
  if (out->exit_code != 0 || !root.is_object() || !root.contains("target_directory"))
    return Error::failure("`cargo metadata` named no target directory: " + util::trim(out->err));
  return fs::path(root["target_directory"].get<std::string>());
}

}  // namespace

Result<void> clean_offload_outputs(const Request& o, const fs::path& cargo_bin, const std::vector<std::string>& args) {
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  const cargo::UserArgs u = cargo::split_user_args(rest);
  const bool profile_given = std::any_of(rest.begin(), rest.end(), [](const std::string& a) {
    return a == "--release" || a == "-r" || a == "--profile" || util::starts_with(a, "--profile=");
  });
  const auto& crates = u.selection.packages;
  if (crates.empty() && !profile_given) return {};  // cargo removed the whole target dir
  const bool dry = std::any_of(rest.begin(), rest.end(), [](const std::string& a) { return a == "--dry-run" || a == "-n"; });
  auto target = target_directory(o, cargo_bin, u);
  if (!target) return target.error();
  const std::string pdir = profile_dir(cargo::device_profile(u));
  std::vector<fs::path> remove;
  std::error_code ec;
  for (fs::directory_iterator t(*target / "offload-device", ec), end; !ec && t != end; t.increment(ec))
    for (fs::directory_iterator d(t->path(), ec); !ec && d != end; d.increment(ec)) {
      const std::string name = d->path().filename().string();
      const bool crate = crates.empty() || std::any_of(crates.begin(), crates.end(), [&](const std::string& c) {
                           return names_crate(name, c);
                         });
      if (crate && (!profile_given || of_profile(d->path(), pdir))) remove.push_back(d->path());
    }
  // The packages and embedded objects: those of the profile, or (-p alone) every
  // profile's when a device pass of the crates went.
  if (profile_given) remove.push_back(*target / "offload" / u.profile);
  else if (!remove.empty())
    for (fs::directory_iterator p(*target / "offload", ec), end; !ec && p != end; p.increment(ec)) remove.push_back(p->path());
  for (const auto& p : remove) {
    if (!fs::exists(p, ec)) continue;
    if (dry) {
      std::cerr << "offload-build: would remove " << p.string() << '\n';
      continue;
    }
    fs::remove_all(p, ec);
    if (ec) return Error::failure(fmt::format("cannot remove {}: {}", p.string(), ec.message()));
    if (!o.config.flag("quiet")) std::cerr << "offload-build: removed " << p.string() << '\n';
  }
  return {};
}

}  // namespace ob::run
