// Launcher mode: a command run unchanged (through the prefix when it compiles
// no device code), a Flow without a plan. Counted by kind in the cache's
// counters; -v names the reason once per build and kind (300 plain compiles
// say "not an offload compile" once); an offload compile an option keeps
// whole (miniFE's -v) is said without -v too.
#include <iostream>

#include <fmt/core.h>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/report/timeline.hpp"
#include "offload_build/run/launcher.hpp"
#include "offload_build/run/pictures.hpp"
#include "offload_build/run/session.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/util/strings.hpp"
#include "launcher_unchanged.hpp"

namespace ob::run {

namespace {

// A command run unchanged, as a Flow without a plan: Session::run opens the
// local cache (no remotes: it reads and stores nothing), writes --report and
// appends the compile to --trace as one step.
class UnchangedFlow final : public Flow {
 public:
  UnchangedFlow(const std::vector<std::string>& compile, const Unchanged& why, const Prefix& prefix)
      : why_(why), compile_(compile), run_(through_prefix(compile, prefix, compile)) {}
  const Policy& policy() const override { return kUnchanged; }
  int code() const { return code_; }
  Result<plan::Plan*> plan(Session&, KernelNames&) override { return nullptr; }
  Result<std::unique_ptr<exec::CommandRunner>> runner(std::unique_ptr<exec::RemoteRunner>) override {
    return Error{"a command run unchanged has no plan"};
  }
  Result<void> run_alone(Session& session) override;
  std::optional<report::Timeline> timeline() const override {
    if (!timeline_) return std::nullopt;
    return timeline_->finish(code_ == 0 ? report::BuildResult::Ok : report::BuildResult::Failed);
  }
  void report(nlohmann::json& r) const override {  // run where it was called: no plan says the directory
    std::error_code ec;
    r["cwd"] = fs::current_path(ec).string();
    launcher_report_section(r, command_, &why_, code_);
  }

 private:
  // The local cache only (counters, notes); no build state, no summary; a
  // --report not written a warning; the compiles of a make run add to one trace.
  static constexpr Policy kUnchanged{"launcher", RemoteErrors::LocalOnly, false, false, Policy::Remote::None,
                                     false, false, true};
  void note(Session& session) const;

  const Unchanged& why_;
  const std::vector<std::string>& compile_;
  const PrefixedCommand run_;
  const std::vector<std::string>& command_ = run_.argv;
  std::optional<report::StepTimeline> timeline_;
  int code_ = exit_code::ok;
};

// Counted (unless --no-cache) and, under -v, said once per build and reason
// (remembered in the cache directory).
void UnchangedFlow::note(Session& session) const {
  const Unchanged& why = why_;
  bool say = session.config().flag("verbose") || why.offload;
  std::string most;  // the unsupported options counted most, by name
  if (storage::Storage* storage = session.storage()) {
    storage::Counters delta;
    delta.unchanged_by_reason[why.code] = 1;
    if (!why.option.empty()) delta.unsupported_options[why.option] = 1;
    storage->record(delta);
    // Each unsupported option is named once per build.
    if (say) say = first_in_build(storage->dir(), why.code + why.option + (why.offload ? " offload" : ""));
    if (say && !why.option.empty()) {
      std::vector<std::string> named;
      for (const auto& [option, n] : storage::most_frequent(storage->counters().unsupported_options, 3))
        named.push_back(fmt::format("{} {}", option, n));
      if (!named.empty()) most = "; counted most: " + util::join(named, ", ");
    }
  } else if (!session.config().flag("verbose")) {
    say = false;  // no cache: no record of what this build said
  }
  if (say)
    std::cerr << fmt::format(
        "offload-build: running the compiler unchanged: {} (\"{}\" in `offload-build cache stats`{}; "
        "said once per build{})\n",
        why.reason, why.code, most, why.option.empty() ? "" : " and option");
}

Result<void> UnchangedFlow::run_alone(Session& session) {
  const config::Config& c = session.config();
  if (session.options().dry_run) {
    if (c.flag("verbose")) std::cerr << "offload-build: running the compiler unchanged: " << why_.reason << '\n';
    std::cout << util::shell_join(command_) << '\n';
    return {};
  }
  note(session);
  if (c.flag("explain")) {  // what --explain says of every compile: why this one is not cached
    const std::string output = toolchain::frontend::output_arg(compile_);
    std::cerr << "offload-build: explain: " << (output.empty() ? compile_.front() : output)
              << ": not cached (run unchanged): " << why_.reason << " (\"" << why_.code << "\")\n";
  }
  // --trace: the compile is one event of the make/ninja run's trace.
  std::optional<report::TimedStep> step;
  if (wants_pictures(session.options())) {
    const std::string name =
        fs::path(command_.front()).filename().string() + " " + toolchain::frontend::output_arg(command_);
    timeline_.emplace(name, "launcher");
    step.emplace(&*timeline_, "unchanged", "", "unchanged (" + why_.code + ") " + name);
  }
  // stdin, stdout and stderr are inherited: the output is the compiler's own.
  auto pid = process::spawn(process::Command{command_, {}, run_.env});
  if (!pid) {
    std::cerr << "offload-build: error: " << (run_.prefixed ? "prefix_command: " : "") << pid.error().message << '\n';
    code_ = 127;  // as a shell says for a command it cannot run
  } else {
    code_ = process::wait_in_place(*pid);
  }
  if (step) step->done(code_ == 0 ? "ran" : "failed");
  if (code_ == 0) return {};
  return Error{"", exit_code::failure};  // what it printed says it
}

}  // namespace

int pass_through(const std::vector<std::string>& compile, const Unchanged& why, const Request& o,
                 const Prefix& prefix) {
  Session session(o);
  UnchangedFlow flow(compile, why, prefix);
  (void)session.run(flow);
  return flow.code();
}

void launcher_report_section(nlohmann::json& r, const std::vector<std::string>& command, const Unchanged* why,
                             int exit_code) {
  r["manifest"] = "";
  r["launcher"] = {{"command", command},
                   {"split", why == nullptr},
                   {"reason", why ? nlohmann::json(why->reason) : nlohmann::json(nullptr)},
                   {"reason_code", why ? nlohmann::json(why->code) : nlohmann::json(nullptr)},
                   {"exit_code", exit_code}};
  if (why) r["summary"]["unchanged_by_reason"] = {{why->code, 1}};
}

}  // namespace ob::run
