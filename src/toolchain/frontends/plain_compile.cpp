// A compile cached as one job (plain_compile.hpp): clang's through its
// option table, GCC's through the conservative reader below.
#include "offload_build/toolchain/frontends/plain_compile.hpp"

#include <string_view>

#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::frontend {

namespace {

using util::starts_with;

// GCC options whose value is the next argument when written alone (-I DIR);
// joined (-IDIR), the same option.
constexpr std::string_view kGccSeparate[] = {
    "-o", "-x", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-idirafter", "-iquote", "-iprefix",
    "-iwithprefix", "-iwithprefixbefore", "-isysroot", "-imultilib", "-imultiarch", "-MF", "-MT", "-MQ", "-A",
    "-l", "-L", "-T", "-u", "-z", "-e", "-Xlinker", "--param", "--sysroot", "-aux-info", "-Xassembler",
    "-Xpreprocessor", "-B", "-wrapper", "-dumpbase", "-dumpbase-ext", "-dumpdir"};
// What asks for something other than an object (exact spellings, then prefixes).
constexpr std::string_view kGccNotCompile[] = {"-E", "-S", "-M", "-MM", "-fsyntax-only", "-###", "-v",
                                               "--version", "--help", "-dumpversion", "-dumpfullversion",
                                               "-dumpmachine", "-dumpspecs", "--target-help"};
constexpr std::string_view kGccNotCompilePrefix[] = {"-print-", "--print-", "--help="};
// What writes files named after the output or the source (the job writes
// the object under a temporary name), reads what is not keyed (programs
// found by -B, the preprocessor's own options, profiles named after the
// object), or prints what a replay would repeat wrongly (timings).
constexpr std::string_view kGccUncacheable[] = {
    "-save-temps", "-fdump-", "-fstack-usage", "-fcallgraph-info", "-aux-info", "--coverage", "-fprofile-",
    "-fauto-profile", "-fbranch-probabilities", "-ftest-coverage", "-gsplit-dwarf", "-frecord-gcc-switches",
    "-B", "-wrapper", "-Wp,", "-Xpreprocessor", "-Wa,", "-Xassembler", "-dumpbase", "-dumpdir", "-foffload",
    "-fmodules", "-fmodule-", "-fcompare-debug", "-ftime-report", "-fmem-report", "-fstats", "-MG", "-Q"};
// Options naming a file the compile reads that no depfile lists: keyed by content.
constexpr std::string_view kGccFiles[] = {"-fplugin=", "-specs=", "--specs="};

Parsed refused(std::string why, const char* code, std::string option = {}) {
  return Parsed{std::nullopt, std::move(why), code, std::move(option)};
}

// The scan's state besides the request.
struct GccScan {
  CompileRequest req;
  bool compile_only = false;
  std::optional<std::string> lang;  // -x in effect
  std::vector<std::pair<std::string, std::optional<std::string>>> inputs;
  std::optional<std::string> dep_file;
  std::vector<std::string> dep_targets;
  bool dep_phony = false;
};

void add(GccScan& s, ArgKind kind, std::vector<std::string> tokens, std::string value = {}) {
  s.req.args.push_back({kind, std::move(tokens), std::move(value), {}});
}

// The option `t` (its value `value`, `tokens` as written): its effect on
// `s`, or why the command is not cached.
std::optional<Parsed> gcc_option(GccScan& s, const std::string& t, const std::string& sp, std::vector<std::string> tokens,
                                 const std::string& value) {
  using namespace unchanged;
  if (util::is_one_of(t, kGccNotCompile) || !util::prefix_in(t, kGccNotCompilePrefix).empty())
    return refused("option " + t, kNotCompile, clang_cli::option_name(t));
  if (auto p = util::prefix_in(t, kGccUncacheable); !p.empty()) return refused("option " + t, kOption, std::string(p));
  if (sp == "-c") s.compile_only = true;
  if (sp == "-o") {
    if (value == "-") return refused("output to stdout", kNotCompile);
    s.req.output = value;
    add(s, ArgKind::Output, std::move(tokens), value);
    return std::nullopt;
  }
  if (sp == "-x") s.lang = value == "none" ? std::nullopt : std::optional(value);
  if (t == "-MD" || t == "-MMD") {
    if (!s.req.deps) s.req.deps.emplace();
    s.req.deps->user_headers_only = t == "-MMD";
    add(s, ArgKind::DepMode, std::move(tokens));
    return std::nullopt;
  }
  if (sp == "-MF" || sp == "-MT" || sp == "-MQ") {
    if (sp == "-MF") s.dep_file = value;
    else s.dep_targets.push_back(sp + value);
    add(s, sp == "-MF" ? ArgKind::DepFile : ArgKind::DepTarget, std::move(tokens), value);
    return std::nullopt;
  }
  if (t == "-MP") {
    s.dep_phony = true;
    add(s, ArgKind::DepPhony, std::move(tokens));
    return std::nullopt;
  }
  if (auto p = util::prefix_in(t, kGccFiles); !p.empty()) s.req.keyed_files.push_back(t.substr(p.size()));
  if (starts_with(t, "-g")) s.req.debug_info = t != "-g0" && !starts_with(t, "-gno-");
  add(s, ArgKind::Common, std::move(tokens));
  return std::nullopt;
}

// The decision once every argument was read.
Parsed gcc_finish(GccScan s) {
  using namespace unchanged;
  if (!s.compile_only) return refused("not a compile to an object (no -c)", kNotCompile);
  if (s.inputs.size() != 1) return refused(s.inputs.empty() ? "no source file" : "several inputs", kNotCompile);
  const auto& [path, lang] = s.inputs.front();
  const auto ext = manifest::language_from_extension(path);
  if (lang && *lang != "c" && *lang != "c++") return refused("language -x " + *lang, kNotOffload);
  if (!lang && !(ext && (*ext == manifest::Language::C || *ext == manifest::Language::Cxx)))
    return refused("input " + path + " is not a C or C++ source", kNotOffload);
  s.req.language = lang ? (*lang == "c" ? manifest::Language::C : manifest::Language::Cxx) : *ext;
  s.req.source = path;
  if (s.req.deps) {
    s.req.deps->file = s.dep_file;
    s.req.deps->targets = s.dep_targets;
    s.req.deps->phony = s.dep_phony;
  } else if (s.dep_file || !s.dep_targets.empty()) {
    return refused("-MF/-MT without -MD or -MMD", kOption, s.dep_file ? "-MF" : "-MT");
  }
  s.req.names_kernels = false;  // GCC names no function after a file's inode
  return Parsed{std::move(s.req), {}, {}, {}};
}

Parsed parse_gcc(const std::vector<std::string>& argv) {
  using namespace unchanged;
  GccScan s;
  if (argv.empty()) return refused("empty command", kNotCompile);
  s.req.compiler = argv.front();
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& t = argv[i];
    if (t == "-" || t == "--") return refused("input from stdin or after --", kNotCompile);
    if (starts_with(t, "@")) return refused("a response file (" + t + ", not read)", kOption, "@file");
    if (t.empty() || t.front() != '-') {
      s.inputs.emplace_back(t, s.lang);
      add(s, ArgKind::Input, {t}, t);
      continue;
    }
    // The spelling, its value and the tokens that hold them.
    std::string sp = t;
    std::vector<std::string> tokens{t};
    std::string value;
    if (util::is_one_of(t, kGccSeparate)) {
      if (i + 1 >= argv.size()) return refused("option " + t + " without a value", kOption, t);
      tokens.push_back(argv[++i]);
      value = tokens.back();
    } else {
      for (std::string_view o : kGccSeparate)
        if (o.size() == 2 && starts_with(t, o)) {  // -IDIR, -oFILE, -xc++, -MFfile
          sp = std::string(o);
          value = t.substr(o.size());
        }
      if (starts_with(t, "-MF") || starts_with(t, "-MT") || starts_with(t, "-MQ")) {
        sp = t.substr(0, 3);
        value = t.substr(3);
      }
    }
    if (auto why = gcc_option(s, t, sp, std::move(tokens), value)) return *why;
  }
  return gcc_finish(std::move(s));
}

}  // namespace

bool is_gcc(const fs::path& program) {
  std::string name = program.filename().string();
  // A version suffix: -12, -12.2.
  if (const size_t dash = name.rfind('-'); dash != std::string::npos && dash + 1 < name.size() &&
                                            name.find_first_not_of("0123456789.", dash + 1) == std::string::npos)
    name.resize(dash);
  for (std::string_view c : {"cc", "c++", "gcc", "g++"})
    if (name == c || util::ends_with(name, "-" + std::string(c))) return true;
  return false;
}

std::vector<std::string> relative_to_base(std::vector<std::string> argv, const fs::path& base, const fs::path& cwd) {
  return clang_cli::relative_to_base(std::move(argv), base, cwd);
}

Parsed parse_plain(const std::vector<std::string>& argv, Dialect dialect) {
  return dialect == Dialect::Clang ? clang_cli::parse_plain(argv) : parse_gcc(argv);
}

}  // namespace ob::toolchain::frontend
