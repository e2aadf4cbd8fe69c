// The user's cargo arguments sorted by who gets them, and the variants of
// them the passes run with (toolchain/frontends/cargo.hpp).
#include <algorithm>

#include "offload_build/toolchain/frontends/cargo.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::cargo {

UserArgs split_user_args(const std::vector<std::string>& given) {
  UserArgs u;
  std::vector<std::string> args;  // without --message-format, which each pass gets merged with its own
  for (size_t i = 0; i < given.size(); ++i) {
    std::optional<std::string> value;
    if (util::starts_with(given[i], "--message-format=")) value = given[i].substr(17);
    else if (given[i] == "--message-format" && i + 1 < given.size()) value = given[++i];
    if (!value) args.push_back(given[i]);
    for (auto& v : util::split(value.value_or(""), ','))
      if (!v.empty()) u.message_format.push_back(v);
  }
  u.all = args;
  static const std::vector<std::string> shared_flags = {"--release", "-r", "--locked", "--frozen", "--offline",
                                                        "-q", "--quiet", "-v", "-vv", "--verbose"};
  static const std::vector<std::string> shared_with_value = {"--profile", "--manifest-path", "--config", "-Z"};
  static const std::vector<std::string> feature_flags = {"--all-features", "--no-default-features"};
  static const std::vector<std::string> feature_with_value = {"--features", "-F"};
  auto among = [](const std::vector<std::string>& list, const std::string& a) {
    return std::find(list.begin(), list.end(), a) != list.end();
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string name = a.substr(0, a.find('='));
    const bool joined = a.find('=') != std::string::npos;
    const std::string value = joined ? a.substr(a.find('=') + 1) : (i + 1 < args.size() ? args[i + 1] : "");
    if (a == "--release" || a == "-r") u.profile = "release";
    if (name == "--profile") u.profile = value;
    if (name == "--target") u.has_target = true;
    if (name == "-p" || name == "--package") u.selection.packages.push_back(value);
    if (name == "--workspace" || name == "--all") u.selection.workspace = true;
    if (name == "--exclude") u.selection.exclude.push_back(value);
    if (name == "--bin") u.selection.bins.push_back(value);
    if (name == "--target-dir") u.target_dir = value;
    if (among(shared_flags, a)) {
      u.shared.push_back(a);
    } else if (among(feature_flags, a)) {
      u.features.push_back(a);
    } else if (among(shared_with_value, name) || among(feature_with_value, name)) {
      auto& to = among(shared_with_value, name) ? u.shared : u.features;
      to.push_back(a);
      if (!joined && i + 1 < args.size()) to.push_back(args[++i]);
    } else if (!joined &&
               (name == "--target" || name == "-p" || name == "--package" || name == "--exclude" || name == "--bin") &&
               i + 1 < args.size()) {
      ++i;  // its value is not a flag of its own
    }
  }
  return u;
}

std::vector<std::string> lock_flags(const UserArgs& user) {
  std::vector<std::string> out;
  for (const auto& a : user.shared)
    if (a == "--locked" || a == "--frozen") out.push_back(a);
  return out;
}

UserArgs for_packages(const UserArgs& user, const std::vector<std::string>& packages) {
  UserArgs u = user;
  u.all.clear();
  for (size_t i = 0; i < user.all.size(); ++i) {
    const std::string& a = user.all[i];
    if (a == "--workspace" || a == "--all") continue;
    if (a == "-p" || a == "--package" || a == "--exclude") {
      ++i;  // and its value
      continue;
    }
    if (util::starts_with(a, "--package=") || util::starts_with(a, "--exclude=") ||
        (util::starts_with(a, "-p") && !util::starts_with(a, "--")))
      continue;
    u.all.push_back(a);
  }
  for (const auto& p : packages) u.all.insert(u.all.end(), {"-p", p});
  u.selection = {packages, false, {}, user.selection.bins};
  u.implied_package.reset();
  return u;
}

}  // namespace ob::toolchain::cargo
