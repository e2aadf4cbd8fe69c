// Launcher mode: one offload compile split into device passes, package and
// host pass, run through the executor with the kernel cache and the make
// jobserver, leaving exactly the object (and depfile) the compiler would.
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <utility>

#include <fmt/core.h>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/cache/storage.hpp"
#include "offload_build/cli/launcher.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/exec/interrupt.hpp"
#include "offload_build/exec/jobserver.hpp"
#include "offload_build/exec/subprocess.hpp"
#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/report/build_report.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/strings.hpp"
#include "options.hpp"

namespace ob::cli {

std::optional<fs::path> resolve_program(const std::string& name, const fs::path& cwd) {
  if (name.find('/') != std::string::npos) {
    fs::path p = fs::path(name).is_absolute() ? fs::path(name) : cwd / name;
    std::error_code ec;
    return fs::exists(p, ec) ? std::optional(p) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
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
  CollectingRunner() : inner_(make_process_runner(true)) {}
  Result<void> start(JobId job, const Command& cmd) override { return inner_->start(job, cmd); }
  std::optional<Completion> wait_any() override {
    auto c = inner_->wait_any();
    if (c) output[c->job] = c->output;  // the executor also gets it, for the cache
    return c;
  }
  void stop_all() override { inner_->stop_all(); }
  size_t running() const override { return inner_->running(); }
  std::map<JobId, std::string> output;

 private:
  std::unique_ptr<CommandRunner> inner_;
};

}  // namespace

struct Recording {
  report::BuildRecorder recorder;
  std::map<JobId, cache::JobCache::MissNote> misses;
};

std::optional<int> run_plan(const Plan& plan, const GlobalOptions& o,
                            exec::JobserverSetup& jobserver, Recording* record) {
  if (o.dry_run) {
    std::cout << dry_run_script(plan) << std::flush;
    return exit_code::ok;
  }
  CollectingRunner runner;
  ExecOptions exec_options;
  exec_options.parallelism = effective_jobs(o);
  Progress silent;  // the passes' output is printed below, in clang's order
  exec_options.observer = record ? &record->recorder : &silent;
  if (jobserver.serial) exec_options.parallelism = 1;
  if (jobserver.jobserver) {
    exec_options.try_acquire_slot = [&] { return jobserver.jobserver->try_acquire(); };
    exec_options.release_slot = [&] { jobserver.jobserver->release(); };
  }

  std::optional<cache::Storage> storage;
  std::optional<cache::LayeredStorage> layers;
  std::optional<cache::JobCache> job_cache;
  if (!o.no_cache) {
    storage.emplace(cache_dir_for(o, std::nullopt));
    storage->warn_if_unwritable();
    // A bad remote URL does not stop a compile: it is said, and not used.
    auto remotes = cache::configured_remotes(o.remote_storage, {});
    if (!remotes)
      std::cerr << "offload-build: warning: " << remotes.error().message
                << "; compiling without remote storage\n";
    layers.emplace(*storage, remotes ? std::move(*remotes) : std::vector<cache::RemoteConfig>{});
    cache::JobCacheOptions cache_options{.explain = o.explain ? &std::cerr : nullptr, .replay = {}};
    cache_options.keep_build_state = false;  // many compiles share one object directory
    // A hit prints the warnings its pass printed when it ran, in their place.
    cache_options.replay = [&](const Job& job, std::string_view text) {
      runner.output[job.id] = std::string(text);
    };
    job_cache.emplace(*layers, plan, cache_options);
    exec_options.serve = [&](const Job& job, const std::vector<fs::path>& temps) {
      return job_cache->serve(job, temps);
    };
    exec_options.after_run = [&](const Job& job, const std::vector<fs::path>& temps,
                                 const std::optional<fs::path>& depfile, std::string_view output) {
      job_cache->store(job, temps, depfile, output);
    };
  }
  auto summary = execute(plan, runner, exec_options);
  if (job_cache) job_cache->finish();
  if (job_cache && record) record->misses = job_cache->misses();
  std::error_code ec;
  fs::remove_all(plan.build_dir, ec);  // device objects and package: the cache has them
  if (!summary && summary.error().code == exit_code::interrupted) return exit_code::interrupted;
  if (!summary && !o.verbose) return std::nullopt;
  // The host parse's diagnostics first, then each device pass's: clang's
  // order (two parse: the host pass, the last job, parses the host side).
  const JobId host = plan.jobs.front().kind == JobKind::HostIr ? plan.jobs.front().id
                                                                 : plan.jobs.back().id;
  std::cerr << runner.output[host];
  for (const auto& [job, text] : runner.output)
    if (job != host) std::cerr << text;
  if (!summary) {
    std::cerr << "offload-build: " << summary.error().message << '\n';
    return std::nullopt;
  }
  return exit_code::ok;
}

namespace {

// Where compilers' answers are remembered: next to a private, trusted cache
// only (a listing planted there would run).
std::optional<fs::path> trusted_probe_memo(const GlobalOptions& o) {
  if (o.no_cache) return std::nullopt;
  const cache::Storage storage(cache_dir_for(o, std::nullopt));
  if (!storage.trusted() || storage.shared()) return std::nullopt;
  return storage.dir() / "probes";
}

// Kernel names from each file's place (relative to the base directory, if
// any) and the project's namespace (--kernel-namespace).
void use_stable_kernel_names(Plan& plan, const fs::path& compiler, const fs::path& base,
                             const std::optional<fs::path>& memo, const GlobalOptions& o) {
  plan.base_dir = base;
  auto names = stable_names_for(compiler, base, memo);
  if (!names) return;
  std::string ns = o.kernel_namespace.value_or("");
  if (const char* env = std::getenv("OFFLOAD_BUILD_KERNEL_NAMESPACE"); !o.kernel_namespace && env)
    ns = env;
  const std::string salt = kernel_salt(ns);
  use_stable_names(plan, *names, salt);
  if (o.verbose && !names->keyed) std::cerr << "offload-build: " << names->fallback << '\n';
}

}  // namespace

int split_compile(const std::vector<std::string>& command, const GlobalOptions& o, Unchanged& why) {
  using namespace clang_cli::unchanged;
  auto pass = [&](std::string reason, const char* code) {
    why = {std::move(reason), code};
    return -1;
  };
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec) return pass("no current directory", kPaths);
  const auto compiler = resolve_program(command.front(), cwd);
  if (!compiler) return pass(command.front() + " not found", kCompiler);
  if (!clang_cli::is_clang(command.front()) && !clang_cli::is_clang(fs::canonical(*compiler, ec)))
    return pass(command.front() + " is not clang", kCompiler);
  const auto expanded = clang_cli::expand_response_files(command, cwd);
  if (!expanded) return pass("a response file cannot be read", kPaths);
  const fs::path base = base_dir_for(o, std::nullopt);
  auto parsed = clang_cli::parse(clang_cli::relative_to_base(*expanded, base, cwd));
  if (!parsed.compile) return pass(parsed.pass_reason, parsed.pass_code.c_str());
  auto& req = *parsed.compile;
  const auto toolchain = toolchain_of(*compiler);
  if (!toolchain)
    return pass("no LLVM installation (llvm-offload-binary) next to " + command.front(), kCompiler);
  const auto memo = trusted_probe_memo(o);  // compilers' answers, next to the cache
  if (!resolve_natives(req, *toolchain, memo))
    return pass("no GPU found for the native offload arch: the compiler reports it", kNoGpu);
  const fs::path output = (cwd / req.output_arg()).lexically_normal();
  if (!fs::is_directory(output.parent_path(), ec))
    return pass("the output's directory does not exist", kPaths);
  if (auto dep = requested_depfile(req, cwd); dep && !fs::is_directory(dep->parent_path(), ec))
    return pass("the depfile's directory does not exist", kPaths);
  if (req.opt_record && !fs::is_directory((cwd / *req.opt_record).lexically_normal().parent_path(), ec))
    return pass("the optimization record's directory does not exist", kPaths);

  // The driver's own device commands (single parse), remembered next to the cache.
  std::unique_ptr<DriverProbe> probe;
  if (!o.two_parse) probe = make_driver_probe(*toolchain, memo);
  else if (req.save_temps) return pass("-save-temps with two parses (the driver's listing is not asked for)", kOption);
  // Before any descriptor of ours is open: make's closed jobserver
  // descriptors must not be mistaken for the signal self-pipe's.
  auto jobserver = exec::jobserver_from_environment();
  exec::install_signal_handlers();  // Ctrl-C while probing stops cleanly
  Plan plan;
  if (req.save_temps) {
    // The driver's own commands, each a job, so every temp is clang's.
    auto listing = probe->list(*expanded, cwd);
    auto listed = listing ? make_listing_plan(*listing, req, cwd) : Result<Plan>(listing.error());
    if (exec::interrupted()) return exit_code::interrupted;
    if (!listed) return pass("-save-temps: " + listed.error().message, kOption);
    plan = std::move(*listed);
    if (o.verbose)
      std::cerr << fmt::format("offload-build: splitting -save-temps into the driver's {} commands\n",
                               plan.jobs.size());
  } else {
    plan = make_launcher_plan(req, *toolchain, cwd, probe.get(), probe_jobs(o, jobserver));
    if (exec::interrupted()) return exit_code::interrupted;
    use_stable_kernel_names(plan, *compiler, base, memo, o);
    const bool single = plan.jobs.front().kind == JobKind::HostIr;
    if (o.verbose)
      std::cerr << fmt::format("offload-build: splitting into {}{} device passes, package, host {}\n",
                               single ? "one host parse, " : "", req.targets.size(),
                               single ? "codegen" : "pass");
  }
  if (o.dry_run) {
    std::cout << dry_run_script(plan) << std::flush;
    return exit_code::ok;
  }
  std::optional<Recording> record;
  if (o.report) record.emplace();
  const auto started = std::chrono::system_clock::now();
  if (auto code = run_plan(plan, o, jobserver, record ? &*record : nullptr)) {
    if (record) {
      report::ReportData d;
      d.project = fs::path(req.output_arg()).filename().string();
      d.started = started;
      d.duration_s = record->recorder.elapsed();
      d.result = *code == 0 ? BuildResult::Ok : BuildResult::Interrupted;
      d.plan = &plan;
      d.recorder = &record->recorder;
      d.cache_enabled = !o.no_cache;
      if (!o.no_cache) d.cache_dir = cache_dir_for(o, std::nullopt);
      d.miss_reason = [&](const Job& job) -> std::optional<report::MissReason> {
        auto it = record->misses.find(job.id);
        if (it == record->misses.end()) return std::nullopt;
        return report::MissReason{it->second.reason, it->second.detail};
      };
      write_launcher_report(o, command, report::make_report(d), nullptr, *code);
    }
    return *code;
  }
  return pass("a split pass failed: the compiler shows its own diagnostics", kFailed);
}

}  // namespace ob::cli
