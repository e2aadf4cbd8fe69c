// Parsing a clang command line into a CompileRequest (the scan); the offload
// targets it names are resolved in clang_cli_targets.cpp.
#include "offload_build/toolchain/frontends/clang_cli.hpp"

#include <string_view>

#include "clang_cli_internal.hpp"
#include "offload_build/toolchain/frontends/clang_options.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::clang_cli {

namespace {

using util::starts_with;

// -Xclang values that change what the compiler produces beyond an object.
constexpr std::string_view kForeignCc1[] = {
    "-fembed-offload-object", "-emit", "-ast", "-dump", "-fsyntax-only", "-E", "-S",
    "-fopenmp-host-ir-file-path", "-fopenmp-is-target-device"};
// cc1 options (not the driver's, so not in the option table) a -Xclang may
// pass: they name no file and write nothing else.
constexpr std::string_view kHarmlessCc1[] = {"-disable-llvm-passes", "-disable-llvm-optzns",
                                             "-disable-O0-optnone"};

// Driver spellings cc1 also takes with a joined value.
constexpr std::string_view kCc1Joined[] = {"-D", "-U", "-I", "-O", "-W"};

bool enables_debug_info(std::string_view t) {
  if (!starts_with(t, "-g") || starts_with(t, "-gno-") || starts_with(t, "-gz")) return false;
  return t != "-g0" && t != "-ggdb0";
}

}  // namespace

bool takes_separate_value(std::string_view t) {
  if (starts_with(t, "-Xopenmp-target=") || starts_with(t, "-Xarch_")) return true;  // =TRIPLE ARG, _NAME ARG
  const auto o = find_option(t);
  return o && t == o->spelling && (o->form == OptionForm::Separate || o->form == OptionForm::JoinedOrSeparate);
}

std::string option_name(std::string_view token) {
  const size_t eq = token.find('=');
  return util::shorten(token.substr(0, eq == std::string_view::npos ? eq : eq + 1), 64);
}

namespace {

// What an argument forwarded to one pass (-Xclang ARG, -Xarch_NAME ARG,
// -Xopenmp-target ARG) means: "" when it may be forwarded, else why the
// compile runs unchanged; a file it names is added to `files`.
std::string forwarded(std::string_view via, const std::string& arg, std::vector<std::string>& files, int major) {
  const std::string said = std::string(via) + " " + arg;
  if (via == "-Xclang" && (!util::prefix_in(arg, kForeignCc1).empty() || util::is_one_of(arg, kHarmlessCc1)))
    return util::is_one_of(arg, kHarmlessCc1) ? "" : said;
  auto o = find_option(arg, major);
  // cc1 spells options of its own: under -Xclang a driver spelling counts
  // only as itself, as NAME=VALUE, or as -D/-U/-I/-O/-W (-load is no -l).
  if (o && via == "-Xclang" && arg != o->spelling && !o->spelling.ends_with('=') &&
      !util::is_one_of(o->spelling, kCc1Joined))
    o.reset();
  if (!o) return "unknown option " + said;
  switch (o->effect) {
    case OptionEffect::Text:
    case OptionEffect::PathText:
    case OptionEffect::Depfile:
      // Its value must be in the same argument: a separate one is not forwarded with it.
      if (arg == o->spelling && (o->form == OptionForm::Separate || o->form == OptionForm::JoinedOrSeparate))
        return "option " + said + " without its value";
      return "";
    case OptionEffect::File:
      files.push_back(arg.substr(o->spelling.size()));
      return "";
    default: return "option " + said + " (" + std::string(effect_name(o->effect)) + ")";
  }
}

// An -mllvm value that may name a file: the value of -name=VALUE, or a
// value of its own. The launcher refuses it when a file of that name exists.
std::optional<std::string> mllvm_file(const std::string& v) {
  if (auto eq = v.find('='); eq != std::string::npos) return v.substr(eq + 1);
  if (!v.empty() && v.front() != '-') return v;
  return std::nullopt;
}

// A command that runs unchanged, and why.
Parsed pass(std::string why, const char* code = unchanged::kOption, std::string_view option = {}) {
  return Parsed{std::nullopt, std::move(why), code, option_name(option)};
}

void add_arg(Scan& s, ArgKind kind, std::vector<std::string> tokens, std::string value = {}, std::string triple = {}) {
  s.req.args.push_back({kind, std::move(tokens), std::move(value), std::move(triple)});
}

// What a keyed option (OptionEffect::Text and the like) says of the compile.
void note_text_option(CompileRequest& req, const std::string& t) {
  if (enables_debug_info(t)) req.debug_info = true;
  if (t == "-g0" || t == "-ggdb0") req.debug_info = false;
  if (starts_with(t, "-fdebug-compilation-dir") || starts_with(t, "-ffile-compilation-dir"))
    req.sets_compilation_dir = true;
  if (starts_with(t, "-Rpass") || starts_with(t, "-fprofile-sample-use") || t == "-fstack-usage")
    req.tracks_locations = true;
}

// An option the parser reads itself (OptionEffect::Parsed), spelled `sp`,
// given as `t` with `tokens` and `value`: its effect on `s`, or why the
// command runs unchanged.
std::optional<Parsed> read_option(Scan& s, const std::string& t, std::string_view sp,
                                  const std::vector<std::string>& tokens, const std::string& value,
                                  std::optional<std::string>& lang) {
  if (util::starts_with(sp, "--libomptarget-") && sp.ends_with("-bc-path=")) {
    // Where a GPU family's device runtime bitcode is (LLVM 16-19 in a
    // private prefix): its device passes get it, its file is keyed (finish).
    const bool nvptx = sp == "--libomptarget-nvptx-bc-path=";
    add_arg(s, ArgKind::DeviceFamily, tokens, value,
            std::string(nvptx ? manifest::kNvptxTriple : manifest::kAmdgcnTriple));
    return std::nullopt;
  }
  if (sp == "-Xcuda-ptxas") {  // ptxas runs in the nvptx device passes only
    add_arg(s, ArgKind::DeviceFamily, tokens, value, std::string(manifest::kNvptxTriple));
    return std::nullopt;
  }
  if (sp == "--cuda-path=") {  // every pass as written; the planner keys its ptxas and libdevice
    s.req.cuda_path = value;
    add_arg(s, ArgKind::Common, tokens);
    return std::nullopt;
  }
  if (sp == "-c") {
    s.compile_only = true;
    add_arg(s, ArgKind::Common, {t});
  } else if (sp == "-o") {
    if (value == "-") return pass("output to stdout", unchanged::kNotCompile);
    add_arg(s, ArgKind::Output, tokens, value);
    s.req.output = value;
  } else if (sp == "-x") {
    add_arg(s, ArgKind::Common, tokens);
    lang = value == "none" ? std::nullopt : std::optional(value);
  } else if (sp == "-MD" || sp == "-MMD") {
    if (!s.req.deps) s.req.deps.emplace();
    s.req.deps->user_headers_only = t == "-MMD";
    add_arg(s, ArgKind::DepMode, {t});
  } else if (sp == "-MF") {
    add_arg(s, ArgKind::DepFile, tokens, value);
    s.dep_file = value;
  } else if (sp == "-MT" || sp == "-MQ") {
    add_arg(s, ArgKind::DepTarget, tokens, value);
    s.dep_targets.push_back(std::string(sp) + value);
  } else if (sp == "-MP") {
    s.dep_phony = true;
    add_arg(s, ArgKind::DepPhony, {t});
  } else if (sp == "-fopenmp" || sp == "-fopenmp=" || sp == "-fno-openmp") {
    s.openmp = t == "-fopenmp" || t == "-fopenmp=libomp";
    add_arg(s, ArgKind::Common, {t});
  } else if (sp == "-save-temps" || sp == "-save-temps=" || sp == "--save-temps" || sp == "--save-temps=") {
    s.req.save_temps = true;  // split as the driver's own commands (make_listing_plan)
    add_arg(s, ArgKind::Common, {t});
  } else if (sp == "-fsave-optimization-record" || sp == "-fsave-optimization-record=" ||
             sp == "-fno-save-optimization-record" || sp == "-foptimization-record-passes=") {
    // Any of them turns optimization records on, the last of them and
    // -fno-save-optimization-record decides (clang's willEmitRemarks).
    s.records = t != "-fno-save-optimization-record";
    if (sp == "-fsave-optimization-record=") s.record_format = value;
    add_arg(s, ArgKind::Common, {t});
  } else if (sp == "-foptimization-record-file=") {
    s.records = true;
    add_arg(s, ArgKind::RecordFile, {t}, value);
    s.record_file = value;
  } else if (sp == "-fopenmp-targets=" || sp == "--offload-targets=") {
    add_arg(s, ArgKind::OffloadTargets, {t}, value);
    for (const auto& x : util::split(value, ',')) s.triples.push_back(x);
  } else if (sp == "--offload-arch=") {
    add_arg(s, ArgKind::OffloadArch, {t}, value);
    for (const auto& x : util::split(value, ',')) s.archs.push_back(x);
  } else if (sp == "-Xopenmp-target" || sp == "-Xopenmp-target=" || sp == "-Xarch_") {
    const std::string& arg = tokens.back();
    if (auto why = forwarded(t, arg, s.req.keyed_files, s.major); !why.empty())
      return pass(why, unchanged::kOption, t + " " + arg);
    if (sp == "-Xarch_") add_arg(s, ArgKind::XArch, tokens, t.substr(7));
    else add_arg(s, ArgKind::XOpenmpTarget, tokens, arg, sp == "-Xopenmp-target" ? "" : t.substr(16));
  } else if (sp == "-Xclang" || sp == "-Xclang=") {
    if (auto why = forwarded("-Xclang", value, s.req.keyed_files, s.major); !why.empty())
      return pass(why, unchanged::kOption, "-Xclang " + value);
    add_arg(s, ArgKind::Common, tokens);
  } else if (sp == "-mllvm" || sp == "-mllvm=") {
    if (auto file = mllvm_file(value)) s.req.maybe_files.push_back(*file);
    add_arg(s, ArgKind::Common, tokens);
  } else {
    return pass("option " + t, unchanged::kOption, t);  // a Parsed spelling not handled above
  }
  return std::nullopt;
}

// Every argument of `argv` classified into `s` through the option table;
// the refusal when the command runs unchanged whatever it compiles.
std::optional<Parsed> scan(const std::vector<std::string>& argv, Scan& s) {
  if (argv.empty()) return Parsed{std::nullopt, "empty command", unchanged::kNotCompile, {}};
  s.req.compiler = argv.front();
  s.major = program_llvm_major(argv.front());  // clang 19's flags for clang 19's command
  std::optional<std::string> lang;  // the -x in effect; nullopt: from the extension
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& t = argv[i];
    if (t == "-" || t == "--") return pass("input from stdin or after --", unchanged::kNotCompile);
    if (t.empty() || t.front() != '-') {
      s.inputs.push_back({t, lang});
      add_arg(s, ArgKind::Input, {t}, t);
      continue;
    }
    const auto o = find_option(t, s.major);
    if (!o) return pass("unknown option " + t, unchanged::kOption, t);
    // The option's tokens (with a separate value) and its value.
    std::vector<std::string> tokens{t};
    std::string value;
    const bool then_arg = o->spelling == "-Xopenmp-target=" || o->spelling == "-Xarch_";  // =T ARG, _NAME ARG
    if (!then_arg &&
        (o->form == OptionForm::Joined || (o->form == OptionForm::JoinedOrSeparate && t != o->spelling))) {
      value = t.substr(o->spelling.size());
    } else if (then_arg || o->form == OptionForm::Separate || o->form == OptionForm::JoinedOrSeparate) {
      if (i + 1 >= argv.size()) return pass("option " + t + " without a value", unchanged::kOption, t);
      tokens.push_back(argv[++i]);
      value = tokens.back();
    }
    const std::string_view sp = o->spelling;
    switch (o->effect) {
      case OptionEffect::NotCompile: return pass("option " + t, unchanged::kNotCompile, t);
      case OptionEffect::Unchanged: return pass("option " + t, unchanged::kOption, t);
      case OptionEffect::File:
        s.req.keyed_files.push_back(value);
        [[fallthrough]];
      case OptionEffect::Text:
      case OptionEffect::PathText:
      case OptionEffect::Depfile:
        note_text_option(s.req, t);
        add_arg(s, ArgKind::Common, std::move(tokens));
        continue;
      case OptionEffect::Parsed: break;
    }
    if (auto refused = read_option(s, t, sp, tokens, value, lang)) return *refused;
  }
  return std::nullopt;
}

// Whether `argv` reads as an offload compile: -fopenmp and offload targets
// (for a refusal's note; the scan stopped at the option it refused).
bool names_offload(const std::vector<std::string>& argv) {
  bool openmp = false, targets = false;
  for (const auto& a : argv) {
    if (a == "-fopenmp" || a == "-fopenmp=libomp") openmp = true;
    if (starts_with(a, "--offload-arch=") || starts_with(a, "-fopenmp-targets=") || starts_with(a, "--offload-targets="))
      targets = true;
  }
  return openmp && targets;
}

}  // namespace

Parsed parse(const std::vector<std::string>& argv) {
  Scan s;
  if (auto refused = scan(argv, s)) {
    refused->offload = refused->pass_code == unchanged::kOption && names_offload(argv);
    return *refused;
  }
  return finish(std::move(s));
}

Parsed parse_plain(const std::vector<std::string>& argv) {
  Scan s;
  if (auto refused = scan(argv, s)) return *refused;
  return finish_plain(std::move(s));
}

}  // namespace ob::toolchain::clang_cli
