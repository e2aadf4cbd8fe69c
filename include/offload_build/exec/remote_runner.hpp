// Remote execution (docs/DISTRIBUTED.md): a CommandRunner that sends C/C++
// compile jobs (device passes, host parse, host codegen) to a Remote
// Execution API v2 engine and runs the rest locally. For each job it builds
// the input root from what the job reads (its declared inputs, and for a
// compile with a depfile every file a dependency scan with the job's own
// flags lists), names every path relative to it, runs the action through the
// client module (exec/remote_execution.hpp, opened with dlopen), checks and
// writes the outputs to the executor's temporaries and hands back what the
// compiler printed. An engine failure runs the job locally (one warning per
// build, and the engine is not asked again during the build); a compile that
// failed remotely is rerun locally, so its error is printed as a local one
// and a file the scan missed can never give a wrong object.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/config/config.hpp"
#include "offload_build/exec/command_runner.hpp"
#include "offload_build/exec/engine_registry.hpp"
#include "offload_build/exec/remote_execution.hpp"
#include "offload_build/report/remote_notes.hpp"
#include "offload_build/util/result.hpp"

#include <nlohmann/json.hpp>

namespace ob::exec {

// The remote_execution setting: `grpc://HOST:PORT` (or grpcs://) with
// `|attribute=value` suffixes: instance=NAME, jobs=N, connect-timeout,
// call-timeout, execution-timeout (250ms, 2s, 10m), max-output-size (256M),
// header=NAME:VALUE (repeatable; ${VAR} taken from the environment).
// The engine_cache setting: whom the engine's action cache is trusted as
// (any client of an engine may write it; docs/CACHE.md's trust model).
enum class EngineCache {
  Use,      // its results serve the build and the local cache, never remote storage
  Trusted,  // stored everywhere, signed into remote storage
  Execute,  // never asked: every action executes
  Off,      // executed with do_not_cache
};
std::optional<EngineCache> parse_engine_cache(std::string_view text);

struct RemoteExecutionConfig {
  const EngineScheme* scheme = nullptr;  // the engine the URL names (exec/engine_registry.hpp)
  reapi::Endpoint endpoint;
  EngineCache engine_cache = EngineCache::Use;
  size_t jobs = 0;      // remote jobs at once; 0: 4 x the local CPUs
  std::string display;  // the URL with every header value as ***
};

Result<RemoteExecutionConfig> parse_remote_execution(std::string_view text);
// The same over another registry (tests, an engine outside the builtin list).
Result<RemoteExecutionConfig> parse_remote_execution(std::string_view text, const EngineRegistry& registry);
// Keep from every child (the compilers, the program `run` starts) the
// variables the remote_execution setting's headers name (${VAR}) and
// OFFLOAD_BUILD_REMOTE_EXECUTION itself (util/secrets.hpp). Before any child starts.
void hide_remote_execution_secrets(const config::Config& config);
// `text` with every header value replaced by ***, also when it does not parse.
std::string redact_remote_execution(std::string_view text);

// Where a job ran and how that is said: report/remote_notes.hpp.
using report::RanWhere;
using report::RemoteJobNote;
using report::RemoteNotes;
using report::explain_remote;
using report::mark_remote;
using report::ran_where_name;
using report::remote_execution_of;
using report::remote_note_json;

class RemoteRunner : public CommandRunner {
 public:
  struct Counts {
    size_t remote = 0;        // executed by the engine
    size_t engine_cache = 0;  // served by the engine's action cache
    size_t fallback = 0;      // sent, and run locally after all
    size_t local = 0;         // never sent
    uint64_t uploaded_bytes = 0;
    size_t scans_skipped = 0;     // jobs whose dependency manifest in the engine held
    size_t manifests_stored = 0;  // manifests written after a scan
    size_t scans_batched = 0;     // dependency scans answered by clang-scan-deps (exec/scan_batch.hpp)
    size_t scan_runs = 0;         // its runs
  };
  virtual std::optional<RemoteJobNote> note(plan::JobId job) const = 0;
  // Remote jobs at once (the jobs attribute), beside -j local ones.
  virtual size_t remote_jobs() const = 0;
  RemoteRunner* remote() override { return this; }
  virtual Counts counts() const = 0;
};

// Where each of the plan's jobs ran, as `runner` noted it.
RemoteNotes remote_notes(const RemoteRunner& runner, const plan::Plan& plan);

// What a job's local cache key holds that neither the action's arguments nor
// its shipped files show (cache::action_key: the tools' identities, the
// driver's environment, the key facts, the system files' identities, the
// time-macro rule), derived from the same definition as the local key, so
// the engine's action cache is never consulted under a weaker key.
struct ActionKey {
  std::string stamp;  // hex digest of it all, sent in the action's environment
  // The driver's environment as the compile sees it here (CPATH,
  // SOURCE_DATE_EPOCH, ...): sent, its paths made relative like the job's own.
  std::vector<std::pair<std::string, std::string>> env;
  bool do_not_cache = false;  // a file read uses __DATE__/__TIME__: never from or into the engine's cache
};

class EngineLink;  // exec/engine_link.hpp

struct RemoteRunnerSetup {
  RemoteExecutionConfig config;
  // The engine, shared with the local cache's engine layer
  // (exec/engine_storage.hpp); unset: make_remote_runner opens its own from
  // `config`, `warn` and `engine_down`.
  std::shared_ptr<EngineLink> link;
  const plan::Plan* plan = nullptr;
  size_t local_jobs = 1;              // local commands (and scans) at once: -j
  std::vector<fs::path> system_dirs;  // files under these are the worker's own (its toolchain)
  // The prerequisites of a Make depfile's text (cache::parse_depfile).
  std::function<std::vector<std::string>(std::string_view)> parse_depfile;
  // The job's ActionKey, given every file it reads (absolute); any thread.
  std::function<ActionKey(const plan::Job&, const std::vector<fs::path>&)> action_key;
  // The name of the job's dependency manifest in the engine (what decides
  // its outputs before any file is read: its direct key), "" for none; any
  // thread. Unset: no manifests (every compile with a depfile is scanned).
  std::function<std::string(const plan::Job&)> manifest_key;
  // The team's signing key (OFFLOAD_BUILD_SIGNING_KEY): manifests are
  // stored signed with it and used only when they verify; empty: none are
  // asked for or stored (a manifest from the engine is a claim, not a proof).
  std::string signing_key;
  // With the local cache's engine layer instead (no manifests): true when
  // the layer, asked in this build for the job's entry under its direct key,
  // found none (EngineLink::absent): nothing says the job ran there, so its
  // action is executed without asking the action cache first. Any thread.
  std::function<bool(const plan::Job&)> ran_nowhere;
  // One line, said once per build (the first engine failure); any thread.
  std::function<void(const std::string&)> warn;
  // Open the engine on the first job that goes to it, not at once (launcher
  // mode: a compile whose jobs all hit never loads the client module). A
  // refusal (the client module missing) then fails that job with it.
  bool lazy = false;
  // Runs a compiler check (key: the engine, the compiler and its --version)
  // once per make/ninja run: the check passed now or earlier in the run (the
  // run's concurrent compiles wait for the first). Unset: each runner checks
  // (a manifest build: once).
  std::function<bool(const std::string& key, const std::function<bool()>& check)> check_once;
  // Whether the engine failed earlier in this build (launcher mode: an
  // earlier compile of the make run), asked with mark=false when the engine
  // would be opened; told with mark=true on a failure. Unset: this runner only.
  std::function<bool(bool mark)> engine_down;
};

// Open the engine (setup.link: at once, or with setup.lazy on the first job
// that goes) and, on the first job that goes, check with a small action that
// the worker's compiler at the same path prints the same --version as ours.
// Errors: the module is missing. An engine that cannot be reached: `warn`,
// and nullptr (the build runs locally; lazy: every job runs locally). A
// worker's compiler that differs: `warn`, and every job runs locally.
Result<std::unique_ptr<RemoteRunner>> make_remote_runner(RemoteRunnerSetup setup);

}  // namespace ob::exec
