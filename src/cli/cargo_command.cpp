// `offload-build cargo build|run`: the two passes through cargo (see cargo_command.hpp).
#include "offload_build/cli/cargo_command.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>

#include <fmt/core.h>

#include "cargo_args.hpp"
#include "cargo_cache.hpp"
#include "build_pictures.hpp"
#include "cargo_run.hpp"
#include "summary.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/report/timeline.hpp"
#include "offload_build/report/timings_html.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "offload_build/toolchain/frontends/rust_kernels.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cli {

namespace {

using cargo_run::run_cargo;

Result<std::vector<Target>> offload_targets(const GlobalOptions& o, const cargo::Package& pkg) {
  std::vector<std::string> spellings = o.targets.empty() ? pkg.targets : o.targets;
  if (spellings.empty()) spellings = {"host"};
  std::vector<Target> out;
  for (const auto& s : spellings)
    for (const auto& one : util::split(s, ',')) {
      auto t = resolve_target(one);
      if (!t) return Error::usage((o.targets.empty() ? "[package.metadata.offload] targets " : "--target ") +
                                  one + ": " + t.error().message);
      if (std::find(out.begin(), out.end(), *t) == out.end()) out.push_back(*t);
    }
  return out;
}

// A crate whose library defines kernels: each gets a device pass per target.
struct KernelCrate {
  cargo::Package pkg;
  rust::CrateScan scan;
  std::vector<std::string> kernels;  // their symbols, for the host device's image link
  std::vector<fs::path> dirs;        // its directory and its local dependencies': the cache key's files
};

// Everything `cargo` needs, found once.
struct Session {
  const GlobalOptions& o;
  fs::path dir;
  Toolchain tc;
  fs::path cargo_bin;
  cargo::UserArgs user;
  cargo::Package pkg;                 // the package cargo builds
  std::vector<KernelCrate> crates;    // it, and the local crates it depends on, that define kernels
  std::vector<Target> targets;
  size_t step = 0, steps = 0;
  ExecSummary jobs{};  // each step a job: " (cached)" served, " (fresh)" up to date, else run
  report::StepTimeline* timeline = nullptr;  // --timings, --trace: each step timed

  void progress(const std::string& what, const std::string& note = "") {
    std::cerr << fmt::format("[{}/{}] {}{}\n", ++step, steps, what, note) << std::flush;
    count(note);
  }
  void count(const std::string& note) {
    ++jobs.jobs_total;
    ++(note == " (cached)" ? jobs.jobs_served : note == " (fresh)" ? jobs.jobs_up_to_date : jobs.jobs_run);
  }
  // Run (or, for --dry-run, print) a plain tool.
  Result<void> tool(const std::vector<std::string>& argv, const std::string& what) {
    if (o.dry_run) {
      std::cout << util::shell_join(argv) << '\n';
      return {};
    }
    report::TimedStep step(timeline, what.substr(0, what.find(' ')), "", what);
    progress(what);
    OB_TRY(cargo_run::run_tool(argv, dir, what));
    step.done("ran");
    return {};
  }
};

// The crates that get device passes: the package itself and the local crates it
// depends on whose library defines kernels (checked here, before cargo runs);
// the package's own library when none does (its checks still run).
Result<void> find_kernel_crates(Session& s, std::string_view metadata) {
  auto dirs_of = [&](const cargo::Package& c, const std::vector<cargo::Package>& deps) {
    std::vector<fs::path> dirs{c.manifest_path.parent_path()};
    for (const auto& d : deps) dirs.push_back(d.manifest_path.parent_path());
    return dirs;
  };
  const std::vector<cargo::Package> deps = cargo::local_dependencies(metadata, s.pkg);
  std::vector<KernelCrate> candidates;
  if (s.pkg.lib) candidates.push_back({s.pkg, {}, {}, dirs_of(s.pkg, deps)});
  for (const auto& d : deps) candidates.push_back({d, {}, {}, {}});
  for (auto& c : candidates) {
    c.scan = rust::scan_crate(c.pkg.lib_root);
    OB_TRY(rust::check_crate(c.scan, c.pkg.device_cfg, s.dir));
    c.kernels = rust::device_kernel_symbols(c.scan);
    if (c.kernels.empty()) continue;
    if (c.dirs.empty()) c.dirs = dirs_of(c.pkg, cargo::local_dependencies(metadata, c.pkg));
    s.crates.push_back(c);
  }
  if (!s.crates.empty()) return {};
  if (s.pkg.lib) {
    s.crates.push_back(candidates.front());  // the package's own library, without kernels
    return {};
  }
  return Error::usage(fmt::format(
      "package {} has no library target and depends on no local crate whose library defines "
      "kernels: the device pass compiles the crate that holds the kernels as a library (src/lib.rs) "
      "with --cfg {}; move the kernels and the code that launches them into src/lib.rs and keep fn "
      "main in src/main.rs (see examples/rust-cargo), or into a library crate the package depends "
      "on (see examples/rust-workspace)",
      s.pkg.name, s.pkg.device_cfg));
}

Result<Session> open_session(const GlobalOptions& o, const std::vector<std::string>& cargo_args) {
  std::error_code ec;
  if (!fs::is_directory(o.directory, ec))
    return Error::usage("-C " + o.directory.string() + ": no such directory");
  auto tc = find_toolchain(std::nullopt);
  if (!tc) return tc.error();
  auto rust = rust::find_rust_toolchain(std::nullopt);
  if (!rust) return rust.error();
  tc->rust = *rust;
  if (o.verbose) std::cerr << "offload-build: rust: " << rust->describe() << '\n';
  Session s{o, fs::absolute(o.directory).lexically_normal(), *tc, rust->cargo.value_or("cargo"),
            cargo::split_user_args(cargo_args), {}, {}, {}};
  std::vector<std::string> meta{s.cargo_bin.string(), "metadata", "--format-version", "1", "--offline"};
  for (size_t i = 0; i < cargo_args.size(); ++i)
    if (cargo_args[i] == "--manifest-path" && i + 1 < cargo_args.size())
      meta.insert(meta.end(), {"--manifest-path", cargo_args[i + 1]});
  auto out = exec::capture(Command{meta, s.dir, {{"RUSTC", rust->rustc.string()}}});
  if (!out) return out.error();
  if (out->exit_code != 0)
    return Error::usage(fmt::format("`cargo metadata` failed in {}:\n{}", s.dir.string(), util::trim(out->err)));
  auto pkg = cargo::parse_metadata(out->out, s.dir, s.user.package);
  if (!pkg) return pkg.error();
  s.pkg = *pkg;
  OB_TRY(find_kernel_crates(s, out->out));
  auto targets = offload_targets(o, s.pkg.targets.empty() ? s.crates.front().pkg : s.pkg);
  if (!targets) return targets.error();
  s.targets = *targets;
  for (const auto& c : s.crates) {
    OB_TRY(rust::check_device_core(c.scan, s.targets, rust->sysroot(), c.pkg.device_cfg));
  }
  OB_TRY(rustc::find_device_stub(s.targets, s.tc));
  s.steps = s.crates.size() * s.targets.size() + (s.tc.rust->flavour == rust::Flavour::Native ? 2 : 4);
  return s;
}

// The device image's key: the pass with paths relative to the workspace, and
// `files`, the digest of the kernel crate's files and its local dependencies'.
std::string image_key(const Session& s, const KernelCrate& c, const cargo::Invocation& inv,
                      const std::string& files) {
  cargo_cache::KeyInputs in;
  in.rustc_version = s.tc.rust->version_line;
  in.llvm = s.tc.root.filename().string();
  const std::string root = c.pkg.workspace_root.string() + "/";
  for (size_t i = 1; i < inv.argv.size(); ++i) {  // not cargo's own path
    std::string a = inv.argv[i];
    for (size_t at; (at = a.find(root)) != std::string::npos;) a.replace(at, root.size(), "<workspace>/");
    in.argv.push_back(a);
  }
  in.kernels = c.kernels;
  in.rustflags = cargo_run::user_rustflags();
  in.files = files;
  return cargo_cache::key(in);
}

// One device pass through cargo (and, for the host device, the image link),
// or its image from the cache; reruns it from scratch if cargo thinks it is
// fresh but the output is gone.
Result<void> device_pass(Session& s, cargo_cache::DeviceCache& cache, const KernelCrate& c, const Target& t,
                         const std::string& files) {
  const auto inv = cargo::device_pass(s.cargo_bin, s.tc, c.pkg, s.user, t);
  const fs::path image = cargo::device_image(c.pkg, t);
  const bool link = rustc::needs_device_link(t);
  auto image_link = [&](const fs::path& archive) {
    return rustc::device_link(s.tc, t, c.kernels, archive, image);
  };
  if (s.o.dry_run) {
    std::cout << cargo_run::display(inv) << '\n';
    if (link) std::cout << util::shell_join(image_link("<the archive cargo names>")) << '\n';
    return {};
  }
  fs::create_directories(image.parent_path());
  const std::string what = fmt::format("device {} {}", t.short_name(), c.pkg.name);
  report::TimedStep step(s.timeline, "device", t.short_name(), what);
  const std::string key = cache.enabled() ? image_key(s, c, inv, files) : "";
  if (!key.empty() && cache.restore(key, image, what + " (cargo)")) {
    step.done("cached");
    s.progress(what, " (cached)");
    return {};
  }
  for (int attempt = 0;; ++attempt) {
    auto out = run_cargo(inv, s.dir);
    if (!out) return out.error();
    if (out->exit_code != 0)
      return Error::failure(fmt::format("the device pass of {} for target {} failed (cargo's messages above say why)\n  command: {}",
                                        c.pkg.name, t.short_name(), cargo_run::display(inv)));
    bool fresh = false;
    for (const auto& m : out->messages)
      if (auto a = cargo::parse_artifact(m); a && a->package_id == c.pkg.id) fresh = a->fresh;
    const std::optional<fs::path> output =
        link ? cargo::device_archive(out->messages, c.pkg) : std::optional(cargo::device_output(c.pkg, t));
    std::error_code ec;
    if (output && fs::exists(*output, ec)) {
      const bool linked = fs::exists(image, ec) && fs::last_write_time(image, ec) >= fs::last_write_time(*output, ec);
      if (link && !(fresh && linked)) OB_TRY(cargo_run::run_tool(image_link(*output), s.dir, "image link " + c.pkg.name));
      if (!key.empty()) cache.store(key, image, what + " (cargo)");
      step.done(fresh ? "up-to-date" : "ran");
      s.progress(what, fresh ? " (fresh)" : "");
      return {};
    }
    if (attempt > 0)
      return Error::failure(fmt::format("cargo's device pass of {} for {} wrote no {}", c.pkg.name, t.short_name(),
                                        output ? output->string() : "static library"));
    OB_TRY(cargo_run::run_tool({s.cargo_bin.string(), "clean", "-p", c.pkg.name, "--target", t.triple, "--target-dir",
                                cargo::device_target_dir(c.pkg, t).string()},
                               s.dir, "cargo clean"));
  }
}

// The device passes, package and host pass; the programs cargo built (none
// under --dry-run).
Result<std::vector<fs::path>> build_passes(Session& s, std::chrono::steady_clock::time_point started) {
  const GlobalOptions& o = s.o;
  const bool native = s.tc.rust->flavour == rust::Flavour::Native;
  if (o.dry_run) std::cout << "cd " << util::shell_quote(s.dir.string()) << '\n';

  std::vector<clang_openmp::Image> images;
  {
    cargo_cache::DeviceCache cache(o);
    for (const auto& c : s.crates) {
      // Read once per crate, whatever the number of targets.
      const std::string files = cache.enabled() ? cargo_cache::files_digest(c.pkg.workspace_root, c.dirs) : "";
      for (const auto& t : s.targets) {
        auto done = device_pass(s, cache, c, t, files);
        if (!done) return done.error();
        images.push_back({cargo::device_image(c.pkg, t), t});
      }
    }
    cache.finish();
  }
  const fs::path off = cargo::offload_dir(s.pkg, s.user.profile);
  if (!o.dry_run) fs::create_directories(off);
  const fs::path package = off / (s.pkg.lib.value_or(rustc::crate_name(s.pkg.name)) + ".offload");
  OB_TRY(s.tool(clang_openmp::package(s.tc, images, package), "package " + s.pkg.name));
  const std::string hash = o.dry_run ? "HASH" : cargo::content_hash(util::read_file(package, util::kMaxBuildOutput).value_or(""));
  std::optional<fs::path> embedded, host_out;
  if (native) {
    host_out = off / ("native-" + hash) / "host.out";  // -Zoffload=Host= wants this name
    if (!o.dry_run) {
      fs::create_directories(host_out->parent_path());
      fs::copy_file(package, *host_out, fs::copy_options::overwrite_existing);
    }
  } else {
    const fs::path stub = off / "offload-stub.ll";
    OB_TRY(s.tool(rustc::embed_stub(stub), "package " + stub.filename().string()));
    embedded = off / ("devimg-" + hash + ".o");  // a new image changes the host flags: cargo relinks
    OB_TRY(s.tool(rustc::embed(s.tc, stub, package, *embedded), "host " + s.pkg.name));
    std::error_code ec;
    for (fs::directory_iterator it(off, ec), end; !o.dry_run && !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (util::starts_with(name, "devimg-") && it->path() != *embedded) fs::remove(it->path(), ec);
    }
  }

  const auto host = cargo::host_pass(s.cargo_bin, s.tc, s.pkg, s.user, s.targets, embedded, host_out,
                                     cargo_run::user_rustflags());
  if (o.dry_run) {
    std::cout << cargo_run::display(host) << '\n' << std::flush;
    return std::vector<fs::path>{};
  }
  report::TimedStep step(s.timeline, "link", "", "link " + s.pkg.name);
  std::cerr << fmt::format("[{}/{}] link {}\n", ++s.step, s.steps, s.pkg.name) << std::flush;
  auto out = run_cargo(host, s.dir);
  if (!out) return out.error();
  if (out->exit_code != 0)
    return Error::failure("the host pass failed (cargo's messages above say why)\n  command: " + cargo_run::display(host));
  std::vector<fs::path> programs;
  bool fresh = true;  // cargo compiled none of the package's targets
  for (const auto& m : out->messages)
    if (auto a = cargo::parse_artifact(m); a && a->package_id == s.pkg.id) {
      fresh = fresh && a->fresh;
      if (a->executable) programs.push_back(*a->executable);
    }
  step.done(fresh ? "up-to-date" : "ran");
  s.count(fresh ? " (fresh)" : "");
  for (const auto& p : programs) std::cerr << "offload-build: built " << p.string() << '\n';
  print_summary(s.jobs, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), o.quiet);
  return programs;
}

}  // namespace

Result<int> cargo(const GlobalOptions& o, const std::vector<std::string>& args,
                  const std::vector<std::string>& before) {
  exec::set_echo_policy({o.verbose, nullptr});
  auto parsed = cargo_args::parse({{"offload-build"}, before, {"cargo"}}, args);
  if (!parsed) return parsed.error();
  const auto started = std::chrono::steady_clock::now();
  auto session = open_session(o, parsed->cargo);
  if (!session) return session.error();
  Session& s = *session;
  std::optional<report::StepTimeline> timeline;
  if (wants_pictures(o)) s.timeline = &timeline.emplace(s.pkg.name, "cargo");
  auto built = build_passes(s, started);
  if (timeline)  // also when a pass failed: it is marked
    write_pictures(o, timeline->finish(built ? BuildResult::Ok : BuildResult::Failed),
                   cargo::offload_dir(s.pkg, s.user.profile) / report::kTimingsFileName, false);
  if (!built) return built.error();
  if (o.dry_run || !parsed->run) return exit_code::ok;
  const std::vector<fs::path>& programs = *built;
  if (programs.size() != 1)
    return Error::usage(fmt::format("cargo built {} programs; say which to run with --bin NAME", programs.size()));
  return run_program(o, {parsed->verify, parsed->program}, programs.front());
}

}  // namespace ob::cli
