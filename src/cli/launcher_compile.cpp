// Launcher mode: one offload compile split into device passes, package and
// host pass, run through the executor with the kernel cache and the make
// jobserver, leaving exactly the object (and depfile) the compiler would.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <iostream>
#include <map>
#include <set>
#include <optional>
#include <utility>

#include <fmt/core.h>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/cache/whole_compile.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/cli/launcher.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/cli/build_context.hpp"
#include "offload_build/process/jobserver.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/report/build_report.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/strings.hpp"
#include "build_pictures.hpp"
#include "options.hpp"

namespace ob::cli {

std::optional<fs::path> resolve_program(const std::string& name, const fs::path& cwd) {
  if (name.find('/') != std::string::npos) {
    fs::path p = fs::path(name).is_absolute() ? fs::path(name) : cwd / name;
    std::error_code ec;
    return fs::exists(p, ec) ? std::optional(p) : std::nullopt;
  }
  const char* path = config::env_or_null("PATH");
  return path ? find_in_path(name, path) : std::nullopt;
}

// The LLVM installation the compiler is part of (/usr/bin/clang++-22 is
// /usr/lib/llvm-22/bin/clang): its llvm-offload-binary packages the images.
std::optional<Toolchain> toolchain_of(const fs::path& compiler) {
  std::error_code ec;
  const fs::path real = fs::canonical(compiler, ec);
  if (ec) return std::nullopt;
  auto tc = toolchain_at(real.parent_path().parent_path());
  if (!tc) return std::nullopt;
  return *tc;
}

namespace {

// clang's `native`: the GPUs offload-arch finds on this machine (asked once,
// remembered in the cache's probes/). false when a native target found none.
bool resolve_natives(clang_cli::CompileRequest& req, const Toolchain& tc,
                     const std::optional<fs::path>& memo) {
  if (req.native.empty()) return true;
  std::vector<Target> found;
  for (const auto& arch : system_gpu_archs(tc, memo).value_or(std::vector<std::string>{})) {
    auto t = resolve_target(arch);
    if (t && t->is_gpu()) found.push_back(*t);
  }
  for (const auto& wanted : req.native) {
    bool any = false;
    for (const auto& t : found) {
      if (!wanted.empty() && t.triple != wanted) continue;
      any = true;
      if (std::find(req.targets.begin(), req.targets.end(), t) == req.targets.end())
        req.targets.push_back(t);
    }
    if (!any) return false;
  }
  return true;
}

// Keeps what each pass printed (the runner buffers it) instead of letting the
// executor print it: shown after success, replaced by the compiler's own
// diagnostics after a failure.
class CollectingRunner final : public CommandRunner {
 public:
  explicit CollectingRunner(std::unique_ptr<CommandRunner> inner)
      : inner_(inner ? std::move(inner) : make_process_runner(true)) {}
  Result<void> start(const JobView& job) override { return inner_->start(job); }
  std::optional<Completion> wait_any() override {
    auto c = inner_->wait_any();
    if (c) output[c->job] = c->output;  // the executor also gets it, for the cache
    return c;
  }
  void wake() override { inner_->wake(); }
  void stop_all() override { inner_->stop_all(); }
  size_t running() const override { return inner_->running(); }
  RemoteRunner* remote() override { return inner_->remote(); }
  std::map<JobId, std::string> output;

 private:
  std::unique_ptr<CommandRunner> inner_;
};

// `text` without the lines of clang's driver diagnostics (`clang-22: warning:
// argument unused during compilation: '-L/x'`) already in `said`, which it
// adds its own to. Every driver command of a split compile (host parse, host
// codegen) says them again; the compiler alone says each once.
std::string without_repeated_driver_diagnostics(std::string_view text, const std::string& driver,
                                                std::set<std::string>& said) {
  std::string out;
  const std::string prefix = driver + ": ";
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size() - 1) + 1;
    const std::string line(text.substr(at, end - at));
    at = end;
    const bool diagnostic =
        util::starts_with(line, prefix) &&
        (util::starts_with(line.substr(prefix.size()), "warning: ") ||
         util::starts_with(line.substr(prefix.size()), "error: ") ||
         util::starts_with(line.substr(prefix.size()), "note: "));
    if (!diagnostic || said.insert(line).second) out += line;
  }
  return out;
}

std::string in_clang_order(const Plan& plan, const std::map<JobId, std::string>& output) {
  // Per translation unit (in plan order), the host parse's output first, then
  // every other job's: clang's order (single parse: the host-IR job; else the
  // unit's last job, the host pass, which parses the host side).
  std::vector<size_t> units;
  for (const auto& job : plan.jobs)
    if (std::find(units.begin(), units.end(), job.unit) == units.end()) units.push_back(job.unit);
  std::string text;
  std::set<std::string> said;
  auto print = [&](const Job& job) {
    auto it = output.find(job.id);
    if (it != output.end())
      text += without_repeated_driver_diagnostics(it->second, fs::path(job.argv.front()).filename(), said);
  };
  for (size_t unit : units) {
    std::optional<JobId> host;
    for (const auto& job : plan.jobs) {
      if (job.unit != unit) continue;
      if (!host || plan.jobs[*host].kind != JobKind::HostIr) host = job.id;
    }
    print(plan.jobs[*host]);
    for (const auto& job : plan.jobs)
      if (job.unit == unit && job.id != *host) print(job);
  }
  return text;
}

}  // namespace

struct Recording {
  report::BuildRecorder recorder;
  std::map<JobId, cache::JobCache::MissNote> misses;
  RemoteNotes remote;  // where each job ran, under remote execution
};

std::optional<int> run_plan(const Plan& plan, BuildContext& context, Recording* record,
                            cache::WholeCompile* whole) {
  const Request& o = context.options();
  if (o.dry_run) {
    std::cout << dry_run_script(plan) << std::flush;
    return exit_code::ok;
  }
  if (auto opened = context.open_cache({}, RemoteErrors::WarnOncePerBuild); !opened)
    return std::nullopt;  // cannot happen: a launcher's remote errors are warnings
  // With remote_execution: the jobs that go run on the engine (opened on the
  // first of them: a compile whose jobs all hit loads no client).
  auto remote = context.remote_runner(plan, BuildContext::RemoteFor::LauncherCompile);
  if (!remote) {
    std::cerr << "offload-build: " << remote.error().message << '\n';
    return std::nullopt;
  }
  CollectingRunner runner(std::move(*remote));
  Progress silent;  // the passes' output is printed below, in clang's order
  BuildContext::RunOptions run;
  run.observer = record ? &record->recorder : &silent;
  run.cache.explain = o.config.flag("explain") ? &std::cerr : nullptr;
  run.cache.keep_build_state = false;  // many compiles share one object directory
  // A hit prints the warnings its pass printed when it ran, in their place.
  run.cache.replay = [&](const Job& job, std::string_view text) { runner.output[job.id] = std::string(text); };
  run.cache.collect_reads = whole != nullptr;
  auto ran = context.run_plan(plan, runner, std::move(run));
  auto& summary = ran.summary;
  if (record) record->misses = std::move(ran.misses);
  if (const RemoteRunner* remote_runner = runner.remote()) {
    auto notes = remote_notes(*remote_runner, plan);
    if (o.config.flag("explain")) explain_remote(plan, notes, std::cerr);
    if (record) record->remote = std::move(notes);
  }
  std::error_code ec;
  fs::remove_all(plan.build_dir, ec);  // device objects and package: the cache has them
  if (!summary && summary.error().code == exit_code::interrupted) return exit_code::interrupted;
  if (!summary && !o.config.flag("verbose")) return std::nullopt;
  const std::string said = in_clang_order(plan, runner.output);
  std::cerr << said;
  if (!summary) {
    std::cerr << "offload-build: " << summary.error().message << '\n';
    return std::nullopt;
  }
  // Every compile named its kernels from stable names: keyed without inodes.
  const bool stable = std::all_of(plan.jobs.begin(), plan.jobs.end(),
                                  [](const Job& j) { return !j.inode_sensitive || j.stable_names; });
  if (whole && ran.reads && stable) whole->store(std::move(*ran.reads), said, plan.jobs.size());
  return exit_code::ok;
}

void use_stable_kernel_names(Plan& plan, const LaunchSetup& setup, const std::optional<fs::path>& memo,
                             const Request& o) {
  plan.base_dirs = setup.bases;
  plan.name_anchor = setup.anchor;
  // A fault (the library out of reach, or not loaded): a warning once per build.
  auto warn_once = [&o](const std::string& why) {
    if (o.config.flag("no_cache") || first_in_build(cache_dir_for(o.config, std::nullopt), "stable-names"))
      std::cerr << "offload-build: warning: " << why << '\n';
  };
  if (o.config.flag("stable_names")) {
    auto names = stable_names_for(setup.compiler, NameRoots{setup.bases, setup.anchor}, memo);
    if (!names) {
      if (std::string why = stable_names_unavailable(); !why.empty()) warn_once(why);
    } else {
      use_stable_names(plan, *names, kernel_salt(o.config.text("kernel_namespace")));
      if (names->warn()) warn_once(names->fallback);
      else if (o.config.flag("verbose") && !names->keyed) std::cerr << "offload-build: " << names->fallback << '\n';
    }
  }
  // For the job cache, which checks them on every hit (none with --no-cache:
  // nothing would read the records), with stable names off too: the library records only.
  if (!o.config.flag("no_cache")) record_lookups(plan, preload_library());
}

void open_launcher_cache(BuildContext& context) {
  // Remote errors are warnings here; --dry-run only reads the probe memo.
  if (!context.options().dry_run) (void)context.open_cache({}, RemoteErrors::WarnOncePerBuild);
}

clang_cli::DriverEnvironment driver_environment(const fs::path& compiler) {
  clang_cli::DriverEnvironment env;
  if (const char* v = config::env_or_null("CCC_OVERRIDE_OPTIONS")) env.override_options = v;
  const char* no_default = config::env_or_null("CLANG_NO_DEFAULT_CONFIG");
  env.no_default_config = no_default && *no_default;
  std::error_code ec;
  env.binary_dirs.push_back(compiler.parent_path());
  const fs::path real = fs::canonical(compiler, ec);
  if (!ec && real.parent_path() != compiler.parent_path()) env.binary_dirs.push_back(real.parent_path());
  return env;
}

std::optional<LaunchSetup> launch_setup(const std::vector<std::string>& command, const Request& o,
                                        Unchanged& why) {
  using namespace clang_cli::unchanged;
  auto pass = [&](std::string reason, const char* code) -> std::optional<LaunchSetup> {
    why = {std::move(reason), code, {}};
    return std::nullopt;
  };
  LaunchSetup s;
  std::error_code ec;
  s.cwd = fs::current_path(ec);
  if (ec) return pass("no current directory", kPaths);
  const auto compiler = resolve_program(command.front(), s.cwd);
  if (!compiler) return pass(command.front() + " not found", kCompiler);
  s.frontend = frontend::recognize(command.front(), *compiler);
  if (!s.frontend) return pass(command.front() + " is not a compiler offload-build splits (clang, flang)", kCompiler);
  s.compiler = *compiler;
  // The command line the driver works on: response and configuration files read.
  std::string problem;
  auto driven = s.frontend->driver_argv(command, s.cwd, driver_environment(s.compiler), &problem);
  if (!driven) return pass(problem, kPaths);
  if (!driven->doubt.empty()) {
    why = {driven->doubt, kOption, "clang configuration"};
    return std::nullopt;
  }
  s.expanded = std::move(driven->argv);
  std::tie(s.bases, s.anchor) = launcher_roots(o, s.cwd);
  s.argv = s.expanded;
  for (const auto& base : s.bases) s.argv = s.frontend->relative_to_base(std::move(s.argv), base, s.cwd);
  return s;
}

bool flag_files_usable(const clang_cli::CompileRequest& req, const fs::path& cwd, Unchanged& why) {
  using namespace clang_cli::unchanged;
  for (const auto& f : req.keyed_files) {
    const fs::path p = (cwd / f).lexically_normal();
    std::error_code ec;
    if (f.empty() || !fs::is_regular_file(p, ec) || access(p.c_str(), R_OK) != 0) {
      why = {"an option names " + (f.empty() ? std::string("no file") : f) +
                 ", which is not a readable file (the compiler reports it)",
             kPaths, {}};
      return false;
    }
  }
  for (const auto& f : req.maybe_files) {
    std::error_code ec;
    if (fs::exists(cwd / f, ec)) {
      why = {"an -mllvm option names the file " + f + ", which is not keyed", kOption, "-mllvm"};
      return false;
    }
  }
  return true;
}

bool ready_to_split(clang_cli::CompileRequest& req, const LaunchSetup& s, const Toolchain& tc,
                    const std::optional<fs::path>& memo, bool check_output, Unchanged& why) {
  using namespace clang_cli::unchanged;
  auto pass = [&](std::string reason, const char* code) {
    why = {std::move(reason), code, {}};
    return false;
  };
  std::error_code ec;
  if (!resolve_natives(req, tc, memo))
    return pass("no GPU found for the native offload arch: the compiler reports it", kNoGpu);
  const fs::path output = (s.cwd / req.output_arg()).lexically_normal();
  if (check_output && !fs::is_directory(output.parent_path(), ec))
    return pass("the output's directory does not exist", kPaths);
  if (auto dep = requested_depfile(req, s.cwd); dep && !fs::is_directory(dep->parent_path(), ec))
    return pass("the depfile's directory does not exist", kPaths);
  if (req.opt_record && !fs::is_directory((s.cwd / *req.opt_record).lexically_normal().parent_path(), ec))
    return pass("the optimization record's directory does not exist", kPaths);
  return true;
}

std::optional<int> run_and_report(const Plan& plan, BuildContext& context,
                                  const std::vector<std::string>& command, const std::string& project,
                                  cache::WholeCompile* whole) {
  const Request& o = context.options();
  if (o.dry_run) {
    std::cout << dry_run_script(plan) << std::flush;
    return exit_code::ok;
  }
  std::optional<Recording> record;
  if (o.report || wants_pictures(o)) record.emplace();
  const auto started = std::chrono::system_clock::now();
  auto code = run_plan(plan, context, record ? &*record : nullptr, whole);
  if (code && record && wants_pictures(o)) {  // the trace: added to, one file for a whole make/ninja run
    auto timeline = report::timeline_of(plan, record->recorder, project, "launcher", started,
                                        *code == 0 ? BuildResult::Ok : BuildResult::Interrupted);
    mark_remote(timeline, record->remote);
    write_pictures(o, timeline, plan.program.string() + ".timings.html", true);
  }
  if (code && record && o.report) {
    report::ReportData d;
    d.project = project;
    d.started = started;
    d.duration_s = record->recorder.elapsed();
    d.result = *code == 0 ? BuildResult::Ok : BuildResult::Interrupted;
    d.plan = &plan;
    d.recorder = &record->recorder;
    d.cache_enabled = !o.config.flag("no_cache");
    if (!o.config.flag("no_cache")) d.cache_dir = context.cache_dir();
    d.miss_reason = [&](const Job& job) -> std::optional<report::MissReason> {
      auto it = record->misses.find(job.id);
      if (it == record->misses.end()) return std::nullopt;
      return report::MissReason{it->second.reason, it->second.detail};
    };
    d.execution = remote_execution_of(record->remote);
    write_launcher_report(o, command, report::make_report(d), nullptr, *code);
  }
  return code;
}

namespace {

// What shapes a launcher compile's split besides its command line, source
// and the files it reads (the whole entry's Job::key_facts).
std::vector<std::string> split_facts(const Request& o) {
  const config::Config& c = o.config;
  const char* path = config::env_or_null("PATH");  // finds ptxas, offload-arch
  return {fmt::format("two_parse={}", c.flag("two_parse")),
          "kernel_namespace=" + o.config.text("kernel_namespace"),
          "stable_names=" + c.text("stable_names"), "system_dirs=" + c.text("system_dirs"),
          std::string("PATH=") + (path ? path : "")};
}

// A launcher compile served whole (cache/whole_compile.hpp) when nothing asks
// to see its jobs; nullptr when it cannot be, or the cache is off.
std::unique_ptr<cache::WholeCompile> whole_compile(const clang_cli::CompileRequest& req, const LaunchSetup& s,
                                                   const Request& o, BuildContext& context) {
  if (!s.frontend->lists_reads() || o.dry_run || o.config.flag("no_cache") || o.config.flag("explain") || o.config.flag("verbose") || o.report || wants_pictures(o) || req.save_temps ||
      !req.native.empty())
    return nullptr;
  std::error_code ec;
  const fs::path output = (s.cwd / req.output_arg()).lexically_normal();
  if (!fs::is_directory(output.parent_path(), ec)) return nullptr;
  if (auto dep = requested_depfile(req, s.cwd); dep && !fs::is_directory(dep->parent_path(), ec)) return nullptr;
  if (!context.layers()) return nullptr;
  std::vector<std::string> argv = s.argv;
  argv.front() = s.compiler.string();
  Plan plan = make_whole_compile_plan(req, std::move(argv), s.cwd, split_facts(o),
                                      {fs::read_symlink("/proc/self/exe", ec)});
  plan.base_dirs = s.bases;
  plan.name_anchor = s.anchor;
  return std::make_unique<cache::WholeCompile>(*context.layers(), std::move(plan),
                                               cache::system_dirs(context.config().text("system_dirs")));
}

}  // namespace

int split_compile(const std::vector<std::string>& command, const Request& o, Unchanged& why) {
  using namespace clang_cli::unchanged;
  auto pass = [&](std::string reason, const char* code, std::string option = {}) {
    why = {std::move(reason), code, std::move(option)};
    return -1;
  };
  auto setup = launch_setup(command, o, why);
  if (!setup) return -1;
  const fs::path& cwd = setup->cwd;
  auto parsed = setup->frontend->parse(setup->argv);
  if (!parsed.compile) return pass(parsed.pass_reason, parsed.pass_code.c_str(), parsed.option);
  auto& req = *parsed.compile;
  if (!flag_files_usable(req, cwd, why)) return -1;
  // Before any descriptor of ours is open: make's closed jobserver
  // descriptors must not be mistaken for the cache's or the signal self-pipe's.
  BuildContext context(o);
  open_launcher_cache(context);
  // The whole compile from the cache: nothing else to do.
  auto whole = whole_compile(req, *setup, o, context);
  if (whole)
    if (auto said = whole->serve()) {
      std::cerr << *said;
      return exit_code::ok;
    }
  const auto toolchain = toolchain_of(setup->compiler);
  if (!toolchain)
    return pass("no LLVM installation (llvm-offload-binary) next to " + command.front(), kCompiler);
  const auto memo = context.probe_memo();  // compilers' answers, next to the cache
  if (!ready_to_split(req, *setup, *toolchain, memo, true, why)) return -1;

  // The driver's own device commands (single parse), remembered next to the cache.
  std::unique_ptr<DriverProbe> probe;
  if (!o.config.flag("two_parse")) probe = make_driver_probe(*toolchain, memo);
  else if (req.save_temps) return pass("-save-temps with two parses (the driver's listing is not asked for)", kOption, "-save-temps");
  exec::install_signal_handlers();  // Ctrl-C while probing stops cleanly
  Plan plan;
  if (req.save_temps) {
    // The driver's own commands, each a job, so every temp is clang's.
    auto listing = probe->list(setup->expanded, cwd);
    auto listed = listing ? make_listing_plan(*listing, req, cwd) : Result<Plan>(listing.error());
    if (exec::interrupted()) return exit_code::interrupted;
    if (!listed) return pass("-save-temps: " + listed.error().message, kOption, "-save-temps");
    plan = std::move(*listed);
    if (o.config.flag("verbose"))
      std::cerr << fmt::format("offload-build: splitting -save-temps into the driver's {} commands\n",
                               plan.jobs.size());
  } else {
    plan = make_launcher_plan(req, *toolchain, cwd, probe.get(), probe_jobs(o.config, context.jobserver()));
    if (exec::interrupted()) return exit_code::interrupted;
    // Stable kernel names and lookup records ride on a compile that lists
    // what it read (the library's probe and records are clang's): flang's
    // passes keep inode-keyed names.
    if (setup->frontend->lists_reads()) use_stable_kernel_names(plan, *setup, memo, o);
    const bool single = plan.jobs.front().kind == JobKind::HostIr;
    if (o.config.flag("verbose"))
      std::cerr << fmt::format("offload-build: splitting into {}{} device pass{}, package, host {}\n",
                               single ? "one host parse, " : "", req.targets.size(),
                               req.targets.size() == 1 ? "" : "es", single ? "codegen" : "pass");
  }
  if (auto code = run_and_report(plan, context, command, fs::path(req.output_arg()).filename().string(),
                                 req.save_temps ? nullptr : whole.get()))
    return *code;
  return pass("a split pass failed: the compiler shows its own diagnostics", kFailed);
}

}  // namespace ob::cli
