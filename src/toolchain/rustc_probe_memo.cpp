// Remembering what a rustc binary answered to the probes, across processes:
// the probes cost ~0.5 s and their answers only change with the binary.
#include "rustc_probe_memo.hpp"

#include <unistd.h>

#include <fstream>
#include <functional>
#include <optional>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/storage/storage.hpp"
#include "offload_build/util/file_identity.hpp"
#include "offload_build/util/json_text.hpp"

namespace ob::toolchain::rust {

namespace {

std::optional<fs::path> g_memo_dir;

fs::path memo_file(const std::string& identity) {
  return *g_memo_dir / fmt::format("rustc-{:016x}.json", std::hash<std::string>{}(identity));
}

}  // namespace

void set_probe_memo_dir(std::optional<fs::path> dir) { g_memo_dir = std::move(dir); }
const std::optional<fs::path>& probe_memo_dir() { return g_memo_dir; }

bool read_probe_memo(RustcFacts& f) {
  if (!g_memo_dir || !f.rustc) return false;
  const std::string identity = util::file_identity(*f.rustc);
  // Only a file of ours, not through a symlink (storage/storage.hpp).
  auto text = storage::read_trusted_file(memo_file(identity), false);
  if (!text) return false;
  auto j = util::parse_lossless(*text);
  if (j.is_discarded() || j.value("identity", "") != identity) return false;  // hash collision
  try {
    f.version = j.at("version").get<std::string>();
    f.version_line = j.at("version_line").get<std::string>();
    f.nightly = j.at("nightly").get<bool>();
    f.accepts_offload = j.at("accepts_offload").get<bool>();
    f.offload_settings = j.at("offload_settings").get<std::vector<std::string>>();
    f.llvm_offload = static_cast<Tri>(j.at("llvm_offload").get<int>());
    f.llvm_offload_note = j.at("llvm_offload_note").get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  return true;
}

void write_probe_memo(const RustcFacts& f) {
  if (!g_memo_dir || !f.rustc) return;
  const std::string identity = util::file_identity(*f.rustc);
  nlohmann::json j{{"identity", identity},
                   {"version", f.version},
                   {"version_line", f.version_line},
                   {"nightly", f.nightly},
                   {"accepts_offload", f.accepts_offload},
                   {"offload_settings", f.offload_settings},
                   {"llvm_offload", static_cast<int>(f.llvm_offload)},
                   {"llvm_offload_note", f.llvm_offload_note}};
  // Only a memo: failing to write it is never an error.
  storage::write_file_atomically(*g_memo_dir, memo_file(identity).filename().string(),
                               util::dump_lossless(j));
}

}  // namespace ob::toolchain::rust
