#include "offload_build/plan/launcher_plan.hpp"

#include <algorithm>

#include "compile_planner.hpp"
#include "offload_build/toolchain/frontends/plain_compile.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::plan {

fs::path launcher_work_dir(const fs::path& output) {
  return output.parent_path() / (output.filename().string() + ".offload-build");
}

std::optional<fs::path> requested_depfile(const toolchain::frontend::CompileRequest& req, const fs::path& cwd) {
  if (!req.deps) return std::nullopt;
  fs::path file = req.deps->file ? fs::path(*req.deps->file)
                                 : fs::path(req.output_arg()).replace_extension(".d");
  return (cwd / file).lexically_normal();
}

std::optional<toolchain::frontend::Unchanged> ready_to_plan(toolchain::frontend::CompileRequest& req,
                                                            const fs::path& cwd, const toolchain::Toolchain& tc,
                                                            const std::optional<fs::path>& memo, bool check_output) {
  using namespace toolchain::frontend::unchanged;
  using Why = toolchain::frontend::Unchanged;
  std::error_code ec;
  if (!req.resolve_natives(tc, memo)) return Why{"no GPU found for the native offload arch: the compiler reports it", kNoGpu, {}};
  const fs::path output = (cwd / req.output_arg()).lexically_normal();
  if (check_output && !fs::is_directory(output.parent_path(), ec))
    return Why{"the output's directory does not exist", kPaths, {}};
  if (auto dep = requested_depfile(req, cwd); dep && !fs::is_directory(dep->parent_path(), ec))
    return Why{"the depfile's directory does not exist", kPaths, {}};
  if (req.opt_record && !fs::is_directory((cwd / *req.opt_record).lexically_normal().parent_path(), ec))
    return Why{"the optimization record's directory does not exist", kPaths, {}};
  return std::nullopt;
}

Plan make_launcher_plan(const toolchain::frontend::CompileRequest& req, const toolchain::Toolchain& given,
                        const fs::path& cwd, toolchain::DriverProbe* probe, size_t parallel_probes) {
  const toolchain::Toolchain tc = toolchain::with_cuda_path(given, req.cuda_path, cwd);
  Plan plan;
  plan.cwd = cwd;
  plan.program = (cwd / req.output_arg()).lexically_normal();
  const fs::path work = launcher_work_dir(plan.program);
  plan.build_dir = work;
  plan.directories = {work};

  // The caller's object is the host object; the rest lives in the work directory.
  compile_plan::Layout layout;
  layout.source = (cwd / req.source).lexically_normal();
  layout.source_arg = req.source;
  layout.dir = work;
  layout.package = work / "images.offload";
  layout.object = plan.program;
  layout.callers_depfile = requested_depfile(req, cwd);
  // Optimization records: the host pass writes the caller's file (a product,
  // cached with the object), as clang's host compile, its last cc1, does.
  if (req.opt_record) layout.record = (cwd / *req.opt_record).lexically_normal();
  // Like the compiler alone, write the object; a missing device runtime is
  // the link's to report (no output check runs in launcher mode).
  layout.check_device_runtime = false;

  const toolchain::frontend::Frontend& fe = toolchain::frontend::for_language(req.language);
  const auto compile =
      fe.launcher_compile(req, cwd, layout.record ? arg_path(*layout.record, cwd).string() : "");
  const auto steps = compile_plan::device_steps(*compile, layout, req.targets, cwd);
  std::optional<compile_plan::Listed> listed;
  if (probe && !compile->two_parse_reason())
    listed = compile_plan::probe_passes(fe, *compile, *probe, steps, layout, cwd, parallel_probes);
  compile_plan::add_compile(plan, tc, fe, *compile, layout, steps,
                            listed ? std::optional(listed->passes) : std::nullopt,
                            listed ? listed->host_codegen : toolchain::single_parse::Argv{});
  if (const auto* files = compile->module_files())
    compile_plan::add_module_files(plan, layout.unit, *files, compile_plan::resolve_uses(*files, {}));
  compile_plan::add_option_files(plan, req.keyed_files, req.keyed_files, cwd);  // every pass reads the caller's
  return plan;
}

Plan make_whole_compile_plan(const toolchain::frontend::CompileRequest& req, std::vector<std::string> argv,
                             const fs::path& cwd, std::vector<std::string> facts,
                             std::vector<fs::path> tools) {
  Plan plan;
  plan.cwd = cwd;
  plan.program = (cwd / req.output_arg()).lexically_normal();
  plan.build_dir = launcher_work_dir(plan.program);  // what the split's jobs write: not keyed
  Job job;
  job.kind = JobKind::HostCompile;
  job.source = (cwd / req.source).lexically_normal();
  job.argv = std::move(argv);
  job.inputs = {job.source};
  for (const auto& f : req.keyed_files) job.inputs.push_back((cwd / f).lexically_normal());
  job.outputs = {plan.program};
  if (req.opt_record) job.outputs.push_back((cwd / *req.opt_record).lexically_normal());
  job.depfile = requested_depfile(req, cwd);
  job.keep_depfile = job.depfile.has_value();
  if (!job.depfile) job.depfile = plan.build_dir / "compile.d";
  job.tools = std::move(tools);
  job.inode_sensitive = true;
  job.stable_names = true;  // stored only when every compile of the split used them
  job.key_facts = std::move(facts);
  plan.add(std::move(job));
  return plan;
}

Plan make_plain_compile_plan(const toolchain::frontend::CompileRequest& req, const fs::path& compiler,
                             const fs::path& cwd, std::vector<std::string> facts) {
  Plan plan = make_whole_compile_plan(req, {}, cwd, std::move(facts), {});
  Job& job = plan.jobs.front();
  job.argv = toolchain::frontend::plain_compile_argv(req, arg_path(*job.depfile, cwd).string());
  job.argv.front() = compiler.string();
  if (!job.keep_depfile) plan.directories = {plan.build_dir};
  job.inode_sensitive = req.names_kernels;
  job.stable_names = false;  // use_stable_names says whether the library names them
  job.records_lookups = true;
  return plan;
}

namespace {

// Every program a link through clang-linker-wrapper may run.
std::vector<fs::path> link_tools(const toolchain::Toolchain& tc) {
  std::vector<fs::path> tools{tc.linker_wrapper, tc.root / "bin/ld.lld", "/usr/bin/ld"};
  if (tc.cuda_path) {
    tools.push_back(*tc.cuda_path / "bin/nvlink");
    tools.push_back(*tc.cuda_path / "bin/ptxas");
  }
  std::error_code ec;
  std::erase_if(tools, [&](const fs::path& t) { return !fs::exists(t, ec); });
  return tools;
}

// The programs and startup files clang looks for under a -B prefix before
// anywhere else (a directory, or a prefix of names: -B/opt/x/cross-): the
// linkers (ld, ld.lld, ...-ld), the assembler and the crt objects.
void prefix_tools(const fs::path& prefix, std::vector<fs::path>& tools) {
  std::error_code ec;
  const bool dir = fs::is_directory(prefix, ec);
  const fs::path in = dir ? prefix : prefix.parent_path();
  const std::string start = dir ? std::string() : prefix.filename().string();
  size_t seen = 0;
  for (fs::directory_iterator it(in, ec), end; !ec && it != end && seen < 4096; it.increment(ec), ++seen) {
    const std::string name = it->path().filename().string();
    if (!util::starts_with(name, start)) continue;
    const std::string rest = name.substr(start.size());
    const bool wanted = util::starts_with(rest, "ld") || rest.find("-ld") != std::string::npos || rest == "as" ||
                        util::ends_with(rest, ".o");
    if (wanted && it->is_regular_file(ec)) tools.push_back(it->path());
  }
}

// What a link reads that its argv names only inside options, so that no
// linker's dependency file lists: what a -B prefix holds (prefix_tools), and
// a response file handed to the linker inside -Wl, (-Wl,@FILE).
void option_files(const std::vector<std::string>& argv, const fs::path& cwd, std::vector<fs::path>& tools,
                  std::vector<fs::path>& inputs) {
  auto full = [&](const std::string& p) { return (cwd / p).lexically_normal(); };  // an absolute p stays
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& t = argv[i];
    if ((t == "-B" || t == "--prefix") && i + 1 < argv.size()) prefix_tools(full(argv[++i]), tools);
    else if (util::starts_with(t, "--prefix=")) prefix_tools(full(t.substr(9)), tools);
    else if (util::starts_with(t, "-B") && t.size() > 2) prefix_tools(full(t.substr(2)), tools);
    else if (util::starts_with(t, "-Wl,"))
      for (const auto& part : util::split(t.substr(4), ','))
        if (part.size() > 1 && part.front() == '@') inputs.push_back(full(part.substr(1)));
  }
}

}  // namespace

Job offload_link_job(const toolchain::frontend::LinkRequest& request, std::vector<fs::path> inputs,
                     const fs::path& program, const fs::path& work, const fs::path& cwd,
                     const toolchain::Toolchain& tc) {
  Job link;
  link.kind = JobKind::Link;
  link.unit = 1;
  link.inputs = std::move(inputs);
  // The output spelled as the executor writes it (it renames a temporary into place).
  link.depfile = work / "link.d";
  link.argv = request.writing(arg_path(program, cwd).string(), arg_path(*link.depfile, cwd).string());
  link.outputs = {program};
  link.tools = link_tools(tc);
  option_files(request.argv, cwd, link.tools, link.inputs);
  return link;
}

std::vector<JobId> append_unit(Plan& into, const Plan& from, size_t unit) {
  const JobId offset = into.jobs.size();
  std::vector<JobId> writers;
  for (Job job : from.jobs) {
    for (auto& d : job.deps) d += offset;
    job.unit = unit;
    const bool writes = std::find(job.outputs.begin(), job.outputs.end(), from.program) != job.outputs.end();
    const JobId id = into.add(std::move(job));
    if (writes) writers.push_back(id);
  }
  into.directories.insert(into.directories.end(), from.directories.begin(), from.directories.end());
  return writers;
}

}  // namespace ob::plan
