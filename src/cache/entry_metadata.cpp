#include "offload_build/cache/entry_metadata.hpp"

#include "offload_build/cache/place.hpp"

#include <sys/stat.h>

#include <fstream>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "offload_build/util/json_text.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cache {

namespace {

using nlohmann::json;

Error bad(const std::string& what) { return Error::failure("bad metadata: " + what); }

// A launcher compile splits into a few jobs per target: far fewer than this.
constexpr uint64_t kMaxJobsPerEntry = 100000;

bool is_key(const json& j) {
  if (!j.is_string()) return false;
  const auto& s = j.get_ref<const std::string&>();
  if (s.size() < 3 || s.size() > 200) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          c == '_' || c == '-'))
      return false;
  return true;
}

Result<json> parse_object(const storage::Entry& entry) {
  json doc = util::parse_lossless(entry.metadata);
  if (doc.is_discarded()) return bad("not JSON");
  if (!doc.is_object()) return bad("not an object");
  return doc;
}

}  // namespace

std::string encode_result_meta(const ResultMeta& meta) {
  json j{{"job", meta.job}, {"modes", meta.modes}};
  if (meta.diagnostics) j["diagnostics"] = true;
  if (meta.jobs != 1) j["jobs"] = meta.jobs;
  return util::dump_lossless(j);
}

Result<ResultMeta> decode_result_meta(const storage::Entry& entry) {
  auto doc = parse_object(entry);
  if (!doc) return doc.error();
  ResultMeta meta;
  for (const auto& [name, value] : doc->items()) {
    if (name == "job") {
      if (!value.is_string()) return bad("\"job\" is not a string");
      meta.job = value.get<std::string>();
    } else if (name == "modes") {
      if (!value.is_array()) return bad("\"modes\" is not an array");
      for (const auto& m : value) {
        if (!m.is_number_unsigned() || m.get<uint64_t>() > 07777)
          return bad("a mode is not a number from 0 to 07777");
        meta.modes.push_back(m.get<unsigned>());
      }
    } else if (name == "diagnostics") {
      if (!value.is_boolean()) return bad("\"diagnostics\" is not true or false");
      meta.diagnostics = value.get<bool>();
    } else if (name == "jobs") {
      if (!value.is_number_unsigned() || value.get<uint64_t>() < 2 || value.get<uint64_t>() > kMaxJobsPerEntry)
        return bad("\"jobs\" is not a number from 2 to " + std::to_string(kMaxJobsPerEntry));
      meta.jobs = value.get<size_t>();
    } else {
      return bad(fmt::format("unexpected field \"{}\"", util::shorten(name, 40)));
    }
  }
  if (!doc->contains("job") || !doc->contains("modes")) return bad("\"job\" or \"modes\" missing");
  const size_t fixed = meta.modes.size() + (meta.diagnostics ? 1 : 0);
  if (entry.files.size() != fixed && entry.files.size() != fixed + 1)
    return bad(fmt::format("{} files for {} outputs", entry.files.size(), meta.modes.size()));
  meta.kept_depfile = entry.files.size() == fixed + 1;
  if (meta.diagnostics && entry.files.back().name != "diagnostics")
    return bad("the last file is not \"diagnostics\"");
  return meta;
}

std::string encode_manifest_meta(const std::vector<Candidate>& candidates) {
  auto arr = json::array();
  for (const auto& c : candidates) {
    auto deps = json::array();
    for (const auto& d : c.deps) deps.push_back({d.path, d.sha256, d.device, d.inode, d.name});
    arr.push_back({{"deps", deps}, {"result", c.result}});
  }
  return util::dump_lossless(json{{"candidates", arr}});
}

Result<std::vector<Candidate>> decode_manifest_meta(const storage::Entry& entry) {
  if (!entry.files.empty()) return bad("a manifest entry holds files");
  auto doc = parse_object(entry);
  if (!doc) return doc.error();
  if (doc->size() != 1 || !doc->contains("candidates") || !(*doc)["candidates"].is_array())
    return bad("expected exactly {\"candidates\": [...]}");
  std::vector<Candidate> out;
  for (const auto& c : (*doc)["candidates"]) {
    if (!c.is_object() || c.size() != 2 || !c.contains("deps") || !c["deps"].is_array() ||
        !is_key(c.value("result", json())))
      return bad("a candidate is not {\"deps\": [...], \"result\": KEY}");
    Candidate cand;
    cand.result = c["result"].get<std::string>();
    for (const auto& d : c["deps"]) {
      if (!d.is_array() || d.size() != 5 || !d[0].is_string() || !d[1].is_string() ||
          !d[2].is_number_unsigned() || !d[3].is_number_unsigned() || !d[4].is_string())
        return bad("a dependency is not [PATH, SHA256, DEVICE, INODE, NAME]");
      cand.deps.push_back({d[0].get<std::string>(), d[1].get<std::string>(),
                           d[2].get<uint64_t>(), d[3].get<uint64_t>(), d[4].get<std::string>()});
    }
    out.push_back(std::move(cand));
  }
  return out;
}

std::string entry_problem(std::string_view kind, const storage::Entry& entry) {
  if (kind == "result") {
    if (auto m = decode_result_meta(entry); !m) return m.error().message;
  } else if (kind == "manifest") {
    if (auto m = decode_manifest_meta(entry); !m) return m.error().message;
  } else if (kind == "place") {
    if (auto m = decode_place_meta(entry); !m) return m.error().message;
  } else {
    return fmt::format("unknown kind \"{}\"", util::shorten(kind, 40));
  }
  return {};
}

unsigned restored_mode(unsigned stored_mode, unsigned umask) {
  unsigned mode = 0666 & ~umask;
  if (stored_mode & 0111) mode |= 0111 & ~umask;
  return mode;
}

unsigned process_umask() {
  static unsigned value = [] {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("Umask:", 0) == 0) return static_cast<unsigned>(std::stoul(line.substr(6), nullptr, 8));
    // No /proc: ask umask(2), once, before threads need it.
    static std::mutex m;
    std::lock_guard lock(m);
    mode_t old = ::umask(022);
    ::umask(old);
    return static_cast<unsigned>(old);
  }();
  return value;
}

}  // namespace ob::cache
