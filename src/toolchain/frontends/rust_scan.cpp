// Picking out the items the kernel check needs from Rust tokens: functions (with
// their attributes and parameters), extern blocks, offload(...) launches, cfg
// names, inner #![no_core] and `mod x;` declarations.
#include <algorithm>

#include "offload_build/toolchain/frontends/rust_kernels.hpp"

namespace ob::rust {

namespace {

class Scanner {
 public:
  Scanner(const std::vector<Token>& t, const fs::path& file, CrateScan& scan)
      : t_(t), file_(file), scan_(scan) {}

  std::vector<ModDecl> run() {
    for (i_ = 0; i_ < t_.size(); ++i_) {
      if (is(i_, "#") && (is(i_ + 1, "[") || (is(i_ + 1, "!") && is(i_ + 2, "[")))) attribute();
      else if (ident(i_, "mod") && t_.size() > i_ + 2 && t_[i_ + 1].kind == Token::Ident && is(i_ + 2, ";")) module();
      else if (ident(i_, "extern")) extern_item();
      else if (ident(i_, "fn") && i_ + 1 < t_.size() && t_[i_ + 1].kind == Token::Ident) function();
      else if (ident(i_, "offload") && is(i_ + 1, "(") && i_ + 2 < t_.size() && t_[i_ + 2].kind == Token::Ident)
        scan_.launches.push_back({t_[i_ + 2].text, file_, t_[i_ + 2].line});
      else if ((ident(i_, "cfg") || ident(i_, "cfg_attr")) && (is(i_ + 1, "(") || (is(i_ + 1, "!") && is(i_ + 2, "("))))
        cfg_predicate(i_ + (is(i_ + 1, "!") ? 2 : 1), ident(i_, "cfg_attr"));
      else if (is(i_, "{")) { ++depth_; attrs_.clear(); }
      else if (is(i_, "}")) {
        if (!foreign_.empty() && foreign_.back() == depth_) foreign_.pop_back();
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

  void attribute() {
    const size_t open = i_ + (is(i_ + 1, "!") ? 2 : 1);
    const size_t end = close_of(open);
    std::vector<Token> inner(t_.begin() + open + 1, t_.begin() + std::max(end - 1, open + 1));
    for (size_t k = open + 1; k + 1 < end; ++k)
      if ((ident(k, "cfg") || ident(k, "cfg_attr")) && is(k + 1, "(")) cfg_predicate(k + 1, ident(k, "cfg_attr"));
    if (is(i_ + 1, "!")) {
      for (const auto& tok : inner) scan_.no_core = scan_.no_core || (tok.kind == Token::Ident && tok.text == "no_core");
    } else {
      attrs_.push_back(std::move(inner));
    }
    i_ = end - 1;
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
    ModDecl m{t_[i_ + 1].text, ""};
    for (const auto& a : attrs_)
      if (a.size() >= 3 && a[0].text == "path" && a[1].text == "=" && a[2].kind == Token::Str) m.path_attr = a[2].text;
    mods_.push_back(std::move(m));
    attrs_.clear();
    i_ += 2;
  }

  void extern_item() {
    size_t k = i_ + 1;
    std::string abi = "C";
    if (k < t_.size() && t_[k].kind == Token::Str) abi = t_[k++].text;
    if (is(k, "{")) {
      foreign_.push_back(depth_ + 1);
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
    fn.no_mangle = has_attr("no_mangle") || has_attr("export_name");
    fn.offload_kernel = has_attr("rustc_offload_kernel") || abi_ == "gpu-kernel";
    size_t k = i_ + 2;
    if (is(k, "<")) while (k < t_.size() && !is(k, "(")) ++k;  // generics
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
        param += (param.empty() ? "" : " ") + x;
      }
    }
    if (!param.empty()) fn.params.push_back(param);
    size_t body = end;
    while (body < t_.size() && !is(body, "{") && !is(body, ";")) ++body;
    const bool foreign = (!foreign_.empty() && foreign_.back() == depth_) || is(body, ";");
    (foreign ? scan_.foreign : scan_.functions).push_back(std::move(fn));
    attrs_.clear();
    abi_.clear();
    i_ = body - 1;  // continue at the body ('{' opens a scope) or the ';'
  }

  const std::vector<Token>& t_;
  const fs::path& file_;
  CrateScan& scan_;
  size_t i_ = 0;
  int depth_ = 0;
  std::vector<int> foreign_;                 // brace depths of open extern blocks
  std::vector<std::vector<Token>> attrs_;    // attributes of the next item
  std::string abi_;                          // extern "ABI" fn
  std::vector<ModDecl> mods_;
};

}  // namespace

std::vector<ModDecl> scan_text(std::string_view text, const fs::path& file, CrateScan& scan) {
  const std::vector<Token> tokens = tokenize(text);
  return Scanner(tokens, file, scan).run();
}

}  // namespace ob::rust
