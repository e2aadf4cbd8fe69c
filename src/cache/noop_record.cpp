#include "offload_build/cache/noop_record.hpp"

#include <charconv>
#include <set>

#include "offload_build/config/config.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/secrets.hpp"

namespace ob::cache {

namespace {

// 2: with the lookups that found nothing (absent paths, system directories).
constexpr std::string_view kHeader = "offload-build no-op record 3\n";  // 3: stamps with the ctime
constexpr std::string_view kTrailer = "end\n";
// 201 jobs with their headers are ~100 KiB; a record is never near this.
constexpr uint64_t kMaxRecord = uint64_t{16} << 20;

// Strings are "<length> <bytes>\n", numbers "<decimal>\n": any byte in a
// path or a variable's value survives.
class Writer {
 public:
  Writer& str(std::string_view s) {
    out_ += std::to_string(s.size());
    out_ += ' ';
    out_ += s;
    out_ += '\n';
    return *this;
  }
  template <typename N>
  Writer& num(N n) {
    out_ += std::to_string(n);
    out_ += '\n';
    return *this;
  }
  std::string take() { return std::move(out_); }
  std::string out_{kHeader};
};

class Reader {
 public:
  explicit Reader(std::string_view text) : in_(text) {}

  // A number and its newline (int64_t or uint64_t: from_chars refuses a
  // sign an unsigned one cannot have).
  template <class N>
  bool num(N& n) {
    const char* end = in_.data() + in_.size();
    auto [p, ec] = std::from_chars(in_.data(), end, n);
    if (ec != std::errc() || p == end || *p != '\n') return false;
    in_.remove_prefix(static_cast<size_t>(p - in_.data()) + 1);
    return true;
  }
  bool str(std::string& s) {
    size_t n = 0;
    const char* end = in_.data() + in_.size();
    auto [p, ec] = std::from_chars(in_.data(), end, n);
    if (ec != std::errc() || p == end || *p != ' ') return false;
    const size_t at = static_cast<size_t>(p - in_.data()) + 1;
    if (n > in_.size() - at || n + 1 > in_.size() - at || in_[at + n] != '\n') return false;
    s.assign(in_.substr(at, n));
    in_.remove_prefix(at + n + 1);
    return true;
  }
  // A count of items each at least two bytes long: never more than what is left.
  bool count(size_t& n) {
    uint64_t c = 0;
    if (!num(c) || c > in_.size() / 2) return false;
    n = static_cast<size_t>(c);
    return true;
  }
  bool literal(std::string_view s) {
    if (in_.substr(0, s.size()) != s) return false;
    in_.remove_prefix(s.size());
    return true;
  }
  bool at_end() const { return in_.empty(); }

 private:
  std::string_view in_;
};

bool read_stamp(Reader& r, Stamp& s) {
  int64_t exists = 0;
  if (!r.num(exists) || (exists != 0 && exists != 1)) return false;
  s.exists = exists == 1;
  return r.num(s.size) && r.num(s.mtime_ns) && r.num(s.device) && r.num(s.inode) && r.num(s.ctime_ns);
}

NoopVariable variable_now(const std::string& name) {
  NoopVariable v{name, config::env(name.c_str()), util::hidden_from_children(name)};
  if (v.secret && v.value) v.value = "";
  return v;
}

}  // namespace

fs::path noop_record_file(const fs::path& build_dir) { return build_dir / ".offload-build" / "noop"; }

std::string encode_noop_record(const NoopRecord& record) {
  Writer w;
  w.str(record.fingerprint).str(record.program);
  w.num(record.jobs.size());
  for (const auto& job : record.jobs) w.str(job);
  w.num(record.env.size());
  for (const auto& v : record.env) w.str(v.name).num(!v.value ? 0 : v.secret ? 2 : 1).str(v.value.value_or(""));
  w.num(record.files.size());
  for (const auto& [path, s] : record.files)
    w.str(path).num(s.exists ? 1 : 0).num(s.size).num(s.mtime_ns).num(s.device).num(s.inode).num(s.ctime_ns);
  std::string text = w.take();
  text += kTrailer;
  return text;
}

std::optional<NoopRecord> decode_noop_record(std::string_view text) {
  Reader r(text);
  NoopRecord record;
  size_t n = 0;
  if (!r.literal(kHeader) || !r.str(record.fingerprint) || !r.str(record.program) || !r.count(n))
    return std::nullopt;
  record.jobs.resize(n);
  for (auto& job : record.jobs)
    if (!r.str(job)) return std::nullopt;
  if (!r.count(n)) return std::nullopt;
  record.env.resize(n);
  for (auto& var : record.env) {
    int64_t kind = 0;  // 0 unset, 1 set, 2 a secret that is set (no value kept)
    std::string v;
    if (!r.str(var.name) || !r.num(kind) || kind < 0 || kind > 2 || !r.str(v)) return std::nullopt;
    if (kind == 2 && !v.empty()) return std::nullopt;
    var.secret = kind == 2;
    if (kind != 0) var.value = std::move(v);
  }
  if (!r.count(n)) return std::nullopt;
  record.files.resize(n);
  for (auto& [path, stamp] : record.files)
    if (!r.str(path) || !read_stamp(r, stamp)) return std::nullopt;
  if (!r.literal(kTrailer) || !r.at_end()) return std::nullopt;
  return record;
}

std::optional<NoopRecord> read_noop_record(const fs::path& file) {
  auto text = util::read_file(file, kMaxRecord);
  if (!text) return std::nullopt;
  return decode_noop_record(*text);
}

void write_noop_record(const fs::path& file, const NoopRecord& record) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (!util::write_file_atomic(file, encode_noop_record(record))) fs::remove(file, ec);
}

void forget_noop_record(const fs::path& file) {
  std::error_code ec;
  fs::remove(file, ec);
}

bool noop_record_holds(const NoopRecord& record) {
  for (const auto& var : record.env) {
    const char* now = config::env_or_null(var.name.c_str());
    if ((now != nullptr) != var.value.has_value()) return false;
    if (now && !var.secret && *var.value != now) return false;
  }
  for (const auto& [path, stamp] : record.files)
    if (any_stamp(path.c_str()) != stamp) return false;
  return true;
}

std::optional<NoopRecord> make_noop_record(const BuildState& state, const plan::Plan& plan,
                                           const std::vector<fs::path>& more_files,
                                           std::string fingerprint, int64_t racy_from_ns) {
  std::map<std::string, Stamp> files;
  if (!state.current_stamps(plan, files)) return std::nullopt;
  for (const auto& path : more_files) files.try_emplace(full_path(path, plan.cwd).string(), any_stamp(path));
  std::set<std::string> products;
  for (const auto& job : plan.jobs)
    for (const auto& out : job.outputs) products.insert(full_path(out, plan.cwd).string());
  for (const auto& [path, stamp] : files)
    if (stamp.exists && stamp.mtime_ns >= racy_from_ns && !products.count(path)) return std::nullopt;

  NoopRecord record;
  record.fingerprint = std::move(fingerprint);
  record.program = plan.program.string();
  for (plan::JobId id : exec::up_to_date_order(plan)) record.jobs.push_back(plan.jobs[id].describe(plan.cwd));
  if (record.jobs.size() != plan.jobs.size()) return std::nullopt;  // a cycle: never planned
  for (const auto& name : config::env_names_read()) record.env.push_back(variable_now(name));
  record.files.assign(files.begin(), files.end());
  return record;
}

}  // namespace ob::cache
