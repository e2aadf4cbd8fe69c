// Finding rustc and probing its -Zoffload: a few short rustc runs (version, the
// settings -Zoffload lists, whether LLVM Offload is built in). Used by doctor and
// by every Rust build, which remembers the answer for the rest of the process.
#include "offload_build/toolchain/rustc_probe.hpp"
#include "offload_build/config/config.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <system_error>

#include "offload_build/process/subprocess.hpp"
#include "rustc_probe_memo.hpp"
#include "offload_build/toolchain/doctor_facts.hpp"
#include "offload_build/toolchain/probe.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/file_identity.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::rust {

namespace {

using probe::is_executable;



std::string first_line(std::string_view text) { return util::trim(text.substr(0, text.find('\n'))); }

// A private temporary directory, removed when this goes out of scope.
struct TempDir {
  fs::path path;
  TempDir() {
    std::error_code ec;
    std::string tmpl = (fs::temp_directory_path(ec) / "offload-build-rustc-XXXXXX").string();
    if (!ec && ::mkdtemp(tmpl.data())) path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// A rustup nightly without asking rustup: $RUSTUP_HOME/toolchains/nightly-<host>, else
// the last (newest dated) nightly-* toolchain.
std::optional<fs::path> rustup_dir_nightly(const fs::path& rustup_home) {
  const fs::path dir = rustup_home / "toolchains";
  if (is_executable(dir / "nightly-x86_64-unknown-linux-gnu/bin/rustc"))
    return dir / "nightly-x86_64-unknown-linux-gnu/bin/rustc";
  std::optional<fs::path> best;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (util::starts_with(name, "nightly") && is_executable(it->path() / "bin/rustc") &&
        (!best || it->path() / "bin/rustc" > *best))
      best = it->path() / "bin/rustc";
  }
  return best;
}

// `rustup which --toolchain NAME rustc` (~20 ms, a no-op cargo build's
// largest cost after cargo), remembered in the probe memo under what its
// answer depends on: the rustup binary PATH finds, $RUSTUP_HOME's
// settings.toml and toolchains/ (an install, update, link or new default
// host changes one), the RUSTUP_* variables, and the answer's own stamp.
// Not remembered while one of them changed within the last second (the
// racy-file rule, as cargo's answers: toolchain/cargo_answers.hpp).
std::optional<fs::path> rustup_which(const std::string& toolchain, const RustcSearch& s) {
  const std::optional<fs::path> rustup = find_in_path("rustup", s.path_env);
  if (!rustup) return std::nullopt;
  std::vector<fs::path> watched{*rustup};
  if (s.rustup_home) watched.insert(watched.end(), {*s.rustup_home / "settings.toml", *s.rustup_home / "toolchains"});
  std::string key = "rustup which --toolchain " + toolchain + " rustc";
  for (const auto& v : config::env_with_prefixes({"RUSTUP_"})) key += "\n" + v;
  int64_t newest = 0;
  for (const auto& w : watched) {
    const util::FileStamp st = util::file_stamp(w);
    key += "\n" + w.string() + " " + st.text;
    newest = std::max(newest, st.mtime_ns);
  }
  const auto& memo = probe_memo_dir();
  if (auto answer = probe::recall(memo, "rustup-which", key); answer && answer->is_object()) {
    const fs::path rustc = answer->value("rustc", "");
    if (!rustc.empty() && util::file_stamp(rustc).text == answer->value("stamp", "") && is_executable(rustc))
      return rustc;
  }
  const int64_t asked = util::wall_clock_ns();
  auto out = probe::run({"rustup", "which", "--toolchain", toolchain, "rustc"}, {}, {{"RUSTUP_AUTO_INSTALL", "0"}});
  if (!out || out->exit_code != 0 || !is_executable(first_line(out->out))) return std::nullopt;
  const fs::path rustc = first_line(out->out);
  const util::FileStamp st = util::file_stamp(rustc);
  if (!util::racy(std::max(newest, st.mtime_ns), asked))
    probe::remember(memo, "rustup-which", key, nlohmann::json{{"rustc", rustc.string()}, {"stamp", st.text}});
  return rustc;
}

void locate(const RustcSearch& s, RustcFacts& f) {
  if (s.hint) {
    f.origin = "offload.json";
    if (is_executable(*s.hint)) f.rustc = *s.hint;
    else f.missing_note = "\"toolchain\": {\"rustc\": \"" + s.hint->string() + "\"} in offload.json is not an executable file";
    return;
  }
  if (s.env_rustc && !s.env_rustc->empty()) {
    f.origin = "$RUSTC";
    const std::string& v = *s.env_rustc;
    if (v.find('/') != std::string::npos) {
      if (is_executable(v)) f.rustc = fs::path(v);
    } else {
      f.rustc = find_in_path(v, s.path_env);
    }
    if (!f.rustc) f.missing_note = "$RUSTC=" + v + " is not an executable file";
    return;
  }
  if (s.toolchain) {
    f.origin = "toolchain " + *s.toolchain + " from " + s.toolchain_origin;
    f.rustc = rustup_which(*s.toolchain, s);
    if (!f.rustc)
      f.missing_note = "toolchain " + *s.toolchain + " (from " + s.toolchain_origin +
                       ") is not installed: `rustup toolchain install " + *s.toolchain + "`, or pin a nightly there";
    return;
  }
  if (auto rustc = rustup_which("nightly", s)) {
    f.rustc = std::move(rustc);
    f.origin = "rustup nightly";
    return;
  }
  if (s.rustup_home) {
    if (auto p = rustup_dir_nightly(*s.rustup_home)) {
      f.rustc = *p;
      f.origin = "rustup nightly";
      return;
    }
  }
  if (auto p = find_in_path("rustc", s.path_env)) {
    f.rustc = *p;
    f.origin = "PATH";
  }
}

// -Zoffload=Host= on an empty crate reaches the LLVM Offload entry points at once:
// a rustc built without them panics with a message that says so (~0.1-0.4 s).
void probe_llvm_offload(RustcFacts& f) {
  TempDir tmp;
  if (tmp.path.empty()) {
    f.llvm_offload_note = "not probed (no temporary directory)";
    return;
  }
  std::ofstream(tmp.path / "probe.rs").flush();
  std::ofstream(tmp.path / "host.out").flush();
  auto out = probe::run({f.rustc->string(), "-Zunstable-options",
                        "-Zoffload=Host=" + (tmp.path / "host.out").string(), "-Clto=fat",
                        "--crate-type", "lib", "--emit=obj", "-o", (tmp.path / "probe.o").string(),
                        (tmp.path / "probe.rs").string()},
                       tmp.path, {{"RUSTC_ICE", "0"}, {"RUST_BACKTRACE", "0"}});
  if (!out) {
    f.llvm_offload_note = "not probed (rustc did not start)";
  } else if (out->err.find("not built with LLVM Offload support") != std::string::npos) {
    f.llvm_offload = Tri::no;
    f.llvm_offload_note = "-Zoffload=Host= panics: not built with LLVM Offload support";
  } else if (out->exit_code == 0) {
    f.llvm_offload = Tri::yes;
    f.llvm_offload_note = "-Zoffload=Host= compiles an empty crate";
  } else {
    f.llvm_offload_note = "not determined (probe failed: " + first_line(out->err) + ")";
  }
}

}  // namespace

namespace {
RustcFacts probe_located(RustcFacts f);
}  // namespace

std::optional<std::pair<std::string, fs::path>> pinned_toolchain(const fs::path& start) {
  std::error_code ec;
  for (fs::path dir = start; !dir.empty(); dir = dir.parent_path()) {
    for (const char* name : {"rust-toolchain.toml", "rust-toolchain"}) {
      const fs::path file = dir / name;
      if (!fs::is_regular_file(file, ec)) continue;
      std::ifstream in(file);
      std::string line, channel;
      bool toml = false;
      while (std::getline(in, line)) {
        const std::string t = util::trim(line);
        if (t.empty() || t[0] == '#') continue;
        if (t[0] == '[') {
          toml = true;
          continue;
        }
        const size_t eq = t.find('=');
        if (eq == std::string::npos) {
          if (!toml && channel.empty()) channel = t;  // the legacy one-line form
          continue;
        }
        toml = true;
        if (util::trim(t.substr(0, eq)) != "channel") continue;
        std::string v = util::trim(t.substr(eq + 1));
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.find(v.front(), 1) - 1);
        channel = v;
      }
      if (!channel.empty()) return std::pair{channel, file};
    }
    if (dir == dir.root_path()) break;
  }
  return std::nullopt;
}

RustcSearch RustcSearch::from_environment(const std::optional<fs::path>& hint, const fs::path& project_dir) {
  RustcSearch s;
  s.hint = hint;
  // rustup's proxies (cargo +TOOLCHAIN offload) name the toolchain and why;
  // the default toolchain is no choice made for this project.
  const char* source = config::env_or_null("RUSTUP_TOOLCHAIN_SOURCE");
  if (const char* v = config::env_or_null("RUSTUP_TOOLCHAIN"); v && *v && !(source && std::string(source) == "default")) {
    s.toolchain = v;
    const std::string src = source ? source : "env";
    s.toolchain_origin = src == "cli" ? "cargo +" + std::string(v) + " (rustup's +toolchain)"
                         : src == "toolchain-file" ? "a rust-toolchain.toml (rustup)"
                         : src == "override" ? "`rustup override`"
                                             : "$RUSTUP_TOOLCHAIN";
    if (src == "toolchain-file" && !project_dir.empty())
      if (auto pin = pinned_toolchain(project_dir)) s.toolchain_origin = pin->second.string();
  } else if (!project_dir.empty()) {
    if (auto pin = pinned_toolchain(project_dir)) {
      s.toolchain = pin->first;
      s.toolchain_origin = pin->second.string();
    }
  }
  if (const char* v = config::env_or_null("RUSTC")) s.env_rustc = v;
  if (const char* v = config::env_or_null("PATH")) s.path_env = v;
  if (const char* v = config::env_or_null("RUSTUP_HOME"); v && *v) s.rustup_home = fs::path(v);
  else if (const char* h = config::env_or_null("HOME"); h && *h) s.rustup_home = fs::path(h) / ".rustup";
  return s;
}

RustcFacts probe_rustc(const RustcSearch& search) {
  RustcFacts f;
  locate(search, f);
  if (!f.rustc) return f;
  if (read_probe_memo(f)) return f;
  f = probe_located(std::move(f));
  write_probe_memo(f);
  return f;
}

namespace {

RustcFacts probe_located(RustcFacts f) {
  const std::string rustc = f.rustc->string();
  if (auto out = probe::run({rustc, "--version"}); out && out->exit_code == 0) {
    f.version_line = first_line(out->out);
    f.version = doctor::parse_version(f.version_line);
  }
  f.nightly = f.version.find("nightly") != std::string::npos ||
              f.version.find("-dev") != std::string::npos;
  if (!f.nightly) return f;

  // A deliberately bad value: rustc answers "unknown unstable option" when it has no
  // -Zoffload, else "incorrect value ... `Host=<Absolute-Path>`, `Device`, `Test` was expected".
  if (auto out = probe::run({rustc, "-Zunstable-options", "-Zoffload=?", "--print", "sysroot"})) {
    if (out->err.find("option `offload`") != std::string::npos || out->exit_code == 0) {
      f.accepts_offload = true;
      f.offload_settings = doctor::parse_offload_settings(out->err);
    }
  }
  if (!f.accepts_offload) return f;
  // The probe fits the two-pass flavour (Host=<path>/host.out, Device, Test); the
  // newer HostMetadata/Device/Host flavour takes other arguments.
  bool host_flag = false, host_metadata = false;
  for (const auto& s : f.offload_settings) {
    host_flag = host_flag || util::starts_with(s, "Host=");
    host_metadata = host_metadata || util::starts_with(s, "HostMetadata");
  }
  if (host_flag && !host_metadata) probe_llvm_offload(f);
  else f.llvm_offload_note = "not probed (unfamiliar -Zoffload settings)";
  return f;
}

}  // namespace

Result<RustToolchain> find_rust_toolchain(const std::optional<fs::path>& hint, const fs::path& project_dir) {
  const RustcSearch search = RustcSearch::from_environment(hint, project_dir);
  static std::map<std::string, Result<RustToolchain>> memo;
  const std::string key = (hint ? hint->string() : "") + "\n" + search.env_rustc.value_or("") +
                          "\n" + search.path_env + "\n" + search.toolchain.value_or("");
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  Result<RustToolchain> tc = rust_toolchain_from(probe_rustc(search));
  if (tc && is_executable(tc->rustc.parent_path() / "cargo")) tc->cargo = tc->rustc.parent_path() / "cargo";
  memo.emplace(key, tc);
  return tc;
}

}  // namespace ob::toolchain::rust
