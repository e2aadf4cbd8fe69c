#include "offload_build/toolchain/stable_names.hpp"

#include "offload_build/config/config.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/process/interrupt.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/frontends/clang_flags.hpp"
#include "offload_build/toolchain/probe.hpp"
#include "offload_build/toolchain/stable_names.h"
#include "offload_build/util/file_identity.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/json_text.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain {

namespace {

constexpr const char* kLibrary = "libob-stable-names.so";
constexpr int kProbeTimeoutMs = 20'000;

// The probe: a target region in a file, compiled for the host side only (C,
// or Fortran for flang's driver).
constexpr const char* kProbeSource = "int main(void) {\n#pragma omp target\n  {}\n  return 0;\n}\n";
constexpr const char* kFortranProbeSource = "program p\n!$omp target\n!$omp end target\nend program\n";

// Whether `compiler` run with the library names kernels __omp_offloading_b5d_*.
std::pair<bool, std::string> ask(const fs::path& compiler, const StableNames& s,
                                 const fs::path& scratch) {
  std::error_code ec;
  const bool made = fs::create_directories(scratch, ec);
  const bool fortran = frontend::flang_openmp_frontend().recognizes(compiler);
  const fs::path src = scratch / fmt::format("stable-names-probe-{}.{}", getpid(), fortran ? "f90" : "c");
  {
    std::ofstream out(src, std::ios::trunc);
    out << (fortran ? kFortranProbeSource : kProbeSource);
  }
  auto r = process::capture(process::Command{clang_flags::host_ir_probe_argv(compiler, src), {}, s.env("probe")},
                         kProbeTimeoutMs);
  fs::remove(src, ec);
  if (made && process::interrupted()) fs::remove(scratch, ec);  // the memo's directory, left as it was
  if (!r) return {false, "the compiler could not be asked (" + r.error().message + ")"};
  // ld.so goes on without a library it cannot open (a directory another
  // user cannot enter, a file it cannot read): names after inodes.
  if (r->err.find("cannot be preloaded") != std::string::npos)
    return {false, fmt::format("the compiler could not load {} (ld.so: \"{}\"): kernel names and cache "
                               "keys use inodes", s.library.string(), util::trim(r->err).substr(0, 300))};
  if (r->exit_code != 0) return {false, "the compiler failed on a one-line OpenMP probe"};
  if (r->out.find(OB_STABLE_NAME_PREFIX) != std::string::npos) return {true, ""};
  return {false, compiler.filename().string() +
                     " ignores LD_PRELOAD (statically linked or setuid?): kernel names and "
                     "cache keys use inodes"};
}

}  // namespace

std::vector<std::pair<std::string, std::optional<std::string>>> StableNames::env(
    const std::string& salt) const {
  std::vector<std::pair<std::string, std::optional<std::string>>> env{{"LD_PRELOAD", preload_value(library)}};
  if (const std::string bases = roots.bases_env(); !bases.empty()) {
    env.emplace_back(OB_STABLE_ENV_BASE, bases);
    if (!roots.anchor.empty()) env.emplace_back(OB_STABLE_ENV_ANCHOR, roots.anchor.string());
  }
  env.emplace_back(OB_STABLE_ENV_SALT, salt);
  return env;
}

std::optional<fs::path> find_support_file(const std::string& name) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  for (const fs::path& p : {exe.parent_path() / name,
                            exe.parent_path().parent_path() / "lib/offload-build" / name}) {
    if (fs::is_regular_file(p, ec)) return p;
  }
  return std::nullopt;
}

std::optional<fs::path> find_stable_names_library() { return find_support_file(kLibrary); }

std::optional<fs::path> preload_library() {
  auto library = find_stable_names_library();
  // LD_PRELOAD separates libraries by spaces and colons.
  if (!library || library->string().find_first_of(" :") != std::string::npos) return std::nullopt;
  return library;
}

std::string preload_value(const fs::path& library) {
  std::string preload = library.string();
  if (const char* user = config::env_or_null("LD_PRELOAD"); user && *user) preload += std::string(":") + user;
  return preload;
}

std::string stable_names_unavailable() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  auto library = find_stable_names_library();
  if (!library)
    return fmt::format("{} is neither beside {} nor in {} (or this user cannot reach it): kernel names "
                       "and cache keys use inodes, so this build shares no cache entry with builds "
                       "that have it (docs/CACHE.md)",
                       kLibrary, exe.string(), (exe.parent_path().parent_path() / "lib/offload-build").string());
  if (::access(library->c_str(), R_OK) != 0)
    return fmt::format("{} cannot be read ({}): kernel names and cache keys use inodes, so this build "
                       "shares no cache entry with builds that have it (docs/CACHE.md)",
                       library->string(), std::strerror(errno));
  if (library->string().find_first_of(" :") != std::string::npos)
    return fmt::format("{}: LD_PRELOAD cannot name a path with a space or ':': kernel names and cache "
                       "keys use inodes", library->string());
  return {};
}

std::string kernel_salt(const std::string& kernel_namespace) {
  return fmt::format("{:016x}", XXH3_64bits(kernel_namespace.data(), kernel_namespace.size()));
}

std::string NameRoots::bases_env() const {
  std::string joined;
  for (const auto& b : bases) {
    if (b.empty() || b.string().find(':') != std::string::npos) continue;
    if (!joined.empty()) joined += ':';
    joined += b.string();
  }
  return joined;
}

std::string stable_name_path(const fs::path& real, const NameRoots& roots) {
  const std::string s = real.string(), bases = roots.bases_env();
  std::string buf(OB_STABLE_NAME_MAX, '\0');
  return ob_stable_name(s.c_str(), bases.c_str(), roots.anchor.c_str(), buf.data(), buf.size());
}

std::optional<StableNames> stable_names_for(const fs::path& compiler, const NameRoots& roots,
                                            const std::optional<fs::path>& memo_dir) {
  auto library = preload_library();
  // Not usable: the caller says why (stable_names_unavailable), once per build.
  if (!library || !stable_names_unavailable().empty()) return std::nullopt;
  StableNames s{*library, roots, true, ""};
  if (!memo_dir) return s;
  const nlohmann::json key_json{{"compiler", util::file_identity(compiler)},
                                {"library", util::file_identity(*library)},
                                {"version", OB_STABLE_VERSION}};
  const std::string key = util::dump_lossless(key_json);
  if (auto memo = probe::recall(memo_dir, "stable-names", key); memo && memo->is_object()) {
    s.keyed = memo->value("honoured", false);
    s.fallback = memo->value("why", "");
    return s;
  }
  std::tie(s.keyed, s.fallback) = ask(compiler, s, *memo_dir);
  if (process::interrupted()) return s;  // a stopped probe's answer is not remembered
  probe::remember(memo_dir, "stable-names", key, {{"honoured", s.keyed}, {"why", s.fallback}});
  return s;
}

fs::path lookups_record(const fs::path& depfile) { return fs::path(depfile).concat(OB_LOOKUPS_SUFFIX); }

std::optional<std::vector<std::string>> read_lookups_record(const fs::path& file, std::string& why) {
  // A record holds at most OB_LOOKUPS_MAX paths per process, each under PATH_MAX.
  constexpr uint64_t kMaxRecord = uint64_t{256} << 20;
  const auto text = util::read_file(file, kMaxRecord);
  if (!text) {
    why = "no record of the lookups that found nothing (the compiler did not load the preload library)";
    return std::nullopt;
  }
  std::set<std::string> paths;
  bool header = false, wrote = false;
  for (const auto& line : util::split(*text, '\n')) {
    if (line.empty()) continue;
    if (line == OB_LOOKUPS_HEADER) {
      header = true;
    } else if (line == OB_LOOKUPS_WROTE) {
      wrote = true;
    } else if (line == OB_LOOKUPS_LOST || line.front() != '/') {
      why = "the lookups that found nothing could not all be recorded";
      return std::nullopt;
    } else {
      paths.insert(line);
    }
  }
  if (!header) {
    why = "no record of the lookups that found nothing (the compiler did not load the preload library)";
    return std::nullopt;
  }
  if (!wrote) {
    why = "the process that wrote the depfile recorded no lookups (a compiler that ignores LD_PRELOAD?)";
    return std::nullopt;
  }
  return std::vector<std::string>(paths.begin(), paths.end());
}

std::string lookups_record_text(const std::vector<std::string>& paths) {
  std::string text = OB_LOOKUPS_HEADER "\n";
  for (const auto& p : paths) text += p + '\n';
  return text + OB_LOOKUPS_WROTE "\n";
}

bool is_lookups_variable(std::string_view name) { return name == OB_LOOKUPS_ENV; }

bool is_lookups_only_variable(std::string_view name) { return name == OB_LOOKUPS_ENV_ONLY; }

bool is_salt_variable(std::string_view name) { return name == OB_STABLE_ENV_SALT; }

bool is_place_variable(std::string_view name) {
  return name == "LD_PRELOAD" || name == OB_STABLE_ENV_BASE || name == OB_STABLE_ENV_ANCHOR || name == OB_LOOKUPS_ENV;
}

void add_lookups_env(std::vector<std::pair<std::string, std::optional<std::string>>>& env, const fs::path& depfile,
                     const fs::path& library) {
  env.emplace_back(OB_LOOKUPS_ENV, depfile.string());
  const bool preloaded = std::any_of(env.begin(), env.end(), [](const auto& e) { return e.first == "LD_PRELOAD"; });
  if (preloaded) return;
  env.emplace_back("LD_PRELOAD", preload_value(library));
  env.emplace_back(OB_LOOKUPS_ENV_ONLY, "1");
}

std::optional<fs::path> redirect_lookups(std::vector<std::pair<std::string, std::optional<std::string>>>& env,
                                         const fs::path& depfile) {
  std::optional<fs::path> record;
  for (auto& [k, v] : env)
    if (k == OB_LOOKUPS_ENV && v) {
      v = depfile.string();
      record = lookups_record(depfile);
    }
  return record;
}

}  // namespace ob::toolchain
