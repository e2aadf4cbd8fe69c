#include "offload_build/cache/entry_metadata.hpp"

#include "offload_build/cache/place.hpp"
#include "offload_build/storage/remote/layered.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <fstream>
#include <mutex>
#include <optional>

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

bool is_key(std::string_view s) {
  if (s.size() < 3 || s.size() > 200) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          c == '_' || c == '-'))
      return false;
  return true;
}

bool is_key(const json& j) { return j.is_string() && is_key(std::string_view(j.get_ref<const std::string&>())); }

// A manifest exactly as encode_manifest_meta writes it (no whitespace, keys in
// order, numbers without sign or leading zero, strings of printable ASCII
// without a backslash), read without building a JSON document: that costs a
// cache hit more than anything else it does. nullopt for anything else, which
// the general path below reads (or calls corrupt); what it accepts, the
// general path reads the same.
class ManifestScan {
 public:
  explicit ManifestScan(std::string_view text) : s_(text) {}

  std::optional<std::vector<Candidate>> candidates() {
    std::vector<Candidate> out;
    if (!lit("{\"candidates\":[")) return std::nullopt;
    if (!lit("]")) {
      do {
        Candidate c;
        if (!lit("{\"deps\":[")) return std::nullopt;
        if (!lit("]")) {
          do {
            Dep d;
            if (!lit("[") || !str(d.path) || !lit(",") || !str(d.sha256) || !lit(",") || !num(d.device) ||
                !lit(",") || !num(d.inode) || !lit(",") || !str(d.name) || !lit("]"))
              return std::nullopt;
            c.deps.push_back(std::move(d));
          } while (lit(","));
          if (!lit("]")) return std::nullopt;
        }
        if (!lit(",\"result\":") || !str(c.result) || !is_key(std::string_view(c.result)) || !lit("}")) return std::nullopt;
        out.push_back(std::move(c));
      } while (lit(","));
      if (!lit("]")) return std::nullopt;
    }
    if (!lit("}") || pos_ != s_.size()) return std::nullopt;
    return out;
  }

 private:
  bool lit(std::string_view t) {
    if (s_.substr(pos_, t.size()) != t) return false;
    pos_ += t.size();
    return true;
  }
  bool str(std::string& out) {
    if (!lit("\"")) return false;
    const size_t start = pos_;
    for (; pos_ < s_.size() && s_[pos_] != '"'; ++pos_)
      if (s_[pos_] < 0x20 || s_[pos_] > 0x7e || s_[pos_] == '\\') return false;
    if (pos_ == s_.size()) return false;
    out.assign(s_.substr(start, pos_++ - start));
    return true;
  }
  bool num(uint64_t& v) {
    const size_t start = pos_;
    v = 0;
    for (; pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; ++pos_) {
      if (v > (UINT64_MAX - 9) / 10) return false;  // near the top: the general path decides
      v = v * 10 + static_cast<uint64_t>(s_[pos_] - '0');
    }
    return pos_ > start && !(s_[start] == '0' && pos_ - start > 1);
  }

  std::string_view s_;
  size_t pos_ = 0;
};

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
  if (auto fast = ManifestScan(entry.metadata).candidates()) return std::move(*fast);
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
  } else if (kind == storage::kConfinedKind) {
    if (entry.metadata != storage::kConfinedKind || !entry.files.empty()) return "not a mark of a confined entry";
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
