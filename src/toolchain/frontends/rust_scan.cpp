// Picking out the items the kernel check needs from Rust tokens: functions (with
// their attributes, generics, parameters and the names their bodies use), extern
// blocks, offload(...) launches, cfg names and the cfg(...) scope of each item,
// `std` uses, `static mut`s, crate marks (#![no_std], #![no_core], extern crate
// alloc, #[global_allocator]) and `mod x;` declarations.
#include <algorithm>

#include "offload_build/toolchain/frontends/rust_kernels.hpp"

namespace ob::toolchain::rust {

namespace {

class Scanner {
 public:
  Scanner(const std::vector<Token>& t, const fs::path& file, CrateScan& scan, int scope)
      : t_(t), file_(file), scan_(scan), base_scope_(scope) {}

  std::vector<ModDecl> run() {
    for (i_ = 0; i_ < t_.size(); ++i_) {
      while (!open_scopes_.empty() && open_scopes_.back().end < i_) open_scopes_.pop_back();
      while (!bodies_.empty() && bodies_.back().end < i_) bodies_.pop_back();
      if (t_[i_].kind == Token::Ident) names(i_, fn_index());
      if (is(i_, "#") && (is(i_ + 1, "[") || (is(i_ + 1, "!") && is(i_ + 2, "[")))) attribute();
      else if (ident(i_, "mod") && t_.size() > i_ + 2 && t_[i_ + 1].kind == Token::Ident && is(i_ + 2, ";")) module();
      else if (ident(i_, "static")) static_item();
      else if (ident(i_, "extern")) extern_item();
      else if (ident(i_, "fn") && i_ + 1 < t_.size() && t_[i_ + 1].kind == Token::Ident) function();
      else if (ident(i_, "offload") && is(i_ + 1, "(") && i_ + 2 < t_.size() && t_[i_ + 2].kind == Token::Ident)
        scan_.launches.push_back({t_[i_ + 2].text, file_, t_[i_ + 2].line});
      else if ((ident(i_, "cfg") || ident(i_, "cfg_attr")) && (is(i_ + 1, "(") || (is(i_ + 1, "!") && is(i_ + 2, "("))))
        cfg_predicate(i_ + (is(i_ + 1, "!") ? 2 : 1), ident(i_, "cfg_attr"));
      else if (is(i_, "{")) { ++depth_; attrs_.clear(); }
      else if (is(i_, "}")) {
        if (!foreign_.empty() && foreign_.back() == depth_) {
          foreign_.pop_back();
          foreign_abi_.pop_back();
        }
        --depth_;
        attrs_.clear();
      } else if (is(i_, ";")) { attrs_.clear(); }
    }
    return std::move(mods_);
  }

 private:
  bool is(size_t k, std::string_view p) const { return k < t_.size() && t_[k].kind == Token::Punct && t_[k].text == p; }
  bool ident(size_t k, std::string_view w) const { return k < t_.size() && t_[k].kind == Token::Ident && t_[k].text == w; }

  // The index just past the bracket that closes the one at `open`.
  size_t close_of(size_t open) const {
    int depth = 0;
    for (size_t k = open; k < t_.size(); ++k) {
      if (t_[k].kind != Token::Punct) continue;
      const char c = t_[k].text[0];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && --depth == 0) return k + 1;
    }
    return t_.size();
  }

  // The scope code is in now: the innermost open cfg(...), else the file's.
  int scope() const { return open_scopes_.empty() ? base_scope_ : open_scopes_.back().scope; }
  int fn_index() const { return bodies_.empty() ? -1 : bodies_.back().fn; }

  int new_scope(size_t from, size_t to) {  // the predicate's tokens [from, to)
    scan_.scopes.push_back({scope(), std::vector<Token>(t_.begin() + from, t_.begin() + to)});
    return static_cast<int>(scan_.scopes.size()) - 1;
  }

  // The last token of the item (or statement) starting at `k`: its `;`, or the `}`
  // of its first top-level block; a `}` closing the enclosing block ends it too.
  size_t item_end(size_t k) const {
    int depth = 0;
    for (; k < t_.size(); ++k) {
      if (t_[k].kind != Token::Punct) continue;
      const char c = t_[k].text[0];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (--depth < 0) return k - 1;
        if (depth == 0 && c == '}') return k;
      }
      if (c == ';' && depth == 0) return k;
    }
    return t_.size() - 1;
  }

  // The last token of the enclosing block (an inner attribute's reach).
  size_t block_end(size_t k) const {
    int depth = 0;
    for (; k < t_.size(); ++k) {
      if (is(k, "{")) ++depth;
      if (is(k, "}") && --depth < 0) return k - 1;
    }
    return t_.size() - 1;
  }

  void attribute() {
    const bool inner_attr = is(i_ + 1, "!");
    const size_t open = i_ + (inner_attr ? 2 : 1);
    const size_t end = close_of(open);
    std::vector<Token> inner(t_.begin() + open + 1, t_.begin() + std::max(end - 1, open + 1));
    for (size_t k = open + 1; k + 1 < end; ++k)
      if ((ident(k, "cfg") || ident(k, "cfg_attr")) && is(k + 1, "(")) cfg_predicate(k + 1, ident(k, "cfg_attr"));
    if (ident(open + 1, "cfg") && is(open + 2, "(")) {
      const int s = new_scope(open + 3, close_of(open + 2) - 1);
      open_scopes_.push_back({s, inner_attr ? block_end(end) : item_end(end)});
    }
    if (inner_attr) {
      for (const auto& tok : inner) scan_.no_core = scan_.no_core || (tok.kind == Token::Ident && tok.text == "no_core");
      crate_marks(open + 1, end - 1);
    } else {
      attrs_.push_back(std::move(inner));
    }
    i_ = end - 1;
  }

  // #![no_std] / #![no_core], possibly as #![cfg_attr(PRED, no_std, ...)].
  void crate_marks(size_t from, size_t to) {
    int s = scope();
    if (ident(from, "cfg_attr") && is(from + 1, "(")) {
      size_t comma = from + 2;
      for (int depth = 0; comma < to && !(depth == 0 && is(comma, ",")); ++comma) {
        if (is(comma, "(")) ++depth;
        if (is(comma, ")")) --depth;
      }
      s = new_scope(from + 2, comma);
      from = comma;
    }
    for (size_t k = from; k < to; ++k)
      if (ident(k, "no_std") || ident(k, "no_core")) scan_.marks.push_back({t_[k].text, file_, t_[k].line, s, -1});
  }

  // A `::` right before `k` that continues a path (`alloc::vec::Vec`, `x::std`).
  bool after_path(size_t k) const {
    return k >= 3 && is(k - 1, ":") && is(k - 2, ":") &&
           (t_[k - 3].kind == Token::Ident || is(k - 3, ">"));
  }

  void mention(std::vector<Mention>& into, std::string what, size_t k, int fn = -1) {
    into.push_back({std::move(what), file_, t_[k].line, scope(), fn});
  }

  // The identifier at `i` in function `fn` (or -1): the names a body uses, the
  // crate's own names, `std` uses.
  void names(size_t i, int fn) {
    const Token& t = t_[i];
    if (fn >= 0) scan_.functions[fn].names.emplace(t.text, t.line);
    static const std::set<std::string> definers = {"struct", "enum", "type", "union", "trait"};
    static const std::set<std::string> std_macros = {"println", "print", "eprintln", "eprint", "format",
                                                     "vec", "dbg"};
    static const std::set<std::string> std_types = {"Vec", "String", "Box"};
    if ((definers.count(t.text) && i + 1 < t_.size() && t_[i + 1].kind == Token::Ident) ||
        (t.text == "macro_rules" && is(i + 1, "!") && i + 2 < t_.size())) {
      scan_.own_names.insert(t_[i + (t.text == "macro_rules" ? 2 : 1)].text);
      // A macro that writes kernels: offload-build reads the source unexpanded.
      if (t.text == "macro_rules" && i + 3 < t_.size())
        for (size_t k = i + 3, end = close_of(i + 3); k < end; ++k)
          if (ident(k, "rustc_offload_kernel") || (t_[k].kind == Token::Str && t_[k].text == "gpu-kernel")) {
            mention(scan_.marks, "kernel macro " + t_[i + 2].text, i, fn);
            break;
          }
    } else if (t.text == "use" && !ident(i + 1, "std") && !(is(i + 1, ":") && ident(i + 3, "std"))) {
      for (size_t k = i + 1; k < t_.size() && !is(k, ";"); ++k)
        if (t_[k].kind == Token::Ident) scan_.own_names.insert(t_[k].text);
    } else if (after_path(i) || is(i - 1, ".") || (i > 0 && ident(i - 1, "fn"))) {
      return;  // a path's later segment, a field or method, a function's name
    } else if (std_macros.count(t.text) && is(i + 1, "!")) {
      mention(scan_.std_uses, t.text + "!", i, fn);
    } else if (std_types.count(t.text) && !is(i + 1, "!")) {
      mention(scan_.std_uses, t.text, i, fn);
    } else if (t.text == "std" && is(i + 1, ":") && is(i + 2, ":")) {
      std::string path = "std";  // as far as it is a plain path: std::cmp::max
      for (size_t k = i + 1; is(k, ":") && is(k + 1, ":") && k + 2 < t_.size() && t_[k + 2].kind == Token::Ident; k += 3)
        path += "::" + t_[k + 2].text;
      mention(scan_.std_uses, path, i, fn);
    }
  }

  // `static mut NAME` and #[global_allocator] statics.
  void static_item() {
    if (has_attr("global_allocator")) mention(scan_.marks, "global_allocator", i_, fn_index());
    if (ident(i_ + 1, "mut") && i_ + 2 < t_.size() && t_[i_ + 2].kind == Token::Ident)
      mention(scan_.static_muts, t_[i_ + 2].text, i_ + 2, fn_index());
  }

  // Bare names in a cfg predicate (cfg_attr: its first argument only).
  void cfg_predicate(size_t open, bool first_only) {
    const size_t end = close_of(open);
    int depth = 0;
    for (size_t k = open; k < end; ++k) {
      if (is(k, "(")) ++depth;
      if (is(k, ")")) --depth;
      if (first_only && depth == 1 && is(k, ",")) break;
      if (t_[k].kind == Token::Ident && !is(k + 1, "=") && !is(k + 1, "(") && t_[k].text != "not" &&
          t_[k].text != "any" && t_[k].text != "all")
        scan_.cfg_names.insert(t_[k].text);
    }
  }

  bool has_attr(std::string_view word) const {
    for (const auto& a : attrs_)
      for (const auto& tok : a)
        if (tok.kind == Token::Ident && tok.text == word) return true;
    return false;
  }

  void module() {
    ModDecl m{t_[i_ + 1].text, "", scope()};
    for (const auto& a : attrs_)
      if (a.size() >= 3 && a[0].text == "path" && a[1].text == "=" && a[2].kind == Token::Str) m.path_attr = a[2].text;
    mods_.push_back(std::move(m));
    attrs_.clear();
    i_ += 2;
  }

  void extern_item() {
    if (ident(i_ + 1, "crate") && ident(i_ + 2, "alloc")) mention(scan_.marks, "alloc", i_ + 2, fn_index());
    size_t k = i_ + 1;
    std::string abi = "C";
    if (k < t_.size() && t_[k].kind == Token::Str) abi = t_[k++].text;
    if (is(k, "{")) {
      foreign_.push_back(depth_ + 1);
      foreign_abi_.push_back(abi);
      attrs_.clear();
    } else if (ident(k, "fn")) {
      abi_ = abi;
    }
    i_ = k - 1;  // the '{' or 'fn' is handled next
  }

  void function() {
    FnItem fn;
    fn.name = t_[i_ + 1].text;
    fn.file = file_;
    fn.line = t_[i_ + 1].line;
    fn.column = t_[i_ + 1].column;
    fn.scope = scope();
    fn.no_mangle = has_attr("no_mangle") || has_attr("export_name");
    fn.offload_kernel = has_attr("rustc_offload_kernel") || abi_ == "gpu-kernel";
    fn.panic_handler = has_attr("panic_handler");
    size_t k = i_ + 2;
    if (is(k, "<")) k = generics(k, fn.generics);
    const size_t end = close_of(k);
    std::string param;
    int depth = 0;
    for (size_t p = k + 1; p + 1 < end; ++p) {
      const std::string& x = t_[p].text;
      if (t_[p].kind == Token::Punct && (x == "(" || x == "[" || x == "<")) ++depth;
      if (t_[p].kind == Token::Punct && (x == ")" || x == "]" || x == ">")) --depth;
      if (depth == 0 && is(p, ",")) {
        if (!param.empty()) fn.params.push_back(param);
        param.clear();
      } else {
        if (param.empty()) fn.param_at.emplace_back(t_[p].line, t_[p].column);
        param += (param.empty() ? "" : " ") + x;
      }
      if (ident(p, "impl") && depth == 0) fn.generics.push_back("impl " + (p + 1 < end ? t_[p + 1].text : ""));
    }
    if (!param.empty()) fn.params.push_back(param);
    size_t body = end;
    while (body < t_.size() && !is(body, "{") && !is(body, ";")) ++body;
    const bool foreign = (!foreign_.empty() && foreign_.back() == depth_) || is(body, ";");
    if (is(end, "-") && is(end + 1, ">") && end + 2 < body) {
      fn.returns_at = {t_[end + 2].line, t_[end + 2].column};
      for (size_t r = end + 2; r < body && !ident(r, "where"); ++r)
        fn.returns += (fn.returns.empty() ? "" : " ") + t_[r].text;
    }
    fn.abi = !foreign_.empty() && foreign_.back() == depth_ ? foreign_abi_.back() : abi_;
    if (!foreign) {
      const size_t last = close_of(body) - 1;
      fn.only_loops = only_loops(body + 1, last);
      const int index = static_cast<int>(scan_.functions.size());
      scan_.functions.push_back(std::move(fn));
      for (size_t p = i_ + 2; p < body; ++p)  // the signature's types
        if (t_[p].kind == Token::Ident) names(p, index);
      bodies_.push_back({index, last});
    } else {
      scan_.foreign.push_back(std::move(fn));
    }
    attrs_.clear();
    abi_.clear();
    i_ = body - 1;  // continue at the body ('{' opens a scope) or the ';'
  }

  // The type and const parameters in <...> at `open` (lifetimes left out); returns
  // the index just past the closing '>'.
  size_t generics(size_t open, std::vector<std::string>& out) const {
    int depth = 0;
    bool at_start = true;  // at the start of a parameter
    size_t k = open;
    for (; k < t_.size(); ++k) {
      if (is(k, "<")) ++depth;
      else if (is(k, ">") && !is(k - 1, "-") && --depth == 0) return k + 1;
      else if (depth == 1 && is(k, ",")) at_start = true;
      else if (depth == 1 && at_start) {
        at_start = false;
        if (ident(k, "const") && k + 1 < t_.size()) out.push_back("const " + t_[k + 1].text);
        else if (t_[k].kind == Token::Ident) out.push_back(t_[k].text);
      }
      if (is(k, "(")) return k;  // unbalanced: stop at the parameters
    }
    return k;
  }

  // Whether the tokens [from, to) are just `loop { }` around spin hints: a body
  // that never returns and never ends the program.
  bool only_loops(size_t from, size_t to) const {
    if (!ident(from, "loop") || !is(from + 1, "{") || close_of(from + 1) != to) return false;
    static const std::set<std::string> spin = {"core", "hint", "spin_loop", "sync", "atomic", "compiler_fence",
                                               "fence", "Ordering", "SeqCst", "Relaxed", "Acquire", "Release",
                                               "AcqRel", "continue"};
    for (size_t k = from + 2; k + 1 < to; ++k) {
      if (t_[k].kind == Token::Ident && !spin.count(t_[k].text)) return false;
      if (t_[k].kind != Token::Ident && t_[k].kind != Token::Punct) return false;
    }
    return true;
  }

  struct Reach {
    int scope;
    size_t end;
  };
  struct Body {
    int fn;
    size_t end;
  };

  const std::vector<Token>& t_;
  const fs::path& file_;
  CrateScan& scan_;
  const int base_scope_;
  std::vector<Reach> open_scopes_;  // cfg(...) scopes open at the current token
  std::vector<Body> bodies_;        // function bodies open at the current token
  size_t i_ = 0;
  int depth_ = 0;
  std::vector<int> foreign_;                 // brace depths of open extern blocks
  std::vector<std::string> foreign_abi_;     // and their ABIs
  std::vector<std::vector<Token>> attrs_;    // attributes of the next item
  std::string abi_;                          // extern "ABI" fn
  std::vector<ModDecl> mods_;
};

}  // namespace

std::vector<ModDecl> scan_text(std::string_view text, const fs::path& file, CrateScan& scan, int scope) {
  const std::vector<Token> tokens = tokenize(text);
  return Scanner(tokens, file, scan, scope).run();
}

namespace {

// A cfg predicate under the device pass (`device_cfg` set) or the host pass
// (`set` false: it is not); any other name, feature or key is unknown (Maybe).
Compiled eval(const std::vector<Token>& p, size_t& k, const std::string& cfg, bool set = true) {
  auto is = [&](size_t j, std::string_view s) { return j < p.size() && p[j].text == s && p[j].kind != Token::Str; };
  if (k >= p.size() || p[k].kind != Token::Ident) return Compiled::Maybe;
  const std::string& word = p[k].text;
  if ((word == "not" || word == "all" || word == "any") && is(k + 1, "(")) {
    k += 2;
    std::vector<Compiled> args;
    while (k < p.size() && !is(k, ")")) {
      const size_t before = k;
      args.push_back(eval(p, k, cfg, set));
      int depth = 0;  // skip to the next ',' or the closing ')' at this level
      while (k < p.size() && (depth > 0 || (!is(k, ",") && !is(k, ")")))) {
        if (is(k, "(")) ++depth;
        if (is(k, ")")) --depth;
        ++k;
      }
      if (is(k, ",")) ++k;
      if (k == before) ++k;
    }
    ++k;  // the ')'
    auto count = [&](Compiled c) { return std::count(args.begin(), args.end(), c); };
    if (word == "not") return args.size() != 1 || args[0] == Compiled::Maybe ? Compiled::Maybe
                              : args[0] == Compiled::Yes                     ? Compiled::No
                                                                              : Compiled::Yes;
    if (word == "all") return count(Compiled::No) ? Compiled::No : count(Compiled::Maybe) ? Compiled::Maybe : Compiled::Yes;
    return count(Compiled::Yes) ? Compiled::Yes : count(Compiled::Maybe) ? Compiled::Maybe : Compiled::No;
  }
  ++k;
  if (is(k, "=")) return k += 2, Compiled::Maybe;
  return word != cfg ? Compiled::Maybe : set ? Compiled::Yes : Compiled::No;
}

}  // namespace

Compiled device_compiles(const CrateScan& scan, int scope, const std::string& device_cfg, bool device) {
  Compiled result = Compiled::Yes;
  for (int s = scope; s > 0 && s < static_cast<int>(scan.scopes.size()); s = scan.scopes[s].parent) {
    size_t k = 0;
    const Compiled c = eval(scan.scopes[s].predicate, k, device_cfg, device);
    if (c == Compiled::No) return Compiled::No;
    if (c == Compiled::Maybe) result = Compiled::Maybe;
  }
  return result;
}

}  // namespace ob::toolchain::rust
