// Remote execution (docs/DISTRIBUTED.md): a CommandRunner that sends C/C++
// compile jobs (device passes, host parse, host codegen) to a Remote
// Execution API v2 engine and runs the rest locally. For each job it builds
// the input root from what the job reads (its declared inputs, and for a
// compile with a depfile every file a dependency scan with the job's own
// flags lists), names every path relative to it, runs the action through the
// client module (exec/remote/client.hpp, opened with dlopen), checks and
// writes the outputs to the executor's temporaries and hands back what the
// compiler printed. An engine failure runs the job locally (one warning per
// build, and the engine is not asked again during the build); a compile that
// failed remotely is rerun locally, so its error is printed as a local one
// and a file the scan missed can never give a wrong object.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/exec/threaded_runner.hpp"
#include "offload_build/exec/remote/setting.hpp"
#include "offload_build/report/remote_notes.hpp"
#include "offload_build/util/result.hpp"

namespace ob::exec {

// Each job on a thread of its own (exec/threaded_runner.hpp).
class RemoteRunner : public ThreadedRunner {
 public:
  struct Counts {
    size_t remote = 0;        // executed by the engine
    size_t engine_cache = 0;  // served by the engine's action cache
    size_t fallback = 0;      // sent, and run locally after all
    size_t local = 0;         // never sent
    uint64_t uploaded_bytes = 0;
    size_t scans_skipped = 0;     // jobs whose dependency manifest in the engine held
    size_t manifests_stored = 0;  // manifests written after a scan
    size_t scans_batched = 0;     // dependency scans answered by clang-scan-deps (exec/remote/scan_batch.hpp)
    size_t scan_runs = 0;         // its runs
  };
  virtual std::optional<report::RemoteJobNote> note(plan::JobId job) const = 0;
  // Remote jobs at once (the jobs attribute), beside -j local ones.
  virtual size_t remote_jobs() const = 0;
  RemoteRunner* remote() override { return this; }
  virtual Counts counts() const = 0;
};

// Where each of the plan's jobs ran, as `runner` noted it.
report::RemoteNotes remote_notes(const RemoteRunner& runner, const plan::Plan& plan);

class EngineLink;  // exec/remote/link.hpp

struct RemoteRunnerSetup {
  RemoteExecutionConfig config;
  // The engine, shared with the local cache's engine layer
  // (exec/remote/layer.hpp); unset: make_remote_runner opens its own from
  // `config`, `warn` and `engine_down`.
  std::shared_ptr<EngineLink> link;
  const plan::Plan* plan = nullptr;
  size_t local_jobs = 1;              // local commands (and scans) at once: -j
  std::vector<fs::path> system_dirs;  // files under these are the worker's own (its toolchain)
  // The prerequisites of a Make depfile's text (cache::parse_depfile).
  std::function<std::vector<std::string>(std::string_view)> parse_depfile;
  // Each job's key is the job cache's (JobView::keys: the action's key, the
  // name of its dependency manifest). With `engine_layer` (the local cache's
  // engine layer is on) no manifests: the layer's entries under the same key
  // (every file read, with its digest) serve the whole job; and a job whose
  // entry the layer, asked in this build, found none of (EngineLink::absent)
  // is executed without asking the action cache first.
  bool engine_layer = false;
  // The team's signing key (OFFLOAD_BUILD_SIGNING_KEY): manifests are
  // stored signed with it and used only when they verify; empty: none are
  // asked for or stored (a manifest from the engine is a claim, not a proof).
  std::string signing_key;
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
