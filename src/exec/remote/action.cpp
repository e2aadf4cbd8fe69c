// A plan job as a remote action (exec/remote/action.hpp).
#include "offload_build/exec/remote/action.hpp"

#include <sys/stat.h>

#include <set>

#include <fmt/format.h>

#include "offload_build/config/config.hpp"
#include "offload_build/exec/remote/runner.hpp"
#include "offload_build/manifest/manifest.hpp"
#include "offload_build/storage/hash.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/paths.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::exec {

namespace {

// Where files from outside the input root's directory (the stable-names
// library) are put in it.
constexpr std::string_view kSupportDir = ".offload-build-remote";
// The action's environment variable holding ActionKey::stamp.
constexpr std::string_view kKeyVariable = "OFFLOAD_BUILD_ACTION_KEY";
// An empty input in the compile's own directory (add_marker).
constexpr const char* kCwdMarker = ".offload-build-cwd";

fs::path common_dir(const fs::path& a, const fs::path& b) {
  fs::path out;
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end() && *i == *j; ++i, ++j) out /= *i;
  return out;
}

// An absolute path as the action names it: relative to the working directory.
std::string from_cwd(const fs::path& p, const fs::path& cwd) {
  return p.lexically_normal().lexically_relative(cwd).string();
}

// The first symlink on `p`'s way below `root` (a symlinked /tmp or home
// above the input root changes nothing), or nullopt.
std::optional<fs::path> symlink_on_way(const fs::path& p, const fs::path& root) {
  fs::path at = root;
  for (const auto& part : p.lexically_relative(root)) {
    at /= part;
    std::error_code ec;
    if (fs::is_symlink(at, ec)) return at;
  }
  return std::nullopt;
}

}  // namespace

std::optional<fs::path> compiler_path(const plan::Job& job, const fs::path& cwd) {
  if (job.argv.empty()) return std::nullopt;
  const fs::path p(job.argv[0]);
  if (p.is_absolute()) return p;
  if (job.argv[0].find('/') != std::string::npos) return (cwd / p).lexically_normal();
  return toolchain::find_in_path(job.argv[0], config::env("PATH").value_or(""));
}

std::string kept_local(const plan::Job& job, const fs::path& cwd) {
  if (job.kind != plan::JobKind::DeviceCompile && job.kind != plan::JobKind::HostIr &&
      job.kind != plan::JobKind::HostCompile) {
    const std::string_view kind = plan::job_kind_name(job.kind);  // an assemble job, an image-link job
    return fmt::format("{} {} job: remote execution sends compiles", kind[0] == 'a' || kind[0] == 'i' ? "an" : "a",
                       kind);
  }
  if (job.key_material) return "its planner keys it by what the worker cannot see (cargo's device pass)";
  if (!compiler_path(job, cwd))
    return fmt::format("its compiler {} is not found in PATH", job.argv.empty() ? "(none)" : job.argv[0]);
  // Its planner's word (a Fortran compile's module files are the next compile's inputs: docs/DISTRIBUTED.md).
  return job.runs_here;
}

// The LLVM installation the job's compiler is part of (ROOT/bin/clang beside
// ROOT/lib/clang: an LLVM in a private prefix, as scripts/setup.sh --llvm 19
// unpacks one), unless the project lies inside it. Its headers and runtime
// are the toolchain's, which the compiler check proves the worker has at the
// same path, as it has the system directories' files: not shipped.
std::optional<fs::path> compiler_installation(const plan::Job& job, const fs::path& cwd, const fs::path& project) {
  const auto compiler = compiler_path(job, cwd);
  if (!compiler || compiler->parent_path().filename() != "bin") return std::nullopt;
  const fs::path root = compiler->parent_path().parent_path().lexically_normal();
  std::error_code ec;
  if (!fs::is_directory(root / "lib" / "clang", ec) || util::is_under(project.lexically_normal(), root))
    return std::nullopt;
  return root;
}

// One job's places: the compile's directory, the input root, where the action
// runs (the directory above the compile's and its outputs'), the files it
// reads (`reads`: all; `shipped`: those not the worker's own) and its outputs
// by final path.
struct ActionBuilder::Layout {
  fs::path cwd, root, run_dir;
  std::vector<fs::path> reads, shipped, finals;
};

ActionBuilder::ActionBuilder(const RemoteRunnerSetup& setup) : setup_(setup) {
  const plan::Plan& plan = *setup_.plan;
  root_ = plan.cwd;
  for (const auto& d : plan.base_dirs) root_ = common_dir(root_, d);
  if (!plan.name_anchor.empty()) root_ = common_dir(root_, plan.name_anchor);
  if (!plan.build_dir.empty()) root_ = common_dir(root_, plan.build_dir);
}

fs::path ActionBuilder::cwd_of(const process::Command& cmd) {
  return cmd.cwd.empty() ? fs::current_path() : fs::path(cmd.cwd);
}

std::optional<ActionBuilder::Built> ActionBuilder::build(const plan::Job& job, const process::Command& cmd,
                                                         const std::vector<fs::path>& temps,
                                                         const ScanFn& scan, JobKeys* keys,
                                                         std::optional<std::vector<std::string>>& absent,
                                                         std::string& why, const Manifest* known) {
  if (!keys) {  // its action would be keyed more weakly than its local entry
    why = "the build computed no key for it";
    return std::nullopt;
  }
  Layout l;
  l.cwd = cwd_of(cmd);
  // What -march=native means is this machine's CPU: a worker would build for its own.
  if (auto native = toolchain::frontend::machine_dependent_option(cmd.argv)) {
    why = fmt::format("{} means this machine's CPU or GPU, which a worker's may not be", *native);
    return std::nullopt;
  }
  auto files = files_read(job, cmd, l.cwd, temps, scan, absent, why, known);
  if (!files) return std::nullopt;
  l.root = root_;
  const auto installation = compiler_installation(job, l.cwd, setup_.plan->cwd);
  std::set<fs::path> seen;
  for (auto& f : *files) {
    f = f.lexically_normal();
    if (!seen.insert(f).second) continue;
    l.reads.push_back(f);
    if (is_system(f) || (installation && util::is_under(f, *installation))) continue;
    l.root = common_dir(l.root, f);
    l.shipped.push_back(f);
  }
  // A file reached through a symlink is a regular file on the worker: a
  // header reached by two paths is two files there (#pragma once fails).
  for (const auto& f : l.shipped)
    if (auto link = symlink_on_way(f, l.root)) {
      why = fmt::format("{} is reached through the symlink {}, which the worker would see as another file",
                        f.string(), link->string());
      return std::nullopt;
    }
  const ActionKey key = keys->action_key(job, l.reads);
  if (!lay_out(job, temps, l, why)) return std::nullopt;
  Built built;
  reapi::Action& action = built.action;
  action.working_directory = from_cwd(l.run_dir, l.root);
  if (action.working_directory == ".") action.working_directory.clear();
  if (!add_inputs(l, action, why)) return std::nullopt;
  add_argv(job, cmd, temps, l, action);
  if (!add_env(cmd, key, l, action, why)) return std::nullopt;
  action.do_not_cache = key.do_not_cache || setup_.config.engine_cache == EngineCache::Off;
  action.skip_cache_lookup = setup_.config.engine_cache == EngineCache::Execute;
  for (const auto& f : l.finals) action.output_files.push_back(from_cwd(f, l.run_dir));
  action.mnemonic = std::string(plan::job_kind_name(job.kind));
  action.target_id = job.describe(setup_.plan->cwd);
  built.outputs = action.output_files;
  if (!add_marker(temps, l, built, why)) return std::nullopt;
  std::sort(action.output_files.begin(), action.output_files.end());
  built.reads = std::move(l.reads);
  built.cwd = l.cwd;
  return built;
}

// The depfile a job's dependency scan names (never written: ScanBatcher).
static fs::path scan_depfile(const std::vector<fs::path>& temps) { return fs::path(temps.back()).concat(".scan"); }

std::optional<process::Command> ActionBuilder::scan_command(const process::Command& cmd,
                                                            const std::vector<fs::path>& temps) {
  const fs::path depfile = scan_depfile(temps);
  auto argv = toolchain::frontend::dependency_scan(cmd.argv, depfile.string());
  if (!argv) return std::nullopt;
  process::Command s = cmd;
  s.argv = *argv;
  (void)toolchain::redirect_lookups(s.env, depfile);
  return s;
}

// Every file the compile reads: its declared inputs and, with a depfile, what
// a scan with its own flags and target lists finds (or, `known`, found last time).
std::optional<std::vector<fs::path>> ActionBuilder::files_read(
    const plan::Job& job, const process::Command& cmd, const fs::path& cwd, const std::vector<fs::path>& temps,
    const ScanFn& scan, std::optional<std::vector<std::string>>& absent, std::string& why,
    const Manifest* known) {
  std::vector<fs::path> files;
  for (const auto& in : job.inputs) files.push_back(in.is_absolute() ? in : cwd / in);
  if (!job.depfile) return files;
  if (known) {  // what the manifest says the scan would find
    files.insert(files.end(), known->reads.begin(), known->reads.end());
    return files;
  }
  auto s = scan_command(cmd, temps);
  if (!s) {
    why = "its command is not a compile the dependency scan knows";
    return std::nullopt;
  }
  // The lookups that found nothing (record_lookups) are the
  // preprocessor's: the scan's, with the compile's flags and target, made
  // here on this machine's paths. The scan records them (the preload
  // library); a result from the engine is stored with them (the runner),
  // so it serves the next build from the local cache and a header created
  // where it looked misses.
  auto found = scan(*s, scan_depfile(temps));
  if (!found) {
    why = "its dependency scan failed";
    return std::nullopt;
  }
  absent = std::move(found->absent);
  for (const auto& dep : setup_.parse_depfile(found->depfile)) {
    fs::path p(dep);
    files.push_back(p.is_absolute() ? p : cwd / p);
  }
  return files;
}

// The outputs by final path, the directory the action runs in, the input root
// widened to hold them, and the base_dir rule of stable names.
bool ActionBuilder::lay_out(const plan::Job& job, const std::vector<fs::path>& temps, Layout& l, std::string& why) {
  for (const auto& t : temps) l.root = common_dir(l.root, t.lexically_normal().parent_path());
  // The action names each output by its final path, not by the executor's
  // temporary (which holds our PID): the same job is the same action in
  // every build, so the engine's action cache serves it. A worker takes
  // outputs from below the action's working directory only: with one
  // elsewhere (-o ../build/x.o), the action runs in the directory above
  // both and enters the compile's own with `env -C`.
  l.finals = job.outputs;
  if (job.depfile) l.finals.push_back(*job.depfile);
  if (l.finals.size() != temps.size()) {
    why = "its outputs and temporaries do not pair";
    return false;
  }
  l.run_dir = l.cwd.lexically_normal();
  for (auto& f : l.finals) {
    f = (f.is_absolute() ? f : l.cwd / f).lexically_normal();
    l.run_dir = common_dir(l.run_dir, f.parent_path());
  }
  l.root = common_dir(l.root, l.run_dir);
  // Kernel names come from each file's place relative to the base
  // directories; a file outside them is named by its absolute path, which
  // on the worker is another: the job stays here (with its host side).
  if (job.stable_names) {
    const auto& bases = setup_.plan->base_dirs;
    for (const auto& f : l.shipped)
      if (std::none_of(bases.begin(), bases.end(),
                       [&](const fs::path& b) { return util::is_under(f, b.lexically_normal()); })) {
        why = fmt::format("{} is outside base_dir: its kernel names would differ on the worker", f.string());
        if (!outside_base_said_.exchange(true) && setup_.warn)
          setup_.warn(fmt::format("remote_execution {}: {} is outside base_dir, so compiles that read it run "
                                  "locally (kernel names come from file places); set base_dir to the project's "
                                  "directory (docs/DISTRIBUTED.md)",
                                  setup_.config.display, f.string()));
        return false;
      }
  }
  if (l.root.empty() || l.root == l.root.root_path()) {
    why = "it reads files outside any one directory but /";
    return false;
  }
  return true;
}

bool ActionBuilder::add_inputs(Layout& l, reapi::Action& action, std::string& why) {
  for (const auto& f : l.shipped) {
    auto d = digest_of(f);
    if (!d) {
      why = fmt::format("{} cannot be read", f.string());
      return false;
    }
    struct stat st{};
    ::stat(f.c_str(), &st);
    action.inputs.push_back({from_cwd(f, l.root), *d, f, (st.st_mode & S_IXUSR) != 0});
  }
  return true;
}

// The compiler by absolute path, each argument's paths relative to the
// compile's directory, the temporaries named by their final paths; `env -C`
// first when the action runs in the directory above.
void ActionBuilder::add_argv(const plan::Job& job, const process::Command& cmd, const std::vector<fs::path>& temps,
                             const Layout& l, reapi::Action& action) const {
  std::vector<std::pair<std::string, std::string>> renamed;
  for (size_t i = 0; i < l.finals.size(); ++i)
    renamed.emplace_back(from_cwd(temps[i], l.cwd), from_cwd(l.finals[i], l.cwd));
  if (l.run_dir != l.cwd.lexically_normal()) action.argv = {"/usr/bin/env", "-C", from_cwd(l.cwd, l.run_dir)};
  action.argv.push_back(compiler_path(job, setup_.plan->cwd)->string());
  for (size_t i = 1; i < cmd.argv.size(); ++i) {
    std::string arg = rewrite(cmd.argv[i], l.root, l.cwd);
    for (const auto& [temp, final_path] : renamed)
      for (size_t at; (at = arg.find(temp)) != std::string::npos;) arg.replace(at, temp.size(), final_path);
    action.argv.push_back(std::move(arg));
  }
}

// The environment: the job's own, paths made relative, files from outside
// the root (the stable-names library) shipped under kSupportDir.
bool ActionBuilder::add_env(const process::Command& cmd, const ActionKey& key, const Layout& l,
                            reapi::Action& action, std::string& why) {
  std::map<std::string, std::string> env{{"PATH", "/usr/bin:/bin"}};
  // Not the record of lookups that found nothing (record_lookups): what a
  // compile looks for on the worker says nothing of this machine's files,
  // and its per-build path would make every action a new one. The result
  // is stored with the local dependency scan's record instead (files_read).
  const bool lookups_only = std::any_of(cmd.env.begin(), cmd.env.end(), [](const auto& e) {
    return toolchain::is_lookups_only_variable(e.first);
  });
  // The driver's environment (CPATH, SOURCE_DATE_EPOCH...) first: the job's own may override it.
  std::vector<std::pair<std::string, std::optional<std::string>>> sent(key.env.begin(), key.env.end());
  sent.insert(sent.end(), cmd.env.begin(), cmd.env.end());
  for (const auto& [k, v] : sent) {
    if (toolchain::is_lookups_variable(k) || toolchain::is_lookups_only_variable(k) ||
        (lookups_only && k == "LD_PRELOAD"))
      continue;
    if (!v) {
      env.erase(k);
      continue;
    }
    // A preload library of the user's (a profiler's collector a module
    // preloads, perhaps licensed) never leaves this machine.
    if (k == "LD_PRELOAD")
      for (const auto& part : util::split(*v, ':'))
        if (!part.empty() && fs::path(part) != toolchain::preload_library()) {
          why = fmt::format("its LD_PRELOAD names {}, not offload-build's library: a preloaded library of "
                            "yours is never sent to a worker",
                            part);
          return false;
        }
    std::vector<std::string> parts;
    for (const auto& part : util::split(*v, ':')) {
      fs::path p(part);
      if (!p.is_absolute() || is_system(p)) {
        parts.push_back(part);
      } else if (util::is_under(p.lexically_normal(), l.root)) {
        parts.push_back(from_cwd(p, l.cwd));
      } else if (fs::is_regular_file(p)) {
        auto d = digest_of(p);
        if (!d) {
          why = fmt::format("{} cannot be read", p.string());
          return false;
        }
        const std::string in_root = std::string(kSupportDir) + "/" + p.filename().string();
        action.inputs.push_back({in_root, *d, p, false});
        std::string rel = from_cwd(l.root / in_root, l.cwd);
        parts.push_back(rel.find('/') == std::string::npos ? "./" + rel : rel);
      } else {
        why = fmt::format("its environment names {}, outside the input root", p.string());
        return false;
      }
    }
    env[k] = util::join(parts, ":");
  }
  // The rest of the local key, so the engine's cache never answers what the local one would not.
  if (!key.stamp.empty()) env[std::string(kKeyVariable)] = key.stamp;
  // `env -C` itself runs in the directory above: the preload (a path from
  // the compile's directory) is the compiler's alone, set by env.
  if (auto pre = env.find("LD_PRELOAD"); pre != env.end() && l.run_dir != l.cwd.lexically_normal()) {
    action.argv.insert(action.argv.begin() + 3, "LD_PRELOAD=" + pre->second);
    env.erase(pre);
  }
  action.env.assign(env.begin(), env.end());
  return true;
}

// A worker makes the directories of the inputs and above the outputs
// only: the compile's own may hold no input (a host codegen reads its IR
// from the output's side), so an empty file there makes it.
bool ActionBuilder::add_marker(const std::vector<fs::path>& temps, const Layout& l, Built& built, std::string& why) {
  if (l.run_dir == l.cwd.lexically_normal()) return true;
  built.marker = fs::path(temps.back()).concat(".empty");
  auto made = util::write_file_atomic(*built.marker, "");
  auto d = made ? digest_of(*built.marker) : std::nullopt;
  if (!d) {
    why = fmt::format("{} cannot be written", built.marker->string());
    return false;
  }
  built.action.inputs.push_back({from_cwd(l.cwd / kCwdMarker, l.root), *d, *built.marker, false});
  return true;
}

// `arg` with every absolute path under `root` (at its start, after '=', ','
// or ':', or after a flag's letters: -I/x, -Wl,/x) relative to `cwd`.
std::string ActionBuilder::rewrite(const std::string& arg, const fs::path& root, const fs::path& cwd) const {
  const std::string r = root.string();
  std::string out;
  size_t i = 0;
  while (i < arg.size()) {
    const size_t p = arg.find(r, i);
    if (p == std::string::npos) break;
    const size_t after = p + r.size();
    bool starts = p == 0 || arg[p - 1] == '=' || arg[p - 1] == ',' || arg[p - 1] == ':';
    if (!starts && arg[0] == '-') {
      starts = true;
      for (size_t k = 1; k < p; ++k)
        if (!std::isalpha(static_cast<unsigned char>(arg[k])) && arg[k] != '-' && arg[k] != '_') starts = false;
    }
    const bool ends = after == arg.size() || arg[after] == '/' || arg[after] == ',' || arg[after] == ':';
    if (!starts || !ends) {
      out += arg.substr(i, after - i);
      i = after;
      continue;
    }
    size_t stop = arg.find_first_of(",:", after);
    if (stop == std::string::npos) stop = arg.size();
    out += arg.substr(i, p - i);
    out += from_cwd(arg.substr(p, stop - p), cwd);
    i = stop;
  }
  out += arg.substr(i);
  return out;
}

bool ActionBuilder::is_system(const fs::path& p) const {
  for (const auto& d : setup_.system_dirs)
    if (util::is_under(p, d)) return true;
  return false;
}

// The digest of a local file, remembered by path, size and mtime.
std::optional<reapi::Digest> ActionBuilder::digest_of(const fs::path& p) {
  struct stat st{};
  if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const std::string key = fmt::format("{}\n{}\n{}.{}", p.string(), st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  {
    std::lock_guard lock(m_);
    auto it = digests_.find(key);
    if (it != digests_.end()) return it->second;
  }
  auto hash = storage::sha256_file(p);
  if (!hash) return std::nullopt;
  reapi::Digest d{*hash, int64_t(st.st_size)};
  std::lock_guard lock(m_);
  digests_[key] = d;
  return d;
}

}  // namespace ob::exec
