// A plan job as a remote action, whatever the engine (exec/remote/runner.hpp
// runs it): which jobs go (kept_local), the files a compile reads (its
// declared inputs and, with a depfile, a dependency scan with its own flags),
// the input root, paths in argv and environment made relative to it, the
// executor's temporaries named by their final paths, and the rules that keep a
// job here (a symlink on a file's way, a file outside base_dir under stable
// names, a user's LD_PRELOAD library, -march=native).
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/exec/job_keys.hpp"
#include "offload_build/exec/remote/client.hpp"
#include "offload_build/exec/remote/scan_batch.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/process/command.hpp"

namespace ob::exec {

struct RemoteRunnerSetup;

namespace fs = std::filesystem;

// The compiler a job runs, by absolute path (the worker runs the same
// compiler at the same path): a bare name is looked up in PATH as exec does,
// a relative path from the plan's directory; nullopt when not found.
std::optional<fs::path> compiler_path(const plan::Job& job, const fs::path& cwd);
// Why a job is not one remote execution sends, or "" when it is.
std::string kept_local(const plan::Job& job, const fs::path& cwd);

class ActionBuilder {
 public:
  explicit ActionBuilder(const RemoteRunnerSetup& setup);

  // The dependency scan of `cmd` (its own flags and target, preprocessing
  // only), naming a depfile beside the job's last temporary and, where the
  // compile records lookups, their record beside that; nullopt: not a
  // compile the scan knows.
  static std::optional<process::Command> scan_command(const process::Command& cmd, const std::vector<fs::path>& temps);

  struct Built {
    reapi::Action action;
    // The action's output names in the order of the executor's temporaries.
    std::vector<std::string> outputs;
    // An empty file made for the action (the compile's own directory); removed after the run.
    std::optional<fs::path> marker;
    // Every file the job reads (absolute): its declared inputs and what the scan found.
    std::vector<fs::path> reads;
    fs::path cwd;  // where the compile runs here (its command's directory)
  };
  // What a dependency manifest (dependency_manifest.cpp) says a job reads,
  // when it still holds here: every file (absolute) and each path its lookups
  // did not find.
  struct Manifest {
    std::vector<fs::path> reads;
    std::vector<std::string> absent;
  };
  // Runs a dependency scan command (scan_command's, naming the depfile) on this machine.
  using ScanFn = std::function<std::optional<ScanFound>(const process::Command&, const fs::path& depfile)>;
  // `job` run as `cmd` writing `temps`, as an action; nullopt and `why` when it
  // stays here; its key is `keys`' (none: it stays here). `absent` is set to the scan's lookups that found nothing,
  // where the compile records them. With `known` (a dependency manifest that
  // holds), no scan runs.
  std::optional<Built> build(const plan::Job& job, const process::Command& cmd, const std::vector<fs::path>& temps,
                             const ScanFn& scan, JobKeys* keys, std::optional<std::vector<std::string>>& absent,
                             std::string& why, const Manifest* known = nullptr);
  // The dependency manifest of `built` (its reads) whose lookups did not find
  // `absent` (absolute); nullopt when a file changed since, or it is over
  // kMaxManifestBytes.
  std::optional<std::string> manifest_text(const Built& built, const std::vector<std::string>& absent);
  // What the manifest `text` says the job run as `cmd` reads, when each file
  // still has its digest and each absent path is still absent; else `why`.
  std::optional<Manifest> manifest_match(std::string_view text, const process::Command& cmd, std::string& why);

 private:
  struct Layout;  // one job's input root, files and directories (action.cpp)
  // The directory `cmd` runs in here.
  static fs::path cwd_of(const process::Command& cmd);
  std::string manifest_path(const fs::path& p, const fs::path& cwd) const;
  std::optional<std::vector<fs::path>> files_read(const plan::Job& job, const process::Command& cmd,
                                                  const fs::path& cwd, const std::vector<fs::path>& temps,
                                                  const ScanFn& scan,
                                                  std::optional<std::vector<std::string>>& absent, std::string& why,
                                                  const Manifest* known);
  bool lay_out(const plan::Job& job, const std::vector<fs::path>& temps, Layout& l, std::string& why);
  bool add_inputs(Layout& l, reapi::Action& action, std::string& why);
  void add_argv(const plan::Job& job, const process::Command& cmd, const std::vector<fs::path>& temps,
                const Layout& l, reapi::Action& action) const;
  bool add_env(const process::Command& cmd, const ActionKey& key, const Layout& l, reapi::Action& action,
               std::string& why);
  bool add_marker(const std::vector<fs::path>& temps, const Layout& l, Built& built, std::string& why);

  std::string rewrite(const std::string& arg, const fs::path& root, const fs::path& cwd) const;
  bool is_system(const fs::path& p) const;
  std::optional<reapi::Digest> digest_of(const fs::path& p);

  const RemoteRunnerSetup& setup_;
  fs::path root_;  // the plan's root: its directory, base directories, name anchor and build directory
  std::atomic<bool> outside_base_said_{false};
  std::mutex m_;
  std::map<std::string, reapi::Digest> digests_;  // by path, size and mtime
};

}  // namespace ob::exec
