// Parsing a clang command line into a CompileRequest (the scan); the offload
// targets it names are resolved in clang_cli_targets.cpp.
#include "offload_build/toolchain/frontends/clang_cli.hpp"

#include <string_view>

#include "clang_cli_internal.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::clang_cli {

namespace {

using util::starts_with;

// Options whose value is the next argument when written alone.
constexpr std::string_view kSeparate[] = {
    "-D", "-U", "-I", "-include", "-imacros", "-isystem", "-iquote", "-idirafter",
    "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot", "-cxx-isystem", "-mllvm",
    "-target", "--sysroot", "-L", "-l", "-B", "-Xlinker", "-rpath", "-resource-dir", "--gcc-toolchain"};

// Commands that do not compile one source to an object, or write files
// named after the output (which the split passes would name differently).
constexpr std::string_view kForeignExact[] = {
    "-E", "-S", "-M", "-MM", "-MG", "-v", "-H", "-###", "--version", "-dumpversion",
    "-dumpmachine", "-help", "--help", "--coverage"};
constexpr std::string_view kForeignPrefix[] = {
    "-MJ", "-emit-", "-print-", "--print-", "-ftime-trace",
    "-fdump-", "-frecord-", "-grecord-", "-gsplit-dwarf", "-fmodules",
    "--serialize-diagnostics", "-fembed-offload-object", "-ftest-coverage", "-fprofile-arcs",
    "-fcoverage-mapping", "-fdriver-only", "-fproc-stat-report", "-fsyntax-only", "-Wp,",
    "--cuda-", "--offload-", "--no-offload-", "-Xpreprocessor"};

// Of those, the ones that ask for something other than an object.
constexpr std::string_view kOtherOutputExact[] = {
    "-E", "-S", "-M", "-MM", "-###", "--version", "-dumpversion", "-dumpmachine", "-help", "--help"};
constexpr std::string_view kOtherOutputPrefix[] = {"-emit-", "-print-", "--print-", "-fsyntax-only",
                                                   "-fdriver-only"};

// Options passed to every pass as written (joined forms included).
constexpr std::string_view kCommonPrefix[] = {
    "-D", "-U", "-I", "-O", "-W", "-w", "-f", "-m", "-g", "-std=", "--std=", "-stdlib=",
    "-isystem", "-iquote", "-idirafter", "-include", "-imacros", "-isysroot", "-cxx-isystem",
    "--sysroot=", "--target=", "-L", "-l", "-B", "--gcc-toolchain=", "--gcc-install-dir=",
    "--cuda-path=", "--rocm-path=", "--libomptarget-", "-resource-dir=", "-nogpu", "-nobuiltininc",
    "-nostdinc", "-nostdlib", "-nodefaultlibs", "-nostartfiles", "-pthread", "-pedantic", "-ansi",
    "-pipe", "-Qunused-arguments", "-rdynamic", "-shared", "-static",
    "-R"};  // remarks (-Rpass=...): each cc1 prints its own, in clang's order
constexpr std::string_view kCommonExact[] = {"-c", "-pie", "-no-pie"};

// -Xclang values that change what the compiler produces beyond an object.
constexpr std::string_view kForeignCc1[] = {
    "-fembed-offload-object", "-emit", "-ast", "-dump", "-fsyntax-only", "-E", "-S",
    "-fopenmp-host-ir-file-path", "-fopenmp-is-target-device"};

template <size_t N>
bool any_exact(const std::string_view (&set)[N], std::string_view t) {
  for (auto s : set)
    if (t == s) return true;
  return false;
}
template <size_t N>
bool any_prefix(const std::string_view (&set)[N], std::string_view t) {
  for (auto s : set)
    if (starts_with(t, s)) return true;
  return false;
}

bool enables_debug_info(std::string_view t) {
  if (!starts_with(t, "-g") || starts_with(t, "-gno-") || starts_with(t, "-gz")) return false;
  return t != "-g0" && t != "-ggdb0";
}

}  // namespace

bool takes_separate_value(std::string_view t) {
  return any_exact(kSeparate, t) || t == "-o" || t == "-x" || t == "-MF" || t == "-MT" ||
         t == "-MQ" || t == "-Xclang" || t == "-Xopenmp-target" || starts_with(t, "-Xopenmp-target=") ||
         starts_with(t, "-Xarch_");
}

std::string CompileRequest::output_arg() const {
  if (output) return *output;
  return fs::path(source).filename().replace_extension(".o").string();
}

std::string option_name(std::string_view token) {
  const size_t eq = token.find('=');
  return util::shorten(token.substr(0, eq == std::string_view::npos ? eq : eq + 1), 64);
}

Parsed parse(const std::vector<std::string>& argv) {
  Scan s;
  if (argv.empty()) return {std::nullopt, "empty command", unchanged::kNotCompile, {}};
  s.req.compiler = argv.front();
  auto pass = [](std::string why, const char* code = unchanged::kOption, std::string_view option = {}) {
    return Parsed{std::nullopt, std::move(why), code, option_name(option)};
  };
  std::optional<std::string> lang;  // the -x in effect; nullopt: from the extension
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& t = argv[i];
    auto next = [&]() -> std::optional<std::string> {
      if (i + 1 >= argv.size()) return std::nullopt;
      return argv[++i];
    };
    auto add = [&](ArgKind kind, std::vector<std::string> tokens, std::string value = {},
                   std::string triple = {}) {
      s.req.args.push_back({kind, std::move(tokens), std::move(value), std::move(triple)});
    };
    // Two-token or joined options with a value: "-o F" / "-oF".
    auto valued = [&](std::string_view opt, ArgKind kind) -> std::optional<Parsed> {
      if (t == opt) {
        auto v = next();
        if (!v) return pass("option " + t + " without a value", unchanged::kOption, t);
        add(kind, {t, *v}, *v);
      } else {
        add(kind, {t}, t.substr(opt.size()));
      }
      return std::nullopt;
    };

    if (t == "-" || t == "--") return pass("input from stdin or after --", unchanged::kNotCompile);
    if (t.empty() || t.front() != '-') {
      s.inputs.push_back({t, lang});
      add(ArgKind::Input, {t}, t);
      continue;
    }
    std::optional<Parsed> stop;
    if (t == "-c") {
      s.compile_only = true;
      add(ArgKind::Common, {t});
    } else if (starts_with(t, "-o")) {
      stop = valued("-o", ArgKind::Output);
      if (!stop) s.req.output = s.req.args.back().value;
      if (!stop && s.req.output == "-") return pass("output to stdout", unchanged::kNotCompile);
    } else if (starts_with(t, "-x")) {
      std::string value = t.size() > 2 ? t.substr(2) : next().value_or("");
      add(ArgKind::Common, t.size() > 2 ? std::vector<std::string>{t} : std::vector{t, value});
      lang = value == "none" ? std::nullopt : std::optional(value);
    } else if (t == "-MD" || t == "-MMD") {
      if (!s.req.deps) s.req.deps.emplace();
      s.req.deps->user_headers_only = t == "-MMD";
      add(ArgKind::DepMode, {t});
    } else if (starts_with(t, "-MF")) {
      stop = valued("-MF", ArgKind::DepFile);
      if (!stop) s.dep_file = s.req.args.back().value;
    } else if (starts_with(t, "-MT") || starts_with(t, "-MQ")) {
      const std::string opt = t.substr(0, 3);
      stop = valued(opt, ArgKind::DepTarget);
      if (!stop) s.dep_targets.push_back(opt + s.req.args.back().value);
    } else if (t == "-MP") {
      s.dep_phony = true;
      add(ArgKind::DepPhony, {t});
    } else if (t == "-fopenmp" || starts_with(t, "-fopenmp=") || t == "-fno-openmp") {
      s.openmp = t == "-fopenmp" || t == "-fopenmp=libomp";
      add(ArgKind::Common, {t});
    } else if (t == "-save-temps" || starts_with(t, "-save-temps=") || t == "--save-temps" ||
               starts_with(t, "--save-temps=")) {
      s.req.save_temps = true;  // split as the driver's own commands (make_listing_plan)
      add(ArgKind::Common, {t});
    } else if (starts_with(t, "-fsave-optimization-record") || t == "-fno-save-optimization-record" ||
               starts_with(t, "-foptimization-record-passes=")) {
      // Any of them turns optimization records on, the last of them and
      // -fno-save-optimization-record decides (clang's willEmitRemarks).
      s.records = t != "-fno-save-optimization-record";
      if (starts_with(t, "-fsave-optimization-record=")) s.record_format = t.substr(t.find('=') + 1);
      add(ArgKind::Common, {t});
    } else if (starts_with(t, "-foptimization-record-file=")) {
      s.records = true;
      add(ArgKind::RecordFile, {t}, t.substr(t.find('=') + 1));
      s.record_file = s.req.args.back().value;
    } else if (starts_with(t, "-fopenmp-targets=") || starts_with(t, "--offload-targets=")) {
      const std::string list = t.substr(t.find('=') + 1);
      add(ArgKind::OffloadTargets, {t}, list);
      for (const auto& x : util::split(list, ',')) s.triples.push_back(x);
    } else if (starts_with(t, "--offload-arch=")) {
      const std::string list = t.substr(t.find('=') + 1);
      add(ArgKind::OffloadArch, {t}, list);
      for (const auto& x : util::split(list, ',')) s.archs.push_back(x);
    } else if (t == "-Xopenmp-target" || starts_with(t, "-Xopenmp-target=")) {
      auto v = next();
      if (!v) return pass("option " + t + " without a value", unchanged::kOption, t);
      add(ArgKind::XOpenmpTarget, {t, *v}, *v, t.size() > 15 ? t.substr(16) : "");
    } else if (starts_with(t, "-Xarch_")) {
      auto v = next();
      if (!v) return pass("option " + t + " without a value", unchanged::kOption, t);
      add(ArgKind::XArch, {t, *v}, t.substr(7));
    } else if (t == "-Xclang") {
      auto v = next();
      if (!v) return pass("option -Xclang without a value", unchanged::kOption, t);
      if (any_prefix(kForeignCc1, *v)) return pass("-Xclang " + *v, unchanged::kOption, "-Xclang " + *v);
      add(ArgKind::Common, {t, *v});
    } else if (any_exact(kForeignExact, t) || any_prefix(kForeignPrefix, t)) {
      if (t == "--offload-jobs" || starts_with(t, "--offload-jobs=") || t == "--offload-new-driver")
        add(ArgKind::Common, {t});
      else
        return pass("option " + t, any_exact(kOtherOutputExact, t) || any_prefix(kOtherOutputPrefix, t)
                                        ? unchanged::kNotCompile
                                        : unchanged::kOption, t);
    } else if (any_exact(kSeparate, t)) {
      auto v = next();
      if (!v) return pass("option " + t + " without a value", unchanged::kOption, t);
      add(ArgKind::Common, {t, *v});
    } else if (any_exact(kCommonExact, t) || any_prefix(kCommonPrefix, t)) {
      if (enables_debug_info(t)) s.req.debug_info = true;
      if (t == "-g0" || t == "-ggdb0") s.req.debug_info = false;
      if (starts_with(t, "-fdebug-compilation-dir") || starts_with(t, "-ffile-compilation-dir"))
        s.req.sets_compilation_dir = true;
      if (starts_with(t, "-Rpass") || starts_with(t, "-fprofile-sample-use") || t == "-fstack-usage")
        s.req.tracks_locations = true;
      add(ArgKind::Common, {t});
    } else {
      return pass("unknown option " + t, unchanged::kOption, t);
    }
    if (stop) return *stop;
  }
  return finish(std::move(s));
}

}  // namespace ob::clang_cli
