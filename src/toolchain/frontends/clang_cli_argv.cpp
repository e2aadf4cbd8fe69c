// The device and host passes of a launcher compile, built from the caller's
// own command line; response files; recognizing clang.
#include <optional>

#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/paths.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::clang_cli {

namespace {

void append(std::vector<std::string>& argv, const std::vector<std::string>& more) {
  argv.insert(argv.end(), more.begin(), more.end());
}

bool is_gpu_arch(const std::string& name) {
  return util::starts_with(name, "sm_") || util::starts_with(name, "gfx");
}

// Where and how a pass lists the files it read: as the caller asked for
// (`requested`: -MD or -MMD, its targets or clang's default one, -MP; joined
// -MT/-MQ spellings, so a target equal to the output path stays the output's
// name, not the temporary one the executor writes to), else plain -MD.
std::vector<std::string> dep_flags(const CompileRequest& req, const std::string& depfile,
                                   bool requested) {
  if (!requested || !req.deps) return {"-MD", "-MF", depfile};
  std::vector<std::string> flags{req.deps->user_headers_only ? "-MMD" : "-MD", "-MF", depfile};
  if (req.deps->targets.empty()) flags.push_back("-MQ" + req.output_arg());
  append(flags, req.deps->targets);
  if (req.deps->phony) flags.push_back("-MP");
  return flags;
}

}  // namespace

std::vector<std::string> relative_to_base(std::vector<std::string> argv, const fs::path& base,
                                          const fs::path& cwd) {
  if (base.empty()) return argv;
  // `text` relative to cwd when it is an absolute path under base.
  auto rebase = [&](std::string_view text) -> std::optional<std::string> {
    if (text.empty() || text.front() != '/') return std::nullopt;
    const fs::path p = fs::path(text).lexically_normal();
    if (!util::is_under(p, base)) return std::nullopt;
    const fs::path rel = p.lexically_relative(cwd);
    return rel.empty() ? std::nullopt : std::optional(rel.string());
  };
  static const std::vector<std::string_view> joined = {
      "-I", "-isystem", "-iquote", "-idirafter", "-include", "-imacros", "-iprefix", "-iwithprefix",
      "-L", "-o", "-MF", "-MT", "-MQ", "-isysroot", "--sysroot="};
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string& a = argv[i];
    if (a.find("prefix-map=") != std::string::npos || a.find("compilation-dir=") != std::string::npos)
      continue;
    if (auto r = rebase(a)) {
      a = *r;
      continue;
    }
    bool done = false;
    for (auto prefix : joined) {
      if (a.size() > prefix.size() && util::starts_with(a, prefix)) {
        if (auto r = rebase(std::string_view(a).substr(prefix.size()))) {
          a = std::string(prefix) + *r;
          done = true;
        }
        break;
      }
    }
    if (done || a.front() != '-') continue;
    if (auto eq = a.find('='); eq != std::string::npos)
      if (auto r = rebase(std::string_view(a).substr(eq + 1))) a = a.substr(0, eq + 1) + *r;
  }
  return argv;
}

std::vector<std::string> device_argv(const CompileRequest& req, const Target& target,
                                     const std::vector<std::string>& extra, const std::string& out,
                                     const std::string& depfile, bool requested_depfile) {
  std::vector<std::string> argv{req.compiler};
  for (const auto& a : req.args) {
    switch (a.kind) {
      case ArgKind::Common:
      case ArgKind::Input: append(argv, a.tokens); break;
      case ArgKind::XOpenmpTarget:
        // A GPU's -march= chose the arch, which target_selector now names;
        // the host device's stays (its selector names only the triple).
        if (util::starts_with(a.value, "-march=") && target.is_gpu()) break;
        if (a.triple.empty() || a.triple == target.triple)
          append(argv, {"-Xopenmp-target=" + target.triple, a.value});
        break;
      case ArgKind::XArch:
        if (!is_gpu_arch(a.value) || a.value == target.arch) append(argv, a.tokens);
        break;
      default: break;  // output, dependency and target options: the pass sets its own
    }
  }
  append(argv, extra);
  // A device pass also compiles the host side (for the host IR the device
  // compile reads); its diagnostics are the host pass's, printed there once.
  append(argv, {"-Xarch_host", "-w"});
  append(argv, {clang_openmp::target_selector(target), "--offload-device-only"});
  append(argv, dep_flags(req, depfile, requested_depfile));
  append(argv, {"-o", out});
  return argv;
}

namespace {

// --offload-arch=native next to the host triple alone: the one-shot compile
// uses it (the host device finds no GPU arch there) and says nothing, a host
// pass alone would warn that it is unused; its host cc1 is the same without it.
bool native_only_for_host(const CompileRequest& req, const Arg& arg) {
  if (arg.kind != ArgKind::OffloadArch) return false;
  for (const auto& v : util::split(arg.value, ','))
    if (v != "native") return false;
  bool triples = false;
  for (const auto& a : req.args) {
    if (a.kind != ArgKind::OffloadTargets) continue;
    triples = true;
    for (const auto& t : util::split(a.value, ','))
      if (t != kHostTriple) return false;
  }
  return triples;
}

// The host pass's options. Its source and the preprocessor options are
// left out unless `with_source`.
std::vector<std::string> host_options(const CompileRequest& req, const std::string& out,
                                      bool with_source) {
  std::vector<std::string> argv{req.compiler};
  bool wrote_output = false;
  for (const auto& a : req.args) {
    bool takes_next = false;
    if (!with_source &&
        (a.kind == ArgKind::Input ||
         (a.kind == ArgKind::Common && clang_openmp::is_preprocessor_option(a.tokens.front(), takes_next))))
      continue;
    switch (a.kind) {
      case ArgKind::Output:
        append(argv, {"-o", out});
        wrote_output = true;
        break;
      case ArgKind::DepMode:
      case ArgKind::DepFile:
      case ArgKind::DepTarget:
      case ArgKind::DepPhony: break;  // normalized below
      case ArgKind::XOpenmpTarget: break;  // for device passes only
      case ArgKind::RecordFile: break;     // the host pass's own, below
      case ArgKind::OffloadArch:
        if (!native_only_for_host(req, a)) append(argv, a.tokens);
        break;
      case ArgKind::XArch:
        if (a.value != "device" && !is_gpu_arch(a.value)) append(argv, a.tokens);
        break;
      default: append(argv, a.tokens); break;
    }
  }
  if (!wrote_output) append(argv, {"-o", out});
  return argv;
}

}  // namespace

std::vector<std::string> host_argv(const CompileRequest& req, const std::vector<std::string>& extra,
                                   const std::string& package, const std::string& out,
                                   const std::string& depfile, const std::string& record) {
  std::vector<std::string> argv = host_options(req, out, true);
  append(argv, extra);
  if (!record.empty()) argv.push_back("-foptimization-record-file=" + record);
  append(argv, dep_flags(req, depfile, false));
  argv.push_back("--offload-host-only");
  append(argv, clang_openmp::embed_package(package));
  return argv;
}

std::vector<std::string> host_ir_argv(const CompileRequest& req, const std::vector<std::string>& extra,
                                      const std::string& out, const std::string& depfile) {
  std::vector<std::string> argv = host_options(req, out, true);
  append(argv, extra);
  append(argv, dep_flags(req, depfile, false));
  append(argv, {"--offload-host-only", "-emit-llvm", "-Xclang", "-disable-llvm-passes"});
  return argv;
}

std::vector<std::string> host_codegen_argv(const CompileRequest& req,
                                           const std::vector<std::string>& extra,
                                           const std::string& host_ir, const std::string& package,
                                           const std::string& out, const std::string& record) {
  std::vector<std::string> argv = host_options(req, out, false);
  append(argv, extra);
  if (!record.empty()) argv.push_back("-foptimization-record-file=" + record);
  argv.push_back("--offload-host-only");
  append(argv, clang_openmp::embed_package(package));
  append(argv, {"-x", "ir", host_ir});
  return argv;
}

std::vector<std::string> split_response_file(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_token = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == '\\' && i + 1 < text.size()) cur += text[++i];  // as LLVM's GNU tokenizer
      else cur += c;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_token) out.push_back(std::move(cur));
      cur.clear();
      in_token = false;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_token = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      cur += text[++i];
      in_token = true;
    } else {
      cur += c;
      in_token = true;
    }
  }
  if (in_token) out.push_back(std::move(cur));
  return out;
}

namespace {

bool expand_into(const std::vector<std::string>& args, const fs::path& base, int depth,
                 std::vector<std::string>& out, std::string& problem) {
  for (const auto& a : args) {
    if (a.size() < 2 || a.front() != '@') {
      out.push_back(a);
      continue;
    }
    fs::path file = a.substr(1);
    if (file.is_relative()) file = base / file;
    if (depth > 20) {  // a response file including itself
      problem = file.string() + " names response files more than 20 deep (does it include itself?)";
      return false;
    }
    auto text = util::read_regular_file(file, kMaxResponseFile, "a response file");
    if (!text) {
      problem = text.error().message;
      return false;
    }
    // Response files named inside a response file are relative to it (as in clang).
    if (!expand_into(split_response_file(*text), file.parent_path(), depth + 1, out, problem))
      return false;
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> expand_response_files(const std::vector<std::string>& argv,
                                                              const fs::path& cwd,
                                                              std::string* problem) {
  std::vector<std::string> out;
  std::string why;
  if (!expand_into(argv, cwd, 0, out, why)) {
    if (problem) *problem = why;
    return std::nullopt;
  }
  return out;
}

bool is_clang(const fs::path& program) {
  // [PREFIX-]clang[++][-VERSION]
  std::string name = program.filename().string();
  if (auto dash = name.rfind("clang"); dash != std::string::npos && dash > 0) {
    if (name[dash - 1] != '-') return false;
    name = name.substr(dash);
  }
  if (!util::starts_with(name, "clang")) return false;
  std::string rest = name.substr(5);
  if (util::starts_with(rest, "++")) rest = rest.substr(2);
  if (rest.empty()) return true;
  if (rest.front() != '-' || rest.size() == 1) return false;
  return rest.find_first_not_of("0123456789.", 1) == std::string::npos;
}

}  // namespace ob::clang_cli
