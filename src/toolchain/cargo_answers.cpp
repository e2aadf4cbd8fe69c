// cargo's answers about a project, remembered under what they depend on
// (toolchain/cargo_answers.hpp). An entry holds the answer and the state of
// every file and directory it depends on (kind, size, mtime, ctime, inode:
// "absent" for a config file not there, so its appearance misses); it serves
// only while each is unchanged. An answer is not remembered when one of them
// was modified within a second before the question (git's racy-file rule: an
// edit in the same tick as cargo's read would leave the stamp as it was).
#include "offload_build/toolchain/cargo_answers.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/config/config.hpp"
#include "offload_build/storage/hash.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/util/file_identity.hpp"
#include "offload_build/util/json_text.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::cargo {

namespace {

// The variables cargo and rustc read: CARGO_*, RUST* (RUSTFLAGS, RUSTC_WRAPPER,
// RUSTUP_TOOLCHAIN...), cargo's internal __CARGO_*, and HOME (CARGO_HOME's default).
std::string environment() { return util::join(config::env_with_prefixes({"CARGO", "RUST", "__CARGO", "HOME="}), "\n"); }

// cargo's config files: .cargo/config(.toml) in the project's directory and
// each above it, then CARGO_HOME's; a --config argument that is a file.
std::vector<fs::path> config_files(const fs::path& dir, const std::vector<std::string>& argv) {
  std::vector<fs::path> out;
  for (fs::path d = dir;; d = d.parent_path()) {
    out.push_back(d / ".cargo" / "config");
    out.push_back(d / ".cargo" / "config.toml");
    if (d == d.parent_path()) break;
  }
  const char* home = config::env_or_null("CARGO_HOME");
  const char* user = config::env_or_null("HOME");
  if (home || user) {
    const fs::path h = home ? fs::path(home) : fs::path(user) / ".cargo";
    out.push_back(h / "config");
    out.push_back(h / "config.toml");
  }
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "--config" && util::ends_with(argv[i + 1], ".toml")) out.push_back(dir / argv[i + 1]);
  return out;
}

std::string question_key(const std::string& identity, const process::Command& cmd) {
  storage::Hasher h;
  h.field("identity", identity).field("cwd", cmd.cwd.string());
  for (const auto& a : cmd.argv) h.field("arg", a);
  for (const auto& [name, value] : cmd.env) h.field(name, value.value_or("\x01unset"));
  return h.hex();
}

}  // namespace

std::vector<fs::path> metadata_inputs(const std::string& metadata_json) {
  std::vector<fs::path> out;
  const auto root = nlohmann::json::parse(metadata_json, nullptr, false);
  if (!root.is_object()) return out;
  if (root.contains("workspace_root") && root["workspace_root"].is_string()) {
    const fs::path ws = root["workspace_root"].get<std::string>();
    out.push_back(ws / "Cargo.toml");
    out.push_back(ws / "Cargo.lock");
  }
  if (!root.contains("packages") || !root["packages"].is_array()) return out;
  for (const auto& p : root["packages"]) {
    if (!p.is_object() || !p.value("source", nlohmann::json()).is_null() || !p.contains("manifest_path") ||
        !p["manifest_path"].is_string())
      continue;  // a registry or git package: pinned by Cargo.lock
    const fs::path manifest = p["manifest_path"].get<std::string>();
    const fs::path dir = manifest.parent_path();
    out.push_back(manifest);
    // Target discovery: a file added or removed in one of these changes the
    // directory's mtime (src/main.rs, src/bin/x.rs, src/bin/x/main.rs, build.rs...).
    for (const char* sub : {"", "src", "src/bin", "examples", "tests", "benches"}) out.push_back(dir / sub);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "src" / "bin", ec))
      if (e.is_directory(ec)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Answers::Answers(std::optional<fs::path> memo, fs::path dir, std::vector<fs::path> binaries)
    : memo_(std::move(memo)), dir_(std::move(dir)) {
  for (const auto& b : binaries)
    if (!b.is_absolute()) memo_.reset();  // found on PATH: no identity to key it by
  if (!memo_) return;
  identity_ = environment();
  for (const auto& b : binaries) identity_ += "\n" + util::file_identity(b);
}

Result<process::Captured> Answers::ask(const process::Command& cmd, bool is_metadata) {
  if (!memo_) return process::capture(cmd);
  const std::string key = question_key(identity_, cmd);
  const std::string name = "cargo-" + key.substr(0, 32) + ".json";
  if (auto text = storage::read_trusted_file(*memo_ / name, false)) {
    const auto j = util::parse_lossless(*text);
    bool valid = j.is_object() && j.value("key", "") == key && j.contains("inputs") && j["inputs"].is_array();
    std::vector<fs::path> inputs;
    for (size_t i = 0; valid && i < j["inputs"].size(); ++i) {
      const auto& in = j["inputs"][i];
      valid = in.is_array() && in.size() == 2 && in[0].is_string() && in[1].is_string() &&
              util::file_stamp(in[0].get<std::string>()).text == in[1].get<std::string>();
      if (valid) inputs.emplace_back(in[0].get<std::string>());
    }
    if (valid && j.contains("out") && j["out"].is_string()) {
      if (is_metadata) watched_ = inputs;
      ++remembered_;
      return process::Captured{0, j["out"].get<std::string>(), j.value("err", "")};
    }
  }
  const int64_t asked = util::wall_clock_ns();
  auto answer = process::capture(cmd);
  if (!answer || answer->exit_code != 0) return answer;  // a failure is asked again next time
  if (is_metadata) {
    watched_ = metadata_inputs(answer->out);
    for (auto& c : config_files(dir_, cmd.argv)) watched_.push_back(std::move(c));
  }
  if (watched_.empty()) return answer;  // no metadata answer yet: nothing known to watch
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& p : watched_) {
    const util::FileStamp s = util::file_stamp(p);
    if (util::racy(s.mtime_ns, asked)) return answer;  // changed as it was read: not remembered
    inputs.push_back({p.string(), s.text});
  }
  const nlohmann::json entry{{"key", key}, {"inputs", inputs}, {"out", answer->out}, {"err", answer->err}};
  storage::write_file_atomically(*memo_, name, util::dump_lossless(entry));  // only a memo: may fail
  return answer;
}

}  // namespace ob::toolchain::cargo
