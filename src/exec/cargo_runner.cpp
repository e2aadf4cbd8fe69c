// The runner of `offload-build cargo`'s plan (see cargo_runner.hpp).
#include "offload_build/exec/cargo_runner.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/core.h>

#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::exec {

namespace {

// cargo writes a CACHEDIR.TAG only into a target dir it creates, and `cargo
// clean` refuses a dir without one; the device pass's dir was made before
// cargo ran (the image's folder in it): tag it as cargo would have.
void tag_target_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "CACHEDIR.TAG", ec)) return;
  (void)util::write_file_atomic(dir / "CACHEDIR.TAG",
                                "Signature: 8a477f597d28d172789f06886806bc55\n"
                                "# This file is a cache directory tag created by cargo.\n"
                                "# For information about cache directory tags see https://bford.info/cachedir/\n");
}

CommandRunner::Completion failed(CommandRunner::Completion c, std::string message) {
  if (c.exit_code == 0) c.exit_code = 1;
  c.error = std::move(message);
  return c;
}

}  // namespace

CargoRunner::CargoRunner(const plan::CargoPlan& plan) : plan_(plan) {}

CargoRunner::~CargoRunner() { stop_all(); }

std::vector<fs::path> CargoRunner::programs() const {
  std::lock_guard lock(mu_);
  std::vector<fs::path> out;
  for (const auto& h : host_outputs_) out.insert(out.end(), h.programs.begin(), h.programs.end());
  return out;
}

std::vector<CargoRunner::HostOutputs> CargoRunner::host_outputs() const {
  std::lock_guard lock(mu_);
  return host_outputs_;
}

std::function<CommandRunner::Completion()> CargoRunner::work(const JobView& view) {
  return [this, &job = view.job, command = view.command, temps = view.temps] {  // the plan's job: it outlives the run
    return run(job, command, temps);
  };
}

void CargoRunner::stop_all() {
  children_.stop_all();  // each step's process ends, and it starts no other
  join_all();
}

CommandRunner::Completion CargoRunner::run(const plan::Job& job, const process::Command& command,
                                           const std::vector<fs::path>& temps) {
  if (auto d = plan_.devices.find(job.id); d != plan_.devices.end()) return device(job, d->second, temps);
  if (job.id == plan_.host) return host(job);
  Completion c;
  c.job = job.id;
  if (auto check = plan_.checks.find(job.id); check != plan_.checks.end()) {
    auto out = cargo_run::run_cargo(check->second, plan_.plan.cwd, children_, diagnostics_);
    if (!out) return failed(c, out.error().message);
    c.exit_code = out->exit_code;
    c.cpu_s = out->cpu_s;
    return c;
  }
  auto pid = children_.spawn(command);
  if (!pid) return failed(c, pid.error().message);
  const auto exit = children_.wait(*pid);
  c.exit_code = exit.code;
  c.cpu_s = exit.cpu_s;
  return c;
}

CommandRunner::Completion CargoRunner::device(const plan::Job& job, const plan::CargoDeviceStep& d,
                                              const std::vector<fs::path>& temps) {
  const fs::path& temp = temps.front();
  Completion c;
  c.job = job.id;
  const toolchain::cargo::Invocation inv{job.argv, job.env, d.echo_json, d.render, d.colour, d.quiet};
  const fs::path& cwd = plan_.plan.cwd;
  for (int attempt = 0;; ++attempt) {
    auto out = cargo_run::run_cargo(inv, cwd, children_, diagnostics_);
    if (!out) return failed(c, out.error().message);
    c.cpu_s += out->cpu_s;
    if (out->exit_code != 0)
      return failed(c, fmt::format("the device pass of {} for target {} failed (cargo's messages above say why)\n  "
                                   "command: {}",
                                   d.pkg.name, d.target.short_name(), toolchain::cargo::display(inv)));
    bool fresh = false;
    for (const auto& m : out->messages)
      if (auto a = toolchain::cargo::parse_artifact(m); a && a->package_id == d.pkg.id) fresh = a->fresh;
    const std::optional<fs::path> archive = toolchain::cargo::device_archive(out->messages, d.pkg);
    const std::optional<fs::path> output = d.image_link ? archive : d.output;
    std::error_code ec;
    if (output && fs::exists(*output, ec) && fs::exists(d.mir, ec)) {
      // What it read, for the cache's second level (Job::depfile, Job::env_deps).
      const std::optional<std::string> depfile =
          archive ? toolchain::cargo::device_depfile(*archive, d.config_env) : std::nullopt;
      if (job.depfile && depfile && !util::write_file_atomic(temps.back(), *depfile))
        return failed(c, "cannot write " + temps.back().string());
      // A fresh archive's image is still current when it is newer.
      const bool linked = d.image_link && fresh && fs::exists(d.image, ec) &&
                          fs::last_write_time(d.image, ec) >= fs::last_write_time(*output, ec);
      if (d.image_link && !linked) {
        auto cpu = cargo_run::run_tool(d.image_link(*output, temp), cwd, "image link " + d.pkg.name, children_);
        if (!cpu) return failed(c, cpu.error().message);
        c.cpu_s += *cpu;
      } else {
        const fs::path& from = linked ? d.image : *output;
        fs::copy_file(from, temp, fs::copy_options::overwrite_existing, ec);
        if (ec) return failed(c, fmt::format("cannot copy {} to {}: {}", from.string(), temp.string(), ec.message()));
      }
      fs::copy_file(d.mir, temps[1], fs::copy_options::overwrite_existing, ec);
      if (ec) return failed(c, fmt::format("cannot copy {} to {}: {}", d.mir.string(), temps[1].string(), ec.message()));
      c.up_to_date = fresh;
      return c;
    }
    if (attempt > 0)
      return failed(c, fmt::format("cargo's device pass of {} for {} wrote no {}", d.pkg.name, d.target.short_name(),
                                   output ? output->string() : "static library"));
    tag_target_dir(d.target_dir);
    auto cleaned = cargo_run::run_tool(d.clean, cwd, "cargo clean", children_);
    if (!cleaned) return failed(c, cleaned.error().message);
  }
}

void CargoRunner::print_executables(std::vector<toolchain::cargo::Artifact> tests, const std::vector<std::string>& ids,
                                    bool colour) {
  // cargo's order: by package, then the target's kind (library, programs, tests, benches) and name.
  auto rank = [&](const toolchain::cargo::Artifact& a) {
    const auto pkg = std::find(ids.begin(), ids.end(), a.package_id) - ids.begin();
    int kind = 4;
    for (const auto& [k, r] : std::vector<std::pair<std::string, int>>{{"bench", 3}, {"test", 2}, {"bin", 1}, {"lib", 0}})
      if (std::count(a.kinds.begin(), a.kinds.end(), k)) kind = r;
    return std::tuple(pkg, kind, a.target_name);
  };
  std::stable_sort(tests.begin(), tests.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  for (const auto& a : tests)
    if (auto line = toolchain::cargo::executable_line(a, plan_.plan.cwd, colour)) diagnostics_.print_text(*line);
}

CommandRunner::Completion CargoRunner::host(const plan::Job& job) {
  Completion c;
  c.job = job.id;
  bool fresh = true;  // cargo compiled none of the packages' targets
  std::vector<HostOutputs> outputs;
  for (const plan::CargoHostStep& h : plan_.host_steps) {
    auto ran = host_pass(h, outputs.emplace_back());
    if (!ran) return failed(c, ran.error().message);
    c.cpu_s += ran->first;
    fresh = fresh && ran->second;
  }
  std::lock_guard lock(mu_);
  host_outputs_ = std::move(outputs);
  c.up_to_date = fresh;
  return c;
}

Result<std::pair<double, bool>> CargoRunner::host_pass(const plan::CargoHostStep& h, HostOutputs& outputs) {
  auto bytes = util::read_file(h.package, util::kMaxBuildOutput);
  if (!bytes) return Error::failure("cannot read " + h.package.string());
  const fs::path named = h.named(toolchain::cargo::content_hash(*bytes));
  std::error_code ec;
  fs::create_directories(named.parent_path(), ec);
  // Whole or not at all: another build of this configuration may be linking it now.
  auto image = util::read_file(h.image, util::kMaxBuildOutput);
  if (!image || !util::write_file_atomic(named, *image))
    return Error::failure(fmt::format("cannot copy {} to {}", h.image.string(), named.string()));
  for (fs::directory_iterator it(named.parent_path(), ec), end; h.remove_stale && !ec && it != end; it.increment(ec)) {
    std::error_code ignored;
    if (util::starts_with(it->path().filename().string(), "devimg-") && it->path() != named)
      fs::remove(it->path(), ignored);
  }
  const auto inv = h.pass(named);
  auto out = cargo_run::run_cargo(inv, plan_.plan.cwd, children_, diagnostics_);
  if (!out) return out.error();
  if (out->exit_code != 0) return Error::failure(h.failed + "\n  command: " + toolchain::cargo::display(inv));
  bool fresh = true;
  std::vector<toolchain::cargo::Artifact> tests;
  for (const auto& m : out->messages) {
    auto a = toolchain::cargo::parse_artifact(m);
    if (!a) continue;
    // The local crates' MIR: where launches are (a registry crate launches none).
    if (util::starts_with(a->package_id, "path+file://"))
      if (auto mir = toolchain::cargo::artifact_mir(*a)) outputs.mirs.push_back(std::move(*mir));
    if (std::find(h.ids.begin(), h.ids.end(), a->package_id) == h.ids.end()) continue;
    fresh = fresh && a->fresh;
    if (a->executable) outputs.programs.push_back(*a->executable);
    if (a->test && a->executable) tests.push_back(*a);
  }
  if (h.list_executables && !inv.quiet) print_executables(tests, h.ids, inv.colour);
  return std::pair{out->cpu_s, fresh};
}

}  // namespace ob::exec
