#include "offload_build/toolchain/frontends/fortran_scan.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::frontend::fortran {

namespace {

constexpr size_t kMaxIncludeDepth = 32;
constexpr uint64_t kMaxSource = uint64_t{64} << 20;

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void skip_blanks(std::string_view& s) { s.remove_prefix(std::min(s.find_first_not_of(" \t"), s.size())); }

// The keyword `w` starting `s` as a whole word; `s` then starts after it.
bool take_word(std::string_view& s, std::string_view w) {
  if (s.substr(0, w.size()) != w || (s.size() > w.size() && name_char(s[w.size()]))) return false;
  s.remove_prefix(w.size());
  skip_blanks(s);
  return true;
}

std::string take_name(std::string_view& s) {
  size_t n = 0;
  while (n < s.size() && name_char(s[n])) ++n;
  std::string name(s.substr(0, n));
  s.remove_prefix(n);
  skip_blanks(s);
  return name;
}

// The quoted text starting `s` ('x' or "x"; <x> when `angle`), or nullopt.
std::optional<std::string> quoted(std::string_view s, bool angle = false) {
  if (s.empty()) return std::nullopt;
  const char close = s.front() == '<' && angle ? '>' : s.front();
  if (close != '\'' && close != '"' && close != '>') return std::nullopt;
  const size_t end = s.find(close, 1);
  if (end == std::string_view::npos || end == 1) return std::nullopt;
  return std::string(s.substr(1, end - 1));
}

// `line` up to its `!` comment (a `!` inside a string is not one).
std::string_view code_of(std::string_view line) {
  char in = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in) {
      if (c == in) in = 0;
    } else if (c == '\'' || c == '"') {
      in = c;
    } else if (c == '!') {
      return line.substr(0, i);
    }
  }
  return line;
}

// The statements of `code` (separated by `;` outside strings).
std::vector<std::string_view> statements(std::string_view code) {
  std::vector<std::string_view> out;
  char in = 0;
  size_t from = 0;
  for (size_t i = 0; i <= code.size(); ++i) {
    const char c = i < code.size() ? code[i] : ';';
    if (in) {
      if (c == in) in = 0;
    } else if (c == '\'' || c == '"') {
      in = c;
    } else if (c == ';') {
      out.push_back(code.substr(from, i - from));
      from = i + 1;
    }
  }
  return out;
}

class Scanner {
 public:
  Scanner(const std::vector<fs::path>& dirs, bool fixed, Macros macros)
      : dirs_(dirs), fixed_(fixed), macros_(std::move(macros)) {}

  void file(const fs::path& path, size_t depth) {
    depth_ = depth;
    if (result_.problem || !visited_.insert(path).second) return;
    if (depth > kMaxIncludeDepth) {
      result_.problem = "INCLUDE files nest deeper than " + std::to_string(kMaxIncludeDepth) + " at " + path.string();
      return;
    }
    const auto text = util::read_file(path, kMaxSource);
    if (!text) {
      result_.problem = path.string() + " cannot be read";
      return;
    }
    std::string logical;  // a statement continued over lines
    size_t number = 0, at = 0;
    while (at < text->size() && !result_.problem) {
      const size_t end = std::min(text->find('\n', at), text->size());
      std::string_view line(text->data() + at, end - at);
      at = end + 1;
      ++number;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      std::string_view lead = line;
      skip_blanks(lead);
      if (!lead.empty() && lead.front() == '#') {
        if (!conditional(lead.substr(1)) && live()) directive(lead.substr(1), path, number);
        continue;
      }
      if (!live()) continue;
      if (fixed_) {
        if (line.empty()) continue;
        const char c1 = static_cast<char>(std::tolower(static_cast<unsigned char>(line.front())));
        if (c1 == 'c' || c1 == '*' || c1 == '!' || c1 == 'd') continue;
        const bool continues = line.size() > 5 && line[5] != ' ' && line[5] != '0' && line[5] != '\t' &&
                               line.substr(0, 5).find_first_not_of(" ") == std::string_view::npos;
        const std::string_view body = line.size() > 6 && line.front() != '\t' ? line.substr(6)
                                      : line.front() == '\t'                 ? line.substr(1)
                                                                              : std::string_view();
        if (!continues && !logical.empty()) statement_line(logical, path, number);
        if (!continues) logical.clear();
        logical += code_of(body);
        continue;
      }
      std::string_view code = code_of(line);
      std::string_view piece = code;
      skip_blanks(piece);
      if (!logical.empty() && !piece.empty() && piece.front() == '&') piece.remove_prefix(1);
      while (!piece.empty() && (piece.back() == ' ' || piece.back() == '\t')) piece.remove_suffix(1);
      if (!piece.empty() && piece.back() == '&') {
        logical += piece.substr(0, piece.size() - 1);
        continue;
      }
      logical += piece;
      statement_line(logical, path, number);
      logical.clear();
    }
    if (!logical.empty()) statement_line(logical, path, number);
    if (depth == 0) finish();
  }

  Scan take() { return std::move(result_); }

 private:
  void statement_line(const std::string& code, const fs::path& path, size_t number) {
    for (std::string_view stmt : statements(code)) {
      skip_blanks(stmt);
      statement(stmt, path, number);
    }
  }

  // One statement, as written (keywords matched in lower case).
  void statement(std::string_view written, const fs::path& path, size_t number) {
    const std::string low = lower(written);
    std::string_view s = low;
    if (take_word(s, "include")) {
      const size_t skipped = written.size() - s.size();
      if (auto name = quoted(written.substr(skipped))) include(*name, path, number, false);
      return;
    }
    if (take_word(s, "module")) {
      const std::string name = take_name(s);
      // `module procedure p`, `module function f()`: no module of its own.
      if (!name.empty() && s.empty() && name != "procedure") defines_.insert(name + ".mod");
      return;
    }
    if (take_word(s, "submodule")) {
      if (s.empty() || s.front() != '(') return;
      s.remove_prefix(1);
      skip_blanks(s);
      const std::string parent = take_name(s);
      std::string ancestor = parent;
      if (!s.empty() && s.front() == ':') {
        s.remove_prefix(1);
        skip_blanks(s);
        ancestor = parent + "-" + take_name(s);
      }
      if (s.empty() || s.front() != ')') return;
      s.remove_prefix(1);
      skip_blanks(s);
      const std::string name = take_name(s);
      if (parent.empty() || name.empty()) return;
      uses_.insert(parent + ".mod");
      uses_.insert(ancestor + ".mod");
      defines_.insert(parent + "-" + name + ".mod");
      return;
    }
    if (!take_word(s, "use")) {
      // COMPILER_OPTIONS() is the command line: each pass's, with its temporary names.
      for (size_t at = low.find("compiler_options"); at != std::string::npos && !result_.problem;
           at = low.find("compiler_options", at + 1))
        if ((at == 0 || !name_char(low[at - 1])) && (at + 16 == low.size() || !name_char(low[at + 16])))
          result_.problem = path.string() + ":" + std::to_string(number) +
                            ": COMPILER_OPTIONS() writes the command line into the object, and a split pass's "
                            "holds temporary names";
      return;
    }
    bool intrinsic = false, nature = false;
    if (!s.empty() && s.front() == ',') {  // use, intrinsic :: m  /  use, non_intrinsic :: m
      s.remove_prefix(1);
      skip_blanks(s);
      nature = true;
      intrinsic = take_word(s, "intrinsic");
      if (!intrinsic) take_word(s, "non_intrinsic");
    }
    if (s.substr(0, 2) == "::") {
      s.remove_prefix(2);
      skip_blanks(s);
    }
    const std::string name = take_name(s);
    if (name.empty() || intrinsic || (!nature && intrinsic_module(name))) return;
    uses_.insert(name + ".mod");
  }

  // Certainly true, certainly false, or not known (Macros).
  enum class Truth { True, False, Unknown };

  // flang predefines only names that start with '_' (`flang -E -dM`: _OPENMP,
  // __flang__, __x86_64__...); any other the options do not define and no
  // #define seen names is not defined.
  Truth defined(std::string_view name) const {
    const std::string n(name);
    if (n.empty() || unknown_.count(n)) return Truth::Unknown;
    if (macros_.defined.count(n)) return Truth::True;
    if (macros_.undefined.count(n)) return Truth::False;
    return n.front() == '_' ? Truth::Unknown : Truth::False;
  }

  // An #if/#elif expression: [!]defined(NAME), [!]defined NAME, 0, 1.
  Truth condition(std::string_view e) const {
    skip_blanks(e);
    while (!e.empty() && (e.back() == ' ' || e.back() == '\t')) e.remove_suffix(1);
    if (e == "0") return Truth::False;
    if (e == "1") return Truth::True;
    bool negate = false;
    if (!e.empty() && e.front() == '!') {
      negate = true;
      e.remove_prefix(1);
      skip_blanks(e);
    }
    if (!take_word(e, "defined")) return Truth::Unknown;
    const bool paren = !e.empty() && e.front() == '(';
    if (paren) {
      e.remove_prefix(1);
      skip_blanks(e);
    }
    const std::string name = take_name(e);
    if (paren) {
      if (e.empty() || e.front() != ')') return Truth::Unknown;
      e.remove_prefix(1);
      skip_blanks(e);
    }
    if (name.empty() || !e.empty()) return Truth::Unknown;
    const Truth t = defined(name);
    if (!negate || t == Truth::Unknown) return t;
    return t == Truth::True ? Truth::False : Truth::True;
  }

  // One #if...#endif: whether the enclosing lines are compiled (as far as
  // known), whether a branch was certainly taken, and whether this one may be.
  struct Frame {
    bool outer, taken, live;
  };

  bool live() const { return frames_.empty() || frames_.back().live; }

  // #if, #ifdef, #ifndef, #elif, #else, #endif (tracked), #define and #undef
  // (their macro is no longer known). Whether `d` was one of them.
  bool conditional(std::string_view d) {
    skip_blanks(d);
    std::string_view s = d;
    auto open = [&](Truth t) {
      const bool outer = live();
      frames_.push_back({outer, t == Truth::True, outer && t != Truth::False});
    };
    auto next = [&](Truth t) {
      if (frames_.empty()) return;
      Frame& f = frames_.back();
      f.live = f.outer && !f.taken && t != Truth::False;
      f.taken = f.taken || t == Truth::True;
    };
    if (take_word(s, "ifdef")) open(defined(take_name(s)));
    else if (take_word(s, "ifndef")) {
      const Truth t = defined(take_name(s));
      open(t == Truth::Unknown ? t : t == Truth::True ? Truth::False : Truth::True);
    } else if (take_word(s, "if")) open(condition(s));
    else if (take_word(s, "elif")) next(condition(s));
    else if (take_word(s, "else")) next(Truth::True);
    else if (take_word(s, "endif")) {
      if (!frames_.empty()) frames_.pop_back();
    } else if (take_word(s, "define") || take_word(s, "undef")) {
      if (live()) {
        unknown_.insert(take_name(s));
      }
    } else {
      return false;
    }
    return true;
  }

  // A line starting with '#': #include "f" / <f>, and #line / # N "file".
  void directive(std::string_view d, const fs::path& path, size_t number) {
    skip_blanks(d);
    std::string_view s = d;
    if (take_word(s, "include")) {
      if (auto name = quoted(s, true)) include(*name, path, number, s.front() == '<');
      return;
    }
    const bool line = take_word(s, "line");
    if (!line && (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front())))) return;
    const size_t q = s.find('"');
    if (q == std::string_view::npos) return;
    if (auto name = quoted(s.substr(q))) {
      if (number == 1 && depth_ == 0) result_.line_file = *name;
      fs::path f = fs::path(*name).is_absolute() ? fs::path(*name) : path.parent_path() / *name;
      std::error_code ec;
      if (fs::is_regular_file(f, ec)) reads_.insert(f.lexically_normal());
    }
  }

  // Every existing candidate is keyed (whichever the compiler takes); the first is scanned.
  void include(const std::string& name, const fs::path& from, size_t number, bool angle) {
    std::vector<fs::path> candidates;
    if (fs::path(name).is_absolute()) {
      candidates.push_back(name);
    } else {
      if (!angle) candidates.push_back(from.parent_path() / name);
      for (const auto& d : dirs_) candidates.push_back(d / name);
    }
    std::optional<fs::path> first;
    for (const auto& c : candidates) {
      std::error_code ec;
      if (!fs::is_regular_file(c, ec)) continue;
      const fs::path p = c.lexically_normal();
      reads_.insert(p);
      if (!first) first = p;
    }
    if (first) {
      const size_t depth = depth_;
      file(*first, depth + 1);
      depth_ = depth;
      return;
    }
    if (name == "omp_lib.h") return;  // the compiler's own
    result_.problem = from.string() + ":" + std::to_string(number) + ": the included file '" + name +
                      "' is found in none of the include directories, so what it holds cannot be keyed";
  }

  void finish() {
    for (const auto& d : defines_) uses_.erase(d);
    result_.defines.assign(defines_.begin(), defines_.end());
    result_.uses.assign(uses_.begin(), uses_.end());
    result_.reads.assign(reads_.begin(), reads_.end());
  }

  const std::vector<fs::path>& dirs_;
  bool fixed_;
  Macros macros_;
  std::set<std::string> unknown_;  // #define'd or #undef'd on the way
  std::vector<Frame> frames_;
  size_t depth_ = 0;
  std::set<fs::path> visited_;
  std::set<std::string> defines_, uses_;
  std::set<fs::path> reads_;
  Scan result_;
};

}  // namespace

bool intrinsic_module(const std::string& name) {
  // flang-22's include/flang/*.mod, and OpenACC's.
  static const std::set<std::string, std::less<>> kIntrinsic = {
      "__cuda_builtins", "__cuda_device", "__fortran_builtins", "__fortran_ieee_exceptions",
      "__fortran_type_info", "__ppc_intrinsics", "__ppc_types", "cooperative_groups", "cudadevice",
      "flang_debug", "ieee_arithmetic", "ieee_exceptions", "ieee_features", "iso_c_binding",
      "iso_fortran_env", "iso_fortran_env_impl", "mma", "omp_lib", "omp_lib_kinds", "openacc",
      "openacc_kinds"};
  return kIntrinsic.count(name) > 0;
}

bool fixed_form_by_extension(const fs::path& source) {
  const std::string ext = lower(source.extension().string());
  return ext == ".f" || ext == ".ff" || ext == ".for" || ext == ".ftn" || ext == ".f77" || ext == ".fpp";
}

Scan scan(const fs::path& source, const std::vector<fs::path>& include_dirs, bool fixed, Macros macros) {
  Scanner s(include_dirs, fixed, std::move(macros));
  s.file(source, 0);
  return s.take();
}

}  // namespace ob::toolchain::frontend::fortran
