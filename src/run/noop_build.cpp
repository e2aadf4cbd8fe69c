#include "noop_build.hpp"

#include <iostream>

#include <fmt/core.h>

#include "offload_build/config/config.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/storage/hash.hpp"
#include "offload_build/util/file_identity.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"
#include "offload_build/run/session.hpp"

namespace ob::run {

namespace {

constexpr auto kCoarsestTimestamp = std::chrono::seconds(2);

}  // namespace

bool noop_eligible(const Request& o) {
  const config::Config& c = o.config;
  return !o.dry_run && !c.flag("explain") && !o.report && !o.timings && !c.path("trace") && !o.compdb &&
         !c.flag("verbose") && !c.flag("no_cache");
}

std::string build_fingerprint(const Request& o) {
  // XXH3, not SHA-256: OpenSSL's first digest costs more than the rest of a
  // no-op build, and this only tells one build's inputs from another's.
  std::string text;
  auto field = [&text](std::string_view name, std::string_view value) {
    text += fmt::format("{}:{}={}:{}\n", name.size(), name, value.size(), value);
  };
  field("format", "offload-build no-op 1");
  field("binary", util::file_identity("/proc/self/exe"));
  for (const auto& arg : o.command_line) field("arg", arg);
  std::error_code ec;
  field("cwd", fs::current_path(ec).string());
  const config::Config& c = o.config;
  for (const auto& s : config::table()) {
    if (!s.in_file) continue;  // a secret: it decides no plan, and is not kept
    if (const config::Value* v = c.get(s.key)) field(s.key, v->text);
    else field("unset", s.key);
  }
  field("boot", util::read_file("/proc/sys/kernel/random/boot_id", 256).value_or(""));
  return fmt::format("{:016x}-{}", storage::xxh3(text), text.size());
}

std::optional<NoopBuilt> noop_build(const Request& o, const fs::path& manifest_file) {
  if (!noop_eligible(o)) return std::nullopt;
  const auto build_dir = manifest::manifest_build_dir(manifest_file);
  if (!build_dir) return std::nullopt;
  const auto record = cache::read_noop_record(cache::noop_record_file(*build_dir));
  if (!record || (record->fingerprint != build_fingerprint(o)) || !cache::noop_record_holds(*record))
    return std::nullopt;
  // The lines of a build whose every job is up to date, printed as it prints them.
  report::ConsoleProgress console(std::cerr, {report::choose_progress_mode(o.config.flag("quiet")), 0}, &std::cerr);
  const size_t jobs = record->jobs.size();
  console.begin(jobs);
  for (const auto& job : record->jobs) console.served(job, report::ServedFrom::UpToDate);
  console.build_finished(report::BuildResult::Ok);
  return NoopBuilt{fs::path(record->program), exec::ExecSummary{jobs, 0, 0, jobs}};
}

std::vector<fs::path> plan_files(const manifest::Manifest& m, const toolchain::Toolchain& tc, const plan::Plan& plan) {
  std::vector<fs::path> files{m.file};
  files.insert(files.end(), m.glob_dirs.begin(), m.glob_dirs.end());
  for (const auto& job : plan.jobs) {
    if (!job.argv.empty()) files.push_back(job.argv.front());
    files.insert(files.end(), job.tools.begin(), job.tools.end());
    for (const auto& [name, value] : job.env)
      if (name == "LD_PRELOAD" && value)
        for (const auto& lib : util::split(*value, ':'))
          if (!lib.empty()) files.emplace_back(lib);
  }
  // Where the toolchain was looked for and what it holds: a new LLVM, a tool
  // or a device runtime installed changes one of these directories.
  const char* path = config::env_or_null("PATH");
  for (auto& dir : toolchain::searched_dirs(tc, m.targets, path ? path : "")) files.push_back(std::move(dir));
  return files;
}

int64_t racy_from(std::chrono::system_clock::time_point started) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>((started - kCoarsestTimestamp).time_since_epoch())
      .count();
}

}  // namespace ob::run
