// Launcher mode: every compile it sees is cached, as ccache caches it. One
// that is not split (a plain C/C++ compile, host-only OpenMP, GCC, targets
// not modeled, a clang without llvm-offload-binary) runs as one job: the
// caller's own command (through prefix_command when it compiles no device
// code), writing a depfile of every file it read and recording the lookups
// that found nothing, keyed as every job is (the compiler's identity, the
// argv with output placeholders, the environment, each file read), served
// and stored by the same plan run as a split compile (launcher_run.cpp).
#include "launcher_plain.hpp"

#include <fmt/core.h>

#include "launcher_roots.hpp"
#include "launcher_run.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/run/session.hpp"
#include "offload_build/run/launcher_prefix.hpp"
#include "offload_build/toolchain/frontends/compiler_wrapper.hpp"
#include "offload_build/toolchain/frontends/plain_compile.hpp"

namespace ob::run {

namespace {

namespace fe = toolchain::frontend;
using namespace fe::unchanged;

// Why a compile is not split that still lets it be cached whole: it compiles
// no device code the split would run, or it does in a way the split does not
// model (its targets, its LLVM), or its compiler is not clang.
bool cacheable_reason(const std::string& code) { return code == kNotOffload || code == kTargets || code == kCompiler; }

// A GCC compile's setup (no frontend splits it): the compiler found, the
// roots, paths under the base directories relative. nullopt: not GCC.
std::optional<LaunchSetup> gcc_setup(const std::vector<std::string>& command, const Request& o) {
  LaunchSetup s;
  std::error_code ec;
  s.cwd = fs::current_path(ec);
  if (ec) return std::nullopt;
  const auto compiler = resolve_program(command.front(), s.cwd);
  if (!compiler || (!fe::is_gcc(command.front()) && !fe::is_gcc(fs::canonical(*compiler, ec)))) return std::nullopt;
  s.compiler = *compiler;
  std::tie(s.bases, s.anchor) = launcher_roots(o, s.cwd);
  s.argv = command;
  for (const auto& base : s.bases) s.argv = fe::relative_to_base(std::move(s.argv), base, s.cwd);
  return s;
}

// Why the compile's files rule it out (the compiler reports them): a file an
// option names, the output's or the depfile's directory missing.
std::optional<Unchanged> not_ready(const fe::CompileRequest& req, const fs::path& cwd) {
  if (auto unusable = req.unusable_files(cwd)) return unusable;
  std::error_code ec;
  if (!fs::is_directory((cwd / req.output_arg()).lexically_normal().parent_path(), ec))
    return Unchanged{"the output's directory does not exist", kPaths, {}};
  if (auto dep = plan::requested_depfile(req, cwd); dep && !fs::is_directory(dep->parent_path(), ec))
    return Unchanged{"the depfile's directory does not exist", kPaths, {}};
  return std::nullopt;
}

// What decides the object besides the argv, the environment and the files:
// the compilation directory debug info names, PATH where device code is
// compiled (ptxas, offload-arch are found there).
std::vector<std::string> plain_facts(const fe::CompileRequest& req, const fs::path& cwd) {
  std::vector<std::string> facts;
  if ((req.debug_info || req.tracks_locations) && !req.sets_compilation_dir)
    facts.push_back("compilation directory=" + cwd.string());
  if (req.names_kernels) {
    const char* path = config::env_or_null("PATH");
    facts.push_back(std::string("PATH=") + (path ? path : ""));
  }
  return facts;
}

}  // namespace

int cache_plain(Launch& l, const Request& o, const std::function<Session&()>& session) {
  // --dry-run prints the command, --no-cache and OFFLOAD_BUILD_DISABLE run it as it is.
  if (o.dry_run || o.config.flag("no_cache") || l.given.empty() || !cacheable_reason(l.why.code)) return -1;
  if (fe::is_compiler_wrapper_name(l.given.front())) return -1;  // mpicxx wrapping g++: its compiler is its own
  std::optional<LaunchSetup> own;
  fe::Dialect dialect = fe::Dialect::Clang;
  if (!l.setup) {
    own = gcc_setup(l.command, o);
    if (!own) return -1;
    dialect = fe::Dialect::Gcc;
  } else if (!l.setup->frontend->lists_reads()) {
    return -1;  // flang writes no depfile: what it read is not known
  }
  const LaunchSetup& setup = own ? *own : *l.setup;
  auto parsed = fe::parse_plain(setup.argv, dialect);
  if (!parsed.compile) {
    l.why = parsed.unchanged();
    return -1;
  }
  fe::CompileRequest& req = *parsed.compile;
  if (auto why = not_ready(req, setup.cwd)) {
    l.why = std::move(*why);
    return -1;
  }
  Split split;
  split.plan = plan::make_plain_compile_plan(req, setup.compiler, setup.cwd, plain_facts(req, setup.cwd));
  split.plan.base_dirs = setup.bases;
  split.plan.name_anchor = setup.anchor;
  plan::Job& job = split.plan.jobs.front();
  auto [argv, env, prefixed] = through_prefix(job.argv, l.prefix, l.command);
  if (prefixed) job.tools.push_back(setup.compiler);  // argv[0] is the prefix's
  job.argv = std::move(argv);
  job.env.insert(job.env.end(), env.begin(), env.end());
  split.project = fs::path(req.output_arg()).filename().string();
  split.stable_names = req.names_kernels;
  split.failure_is_final = true;
  split.verbose = fmt::format("caching the compile as one job ({})", l.why.reason);
  Unchanged failed;
  const auto code =
      run_path([&](Session&) { return PathAnswer{std::move(split), std::nullopt}; }, setup, session(), l.command, failed);
  if (!code) l.why = {"the cached compile could not run: " + l.why.reason, l.why.code, {}};
  return code.value_or(-1);
}

}  // namespace ob::run
