// The session's cache, engine and runs (session.hpp): the local cache and
// its remotes opened once, the engine shared by the cache's layer and the
// remote runner, the one run_plan.
#include "offload_build/run/session.hpp"

#include "offload_build/storage/hash.hpp"

#include <iostream>
#include <thread>

#include "offload_build/cache/depfile.hpp"
#include "offload_build/cache/job_key.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/exec/remote/link.hpp"
#include "offload_build/exec/remote/layer.hpp"
#include "offload_build/exec/remote/working_set.hpp"
#include "offload_build/util/strings.hpp"


namespace ob::run {

storage::Storage local_cache(const config::Config& c) {
  return storage::Storage(cache_dir_for(c, std::nullopt), max_size_for(c, std::nullopt), storage::Trust::from_config(c));
}

Session::Session(const Request& options)
    : options_(options), jobserver_(process::jobserver_from_environment()) {}

Session::~Session() {
  if (opener_.joinable()) opener_.join();
}

void Session::open_engine_early() {
  if (opener_.joinable() || config().text("remote_execution").empty()) return;
  auto link = engine_link(false);
  if (!link) return;  // a bad URL: remote_runner says it
  // The working set of a cache that never had it (a fresh checkout, a new
  // machine) is fetched while the build plans too.
  std::shared_ptr<exec::WorkingSet> set = working_set_ && working_set_->eager() ? working_set_ : nullptr;
  opener_ = std::thread([link = *link, set] {
    (void)link->client();
    if (set) set->load();
  });
}

Result<void> Session::open_cache(const Policy& policy, const ProjectSettings& project) {
  const RemoteErrors remote_errors = policy.remote_errors;
  if (opened_) return {};
  opened_ = true;
  cache_dir_ = cache_dir_for(config(), project.cache_dir);
  if (config().flag("no_cache")) return {};
  storage_.emplace(cache_dir_, max_size_for(config(), project.max_size), storage::Trust::from_config(config()));
  if (remote_errors == RemoteErrors::LocalOnly) {
    layers_.emplace(*storage_, std::vector<storage::RemoteConfig>{}, storage::LayeredOptions{});
    return {};
  }
  auto remotes = storage::configured_remotes(config(), project.remote_storage);
  if (!remotes) {
    if (remote_errors == RemoteErrors::Fail) return remotes.error();
    // A bad remote URL does not stop a compile: it is said, and not used.
    std::cerr << "offload-build: warning: " << remotes.error().message
              << "; compiling without remote storage\n";
    remotes = std::vector<storage::RemoteConfig>{};
  }
  if (config().flag("verbose") && remote_errors == RemoteErrors::Fail)
    for (const auto& r : *remotes) std::cerr << "offload-build: remote storage " << r.display << '\n';
  storage::LayeredOptions layered;
  add_engine_layer(*remotes, layered, remote_errors == RemoteErrors::WarnOncePerBuild);
  if (remote_errors == RemoteErrors::WarnOncePerBuild)
    layered.first_in_build = [dir = storage_->dir()](const std::string& code) {
      return first_in_build(dir, "remote " + code);
    };
  layers_.emplace(*storage_, std::move(*remotes), std::move(layered));
  return {};
}

// With remote_execution set, its action cache asked (engine_cache use or
// trusted) and engine_storage: the engine as the last remote (exec/remote/layer.hpp). A bad
// URL adds none: the remote runner says it.
void Session::add_engine_layer(std::vector<storage::RemoteConfig>& remotes, storage::LayeredOptions& layered,
                                    bool launcher) {
  if (!engine_layer_on()) return;
  auto link = engine_link(launcher);
  if (!link) return;
  remotes.push_back(exec::engine_layer_config((*link)->config(), storage_ && !storage_->signing_key().empty()));
  if (!launcher && working_set_identity_ && storage_) {
    working_set_ = std::make_shared<exec::WorkingSet>(*link, exec::working_set_name(working_set_identity_(), storage_->signing_key()),
                                                      storage_->dir() / "working-sets");
    working_set_identity_ = nullptr;  // asked once; it may refer to the caller's manifest
    layered.note_used = true;
  }
  // The layer is one more scheme of this build's backend registry.
  auto registry = std::make_shared<storage::RemoteBackendRegistry>(storage::RemoteBackendRegistry::builtin());
  registry->add({exec::engine_layer_scheme(*link, working_set_)});
  layered.factory = [registry](const storage::RemoteConfig& c) { return storage::make_remote_backend(c, *registry); };
}

bool Session::engine_layer_on() const {
  const auto use = engine_cache();
  return !config().text("remote_execution").empty() && config().flag("engine_storage") && !config().flag("no_cache") &&
         (use == exec::EngineCache::Use || use == exec::EngineCache::Trusted);
}

Result<std::shared_ptr<exec::EngineLink>> Session::engine_link(bool launcher) {
  if (engine_) return engine_;
  auto engine = exec::parse_remote_execution(options_.config.text("remote_execution"));
  if (!engine) return engine.error();
  engine->engine_cache = engine_cache();
  if (engine->jobs == 0) engine->jobs = 4 * std::max<size_t>(1, std::thread::hardware_concurrency());
  // A launcher compile: warnings and compiler checks once per make/ninja run
  // (remembered next to the cache).
  if (launcher && storage_) notes_ = storage_->dir();
  const std::string display = engine->display;
  exec::EngineLink::Setup link{std::move(*engine), engine_warn(display), engine_down_memo(display)};
  // The engine's time budget is the make run's, not each compile's.
  if (notes_) link.config.endpoint.budget_file = build_file(*notes_, "remote-execution budget " + display);
  engine_ = std::make_shared<exec::EngineLink>(std::move(link));
  return engine_;
}

// The first compile that finds the engine down spares the rest of the make
// run (launcher mode); unset otherwise: this process only.
std::function<bool(bool)> Session::engine_down_memo(const std::string& display) const {
  if (!notes_) return {};
  return [dir = *notes_, display](bool mark) {
    const std::string code = "remote-execution down " + display;
    return mark ? first_in_build(dir, code) : said_in_build(dir, code);
  };
}

std::function<void(const std::string&)> Session::engine_warn(const std::string& display) const {
  return [notes = notes_, display](const std::string& line) {
    const bool base = line.find("outside base_dir") != std::string::npos;  // else an engine failure
    if (notes && !first_in_build(*notes, "remote-execution " + display + (base ? " base_dir" : ""))) return;
    const std::string text = "offload-build: warning: " + line + "\n";
    std::cerr << text << std::flush;
  };
}

std::optional<fs::path> Session::probe_memo() const {
  if (config().flag("no_cache")) return std::nullopt;
  if (!storage_) return probe_memo_of(config());
  if (!storage_->trusted() || storage_->shared()) return std::nullopt;
  return storage_->dir() / "probes";
}

std::optional<fs::path> Session::probe_memo_of(const config::Config& c) {
  if (c.flag("no_cache")) return std::nullopt;
  const storage::Storage storage = local_cache(c);
  if (!storage.trusted() || storage.shared()) return std::nullopt;
  return storage.dir() / "probes";
}

exec::EngineCache Session::engine_cache() const {
  return exec::parse_engine_cache(config().text("engine_cache")).value_or(exec::EngineCache::Use);
}

void Session::limit_parallelism(exec::ExecOptions& options) {
  options.parallelism = effective_jobs(config());
  // Under make -jN: one token per job beyond the first (process/jobserver.hpp).
  if (jobserver_.serial) options.parallelism = 1;
  if (jobserver_.jobserver) {
    options.try_acquire_slot = [this] { return jobserver_.jobserver->try_acquire(); };
    options.release_slot = [this] { jobserver_.jobserver->release(); };
  }
}

Result<std::unique_ptr<exec::RemoteRunner>> Session::remote_runner(const plan::Plan& plan, Policy::Remote use) {
  const std::string url = options_.config.text("remote_execution");
  if (url.empty() || use == Policy::Remote::None) return std::unique_ptr<exec::RemoteRunner>();
  auto link = engine_link(use == Policy::Remote::LauncherCompile);
  if (!link) return link.error();
  exec::RemoteRunnerSetup setup;
  setup.link = *link;
  setup.config = (*link)->config();
  setup.plan = &plan;
  setup.local_jobs = jobserver_.serial ? 1 : effective_jobs(config());
  setup.system_dirs = cache::system_dirs(options_.config.text("system_dirs"));
  setup.parse_depfile = [](std::string_view text) { return cache::parse_depfile(text); };
  // Each job's key is the job cache's (exec/job_keys.hpp); with the engine
  // layer the runner asks no dependency manifests (its entries serve the job).
  setup.engine_layer = engine_layer_on();
  setup.signing_key = storage::Trust::from_config(config()).signing_key;
  // A launcher compile: the engine opened on its first job that goes (a
  // compile served by the cache never loads the client), compiler checks
  // once per make/ninja run (remembered next to the cache).
  setup.lazy = use == Policy::Remote::LauncherCompile;
  setup.warn = engine_warn(setup.config.display);
  setup.engine_down = engine_down_memo(setup.config.display);
  if (notes_)
    setup.check_once = [dir = *notes_](const std::string& key, const std::function<bool()>& check) {
      return once_in_build(dir, "remote-execution compiler " + key, check);
    };
  return exec::make_remote_runner(std::move(setup));
}

Ran Session::run_plan(const plan::Plan& plan, exec::CommandRunner& runner, RunOptions run) {
  exec::ExecOptions options;
  limit_parallelism(options);
  // Remote jobs have their own limit (the remote_execution's jobs), beside
  // the local slots the runner keeps for what runs here.
  exec::RemoteRunner* remote = runner.remote();
  if (remote) options.parallelism += remote->remote_jobs();
  options.observer = run.observer;
  options.check_outputs = std::move(run.check_outputs);
  std::optional<cache::JobCache> job_cache;
  std::optional<cache::JobKeyTable> keys;  // no job cache: the runner's keys, each computed once
  const bool collect_reads = run.cache.collect_reads;
  if (remote && engine_cache() != exec::EngineCache::Trusted)
    run.cache.local_only = [remote](const plan::Job& job) {
      auto note = remote->note(job.id);
      return note && note->where == report::RanWhere::EngineCache;
    };
  if (layers_) {
    storage_->warn_if_unwritable();
    run.cache.system_dirs = cache::system_dirs(config().text("system_dirs"));
    job_cache.emplace(*layers_, plan, std::move(run.cache));
    job_cache->attach(options);  // serve (concurrent lookups), after_serve, after_run
    // Lookups on threads hide a remote's latency; with only the local cache
    // a lookup takes microseconds and the hand-off would cost more.
    if (!layers_->has_remotes()) options.lookups = 1;
  } else if (remote) {
    options.keys = &keys.emplace(plan, cache::system_dirs(config().text("system_dirs")), run.cache.allow_time_macros);
  }
  Ran ran{exec::execute(plan, runner, options), {}};
  if (remote && storage_) {  // cache stats: where the jobs ran
    const auto n = remote->counts();
    storage::Counters delta;
    delta.remote_executions = n.remote;
    delta.engine_cache_hits = n.engine_cache;
    delta.remote_fallbacks = n.fallback;
    if (delta.any()) storage_->record(delta);
  }
  if (job_cache) {
    job_cache->finish();
    ran.misses = job_cache->misses();
    if (collect_reads) ran.reads = job_cache->reads();
    if (run.after_cache) run.after_cache(*job_cache);
  }
  if (working_set_ && ran.summary) keep_working_set();
  return ran;
}

void Session::keep_working_set() {
  const auto used = layers_->used();
  if (config().flag("verbose"))
    std::cerr << "offload-build: the engine's working set of this project: " << working_set_->served() << " of "
              << working_set_->loaded() << " entries served, " << used.size() << " used\n";
  if (!working_set_->wanted()) return;
  std::map<std::string, std::string> values;
  uint64_t bytes = 0;
  for (const auto& [kind, key] : used) {
    auto value = storage_->get_encoded(kind, key);
    if (!value) continue;
    bytes += value->size();
    if (bytes > exec::kMaxWorkingSetBytes) return;  // too big to keep whole: none
    values.emplace(storage::redis_key(kind, key), std::move(*value));
  }
  working_set_->save(values);
}

}  // namespace ob::run
