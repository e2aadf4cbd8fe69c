// The cargo flow (cargo_build.hpp) as a Flow: the session (cargo_session.hpp),
// its plan (plan/cargo_plan.hpp, the device jobs keyed by
// cache/cargo_cache.hpp) on the CargoRunner (exec/cargo_runner.hpp), the
// launches checked after the host pass, the programs it built. Session::run
// does the rest.
#include "offload_build/run/cargo_build.hpp"

#include <algorithm>
#include <iostream>

#include "cargo_lines.hpp"
#include "cargo_session.hpp"
#include "cargo_timings.hpp"
#include "rust_launch_check.hpp"
#include "offload_build/cache/cargo_cache.hpp"
#include "offload_build/exec/cargo_runner.hpp"
#include "offload_build/report/timings_html.hpp"
#include "offload_build/run/pictures.hpp"
#include "offload_build/util/files.hpp"

namespace ob::run {

namespace {

// A bad remote URL is said once and not used (as for a launcher compile). A
// build state for the steps offload-build runs itself (the device images, the
// package, stub and embed: skipped while what they read is unchanged); the
// passes cargo runs are current when cargo's fingerprints say so. cargo's
// passes never go to an engine. No summary under -q.
Policy cargo_policy(bool quiet) {
  return {"cargo", RemoteErrors::Warn, true, false, Policy::Remote::None, !quiet, true, false};
}

class CargoFlow final : public Flow {
 public:
  CargoFlow(const Request& o, const plan::CargoSession& s)
      : o_(o), s_(s),
        host_name_("cargo " + (s.user.command == "test" ? std::string("test") : "build") + " " + s.pkg.name),
        // -q after the command word is cargo's and ours: no progress lines, no summary.
        quiet_(o.config.flag("quiet") || std::any_of(s.user.shared.begin(), s.user.shared.end(), [](const std::string& a) {
                 return a == "-q" || a == "--quiet";
               })),
        policy_(cargo_policy(quiet_)),
        cargo_page_(cargo_timings::page_path(s.pkg.target_directory)) {}
  const Policy& policy() const override { return policy_; }
  const std::vector<fs::path>& programs() const { return programs_; }

  Result<plan::Plan*> plan(Session& session, KernelNames&) override {
    session.project = s_.pkg.name;
    session.manifest = s_.pkg.manifest_path;
    cp_.emplace(plan::make_cargo_plan(s_));
    if (session.layers()) cache::cargo_cache::add_keys(*cp_, s_);
    return &cp_->plan;
  }
  std::string script(const plan::Plan&) const override { return cp_->script; }

  Result<std::unique_ptr<exec::CommandRunner>> runner(std::unique_ptr<exec::RemoteRunner>) override {
    auto runner = std::make_unique<exec::CargoRunner>(*cp_);
    runner_ = runner.get();
    return std::unique_ptr<exec::CommandRunner>(std::move(runner));
  }

  void options(Session& session, RunOptions& run) override {
    explain_.emplace(s_, *cp_);
    lines_.emplace(quiet_, cp_->host, host_name_, *explain_);
    listeners_.emplace(std::vector<report::Progress*>{&*lines_, &session.recorder()});
    run.observer = &*listeners_;
    run.check_outputs = [this](const plan::Job& job, const std::vector<fs::path>&) { return check_launches(job); };
    // --explain compares with what each pass read when it last succeeded.
    run.cache.planner_explain = [this](const plan::Job& job) { return explain_->changed(job); };
    // The page cargo writes for this host pass, not an earlier one's.
    if (wants_pictures(o_)) {
      std::error_code ec;
      fs::remove(cargo_page_, ec);
    }
  }

  Result<void> after_run(Session&, Ran& ran) override {
    if (!ran.summary) return ran.summary.error();
    programs_ = runner_->programs();
    if (s_.user.command == "build" && !quiet_)
      for (const auto& p : programs_) std::cerr << "offload-build: built " << p.string() << '\n';
    return {};
  }

  std::map<fs::path, std::string> known_tools() const override {
    return {{s_.tc.rust->rustc, s_.tc.rust->version_line}};
  }
  fs::path timings_page(const plan::Plan&) const override {
    return toolchain::cargo::offload_dir(s_.pkg, s_.user.profile) / report::kTimingsFileName;
  }
  void draw(report::Timeline& timeline) const override {
    std::vector<cargo_timings::Unit> units;
    if (auto page = util::read_file(cargo_page_, util::kMaxBuildOutput))
      units = cargo_timings::parse_page(*page).value_or(units);
    cargo_timings::show_host_pass(timeline, cp_->host, host_name_, units);
  }

 private:
  // The launches of the crates the host pass built, against the kernels the
  // device passes compiled: each host pass's against its own kernel crates'
  // images (the ones its programs link); a program that fails it is removed
  // (cargo relinks it).
  Result<void> check_launches(const plan::Job& job) {
    if (job.id != cp_->host || s_.user.command == "check" || s_.user.command == "clippy") return {};
    const auto built = runner_->host_outputs();
    for (size_t i = 0; i < cp_->host_steps.size() && i < built.size(); ++i) {
      auto checked = check_rust_launches(cp_->plan, s_.tc, built[i].mirs, built[i].programs, s_.pkg.device_cfg,
                                         cp_->host_steps[i].devices);
      if (checked) continue;
      for (const auto& p : runner_->programs()) {
        std::error_code ec;
        fs::remove(p, ec);
      }
      return checked;
    }
    return {};
  }

  const Request& o_;
  const plan::CargoSession& s_;
  const std::string host_name_;  // the host pass, named for what it is (check|clippy plans have none)
  const bool quiet_;
  const Policy policy_;
  const fs::path cargo_page_;
  std::optional<plan::CargoPlan> cp_;
  exec::CargoRunner* runner_ = nullptr;
  std::optional<CargoExplain> explain_;
  std::optional<CargoLines> lines_;
  std::optional<report::ProgressTee> listeners_;
  std::vector<fs::path> programs_;
};

}  // namespace

Result<CargoBuilt> cargo_build(const Request& o, const CargoArgs& args, Session& session) {
  // rustc's answers to the probes, remembered per binary next to the cache (as a manifest build's).
  toolchain::rust::set_probe_memo_dir(session.probe_memo());
  auto s = open_session(o, args, session.probe_memo());
  if (!s) return s.error();
  if (s->crates.empty()) {
    auto code = without_device_pass(o, args, *s);
    if (!code) return code.error();
    return CargoBuilt{{}, *code};
  }
  CargoFlow flow(o, *s);
  OB_TRY(session.run(flow));
  return CargoBuilt{flow.programs(), std::nullopt};
}

}  // namespace ob::run
