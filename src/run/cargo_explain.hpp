// Private to src/run: --explain for `offload-build cargo`. The cargo flow
// keeps no build state (cargo's fingerprints decide what is current), so the
// job cache alone could only say "no earlier build of this job recorded".
// Each device pass and the host pass records what it read when it succeeds
// (in <target>/offload/<profile>/explain/); on the next build, a device pass
// that misses the cache and the host pass, which is never cached, say what
// changed since: the files of the crates they build, their flags and
// environment, rustc, and for the host pass the device images it embeds.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "offload_build/plan/cargo_plan.hpp"

namespace ob::run {

class CargoExplain {
 public:
  CargoExplain(const plan::CargoSession& s, const plan::CargoPlan& p) : s_(s), p_(p) {}
  // What changed since `job` last succeeded in this profile, as one line;
  // nullopt for a job it keeps no record of (the package, the embed).
  std::optional<std::string> changed(const plan::Job& job) const;
  // After `job` succeeded (ran, or served from the cache): what it read.
  void record(const plan::Job& job) const;

 private:
  std::optional<nlohmann::json> inputs(const plan::Job& job) const;
  fs::path record_path(const plan::Job& job) const;
  const plan::CargoSession& s_;
  const plan::CargoPlan& p_;
};

}  // namespace ob::run
