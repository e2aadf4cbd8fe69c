// The CommandRunner of `offload-build cargo`'s plan (plan/cargo_plan.hpp).
// Each job runs on a thread of its own (exec/threaded_runner.hpp), so that device passes of different
// crates and targets run at once under -j or make's
// jobserver (each cargo has its own --target-dir): a device job runs cargo,
// reads its messages (the archive it names, whether it was fresh), retries
// after `cargo clean -p` when cargo says fresh but the output is gone, links
// the host device's image, and leaves the image at the temporary the
// executor gives (committed, stored and served as any job's output); the
// host job names the image by the package's content and runs cargo; the
// others run their command. A fresh cargo counts as up to date
// (Completion::up_to_date); a failure says what cargo's messages above mean.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "offload_build/exec/cargo_run.hpp"
#include "offload_build/exec/threaded_runner.hpp"
#include "offload_build/plan/cargo_plan.hpp"

namespace ob::exec {

class CargoRunner final : public ThreadedRunner {
 public:
  explicit CargoRunner(const plan::CargoPlan& plan);
  ~CargoRunner() override;
  CargoRunner(const CargoRunner&) = delete;
  CargoRunner& operator=(const CargoRunner&) = delete;

  // What one host pass built: its programs (their artifact messages) and the
  // MIR of the local crates it compiled (their launches).
  struct HostOutputs {
    std::vector<fs::path> programs, mirs;
  };
  // The programs every host pass built.
  std::vector<fs::path> programs() const;
  // One per plan::CargoPlan::host_steps entry, in its order.
  std::vector<HostOutputs> host_outputs() const;

  void stop_all() override;

 private:
  std::function<Completion()> work(const JobView& view) override;
  Completion run(const plan::Job& job, const process::Command& command, const std::vector<fs::path>& temps);
  // temps: the image, the MIR, then the depfile.
  Completion device(const plan::Job& job, const plan::CargoDeviceStep& step, const std::vector<fs::path>& temps);
  // The host job: each host step's pass in turn (plan::HostGroup).
  Completion host(const plan::Job& job);
  // One host step: its image copied to the name of its package's content, then
  // cargo; its CPU seconds and whether cargo found everything fresh. What it
  // built is added to `outputs`.
  Result<std::pair<double, bool>> host_pass(const plan::CargoHostStep& step, HostOutputs& outputs);
  // cargo's `Executable` lines of `cargo test --no-run`, for the test artifacts of the packages `ids`.
  void print_executables(std::vector<toolchain::cargo::Artifact> tests, const std::vector<std::string>& ids, bool colour);

  const plan::CargoPlan& plan_;
  cargo_run::Children children_;
  cargo_run::Diagnostics diagnostics_;  // every pass's, printed once
  mutable std::mutex mu_;  // host_outputs_
  std::vector<HostOutputs> host_outputs_;
};

}  // namespace ob::exec
