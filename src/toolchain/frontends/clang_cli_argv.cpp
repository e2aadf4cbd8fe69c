// A launcher compile's paths made relative to the base directory; response
// files; recognizing clang. (Its passes: clang_cli_passes.cpp.)
#include <optional>

#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/paths.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::clang_cli {

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

std::string driver_mode(const fs::path& program) {
  std::string name = program.filename().string();
  // A version suffix: clang++-22, flang-new-22, clang-22.1.
  if (auto dash = name.rfind('-');
      dash != std::string::npos && dash + 1 < name.size() &&
      name.find_first_not_of("0123456789.", dash + 1) == std::string::npos)
    name.resize(dash);
  if (util::ends_with(name, "flang") || util::ends_with(name, "flang-new")) return "flang";
  if (!is_clang(name)) return {};
  if (util::ends_with(name, "++")) return "g++";
  return "gcc";
}

}  // namespace ob::toolchain::clang_cli
