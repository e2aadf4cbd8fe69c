// Dependency scans in batches (exec/remote/scan_batch.hpp).
#include "offload_build/exec/remote/scan_batch.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/frontends/scan_deps.hpp"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/paths.hpp"

namespace ob::exec {

namespace {

// The environment without the variable naming where lookups are recorded
// and the kernel names' salt (neither changes which files a compile reads):
// scans whose environments are otherwise equal share a batch.
std::string env_key(const process::Command& c) {
  std::string key;
  for (const auto& [k, v] : c.env)
    if (!toolchain::is_lookups_variable(k) && !toolchain::is_salt_variable(k)) key += k + (v ? "=" + *v : "!") + '\0';
  return key;
}

// A depfile naming `files` (Make's escapes: cache::parse_depfile reads them).
std::optional<std::string> depfile_text(const std::vector<std::string>& files) {
  std::string text = "scan:";
  for (const auto& f : files) {
    if (f.find_first_of("\n\r\\") != std::string::npos) return std::nullopt;
    text += " \\\n ";
    for (char c : f) {
      if (c == ' ' || c == '#') text += '\\';
      if (c == '$') text += '$';
      text += c;
    }
  }
  return text + "\n";
}

// A source's text that tests for a file or embeds one: __has_include,
// __has_include_next, __has_embed, or `#embed` (spaces allowed after the #).
bool tests_or_embeds(std::string_view text) {
  if (text.find("__has_include") != std::string_view::npos || text.find("__has_embed") != std::string_view::npos)
    return true;
  for (size_t at = text.find("embed"); at != std::string_view::npos; at = text.find("embed", at + 1)) {
    size_t i = at;
    while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t')) --i;
    if (i > 0 && text[i - 1] == '#') return true;
  }
  return false;
}

}  // namespace

bool ScanBatcher::tests_for_files(const std::vector<std::string>& files, const fs::path& cwd) {
  for (const auto& name : files) {
    const fs::path p = (cwd / name).lexically_normal();  // an absolute name stays
    bool system = false;
    for (const auto& d : system_dirs_) system |= util::is_under(p, d);
    struct stat st {};
    if (system || ::stat(p.c_str(), &st) != 0) continue;
    const std::string memo = p.string() + '\0' + std::to_string(st.st_size) + '\0' +
                             std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec);
    std::optional<bool> known;
    {
      std::lock_guard lock(m_);
      if (auto it = tests_.find(memo); it != tests_.end()) known = it->second;
    }
    if (!known) {
      const auto text = util::read_file(p, 64ull << 20);
      known = !text || tests_or_embeds(*text);  // unreadable: in doubt, scanned alone
      std::lock_guard lock(m_);
      tests_.emplace(memo, *known);
    }
    if (*known) return true;
  }
  return false;
}

struct ScanBatcher::Request {
  process::Command scan;
  toolchain::scan_deps::Entry batch;
  fs::path tool;  // clang-scan-deps beside the compiler
  std::string key;
  bool done = false;
  std::optional<std::vector<std::string>> files;     // what the batch found
  std::optional<std::vector<std::string>> absent;    // the batch's lookups that found nothing
};

// The most scans one clang-scan-deps run takes.
constexpr size_t kMaxBatch = 256;

std::shared_ptr<ScanBatcher::Request> ScanBatcher::request(const process::Command& scan) const {
  auto batch = toolchain::frontend::batch_scan(scan.argv);
  if (!batch || !fs::path(scan.argv[0]).is_absolute()) return nullptr;
  std::error_code ec;
  const fs::path tool = fs::canonical(scan.argv[0], ec).parent_path() / "clang-scan-deps";
  if (ec || access(tool.c_str(), X_OK) != 0) return nullptr;
  auto r = std::make_shared<Request>();
  r->scan = scan;
  r->batch = std::move(*batch);
  r->tool = tool;
  r->key = tool.string() + '\0' + env_key(scan);
  return r;
}

void ScanBatcher::prefetch(const process::Command& scan) {
  auto r = request(scan);
  if (!r) return;
  std::lock_guard lock(m_);
  if (!prefetched_.emplace(r->batch.depfile, r).second) return;
  pending_.push_back(std::move(r));
}

std::optional<ScanFound> ScanBatcher::run(const process::Command& scan, const fs::path& depfile) {
  auto r = request(scan);
  if (!r) return run_alone(scan, depfile);
  std::unique_lock lock(m_);
  // Prefetched (the same scan): its answer, or the batch that will give it.
  bool fresh = true;
  auto known = prefetched_.find(r->batch.depfile);
  if (known != prefetched_.end()) {
    if (known->second->key == r->key && known->second->scan.argv == scan.argv) {
      r = known->second;  // pending, in the batch running now, or done
      fresh = false;
    }
    prefetched_.erase(known);
  }
  if (fresh) pending_.push_back(r);
  while (!r->done) {
    if (busy_) {
      cv_.wait(lock);
      continue;
    }
    // This thread runs the next batch: waiting scans of the first one's kind.
    busy_ = true;
    std::vector<std::shared_ptr<Request>> take;
    const std::string key = pending_.front()->key;
    for (auto it = pending_.begin(); it != pending_.end() && take.size() < kMaxBatch;)
      if ((*it)->key == key) {
        take.push_back(*it);
        it = pending_.erase(it);
      } else {
        ++it;
      }
    lock.unlock();
    run_batch(take);
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
  lock.unlock();  // a done request is not written again
  // The depfile and the lookups its own clang -M would have recorded.
  ScanFound found;
  auto env = scan.env;
  const bool records = toolchain::redirect_lookups(env, r->batch.depfile).has_value();
  auto text = r->files ? depfile_text(*r->files) : std::nullopt;
  if (!text || (records && !r->absent)) return run_alone(scan, depfile);
  if (tests_for_files(*r->files, scan.cwd.empty() ? fs::current_path() : scan.cwd)) return run_alone(scan, depfile);
  found.depfile = std::move(*text);
  if (records) found.absent = r->absent;
  std::lock_guard count(m_);
  ++counts_.batched;
  return found;
}

std::optional<ScanFound> ScanBatcher::run_alone(const process::Command& scan, const fs::path& depfile) const {
  auto env = scan.env;
  const auto record = toolchain::redirect_lookups(env, depfile);
  std::error_code ec;
  if (record) fs::remove(*record, ec);
  std::optional<ScanFound> found;
  if (run_(scan)) {
    auto text = util::read_regular_file(depfile, 64ull << 20, "a dependency scan");
    std::string why;
    if (text) found = ScanFound{std::move(*text), record ? toolchain::read_lookups_record(*record, why) : std::nullopt};
    if (found && record && !found->absent) found.reset();
  }
  fs::remove(depfile, ec);
  if (record) fs::remove(*record, ec);
  return found;
}

void ScanBatcher::run_batch(std::vector<std::shared_ptr<Request>>& batch) {
  namespace scan_deps = toolchain::scan_deps;
  const fs::path at = batch.front()->batch.depfile;
  const fs::path db = fs::path(at).concat(".db.json"), out = fs::path(at).concat(".deps.json");
  nlohmann::json entries = nlohmann::json::array();
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto& s = batch[i]->scan;
    entries.push_back({{"directory", (s.cwd.empty() ? fs::current_path() : s.cwd).string()},
                       {"file", scan_deps::entry_name(i)},
                       {"arguments", batch[i]->batch.argv}});
  }
  process::Command c{scan_deps::argv(batch.front()->tool.string(), db.string(), out.string(), threads_),
                     batch.front()->scan.cwd, batch.front()->scan.env};
  // The scans' own environment (the preload library's identities too: a
  // file reached by two names is two files to it, as to each scan alone).
  const auto record = toolchain::redirect_lookups(c.env, out);
  std::error_code ec;
  if (record) fs::remove(*record, ec);
  std::optional<std::map<size_t, std::vector<std::string>>> deps;
  std::optional<std::vector<std::string>> absent;
  if (util::write_file_atomic(db, entries.dump()) && run_(c)) {
    auto text = util::read_regular_file(out, 64ull << 20, "clang-scan-deps' output");
    if (text) deps = scan_deps::read_output(*text);
    std::string why;
    if (record) absent = toolchain::read_lookups_record(*record, why);
  }
  for (const auto& f : {db, out}) fs::remove(f, ec);
  if (record) fs::remove(*record, ec);
  std::lock_guard lock(m_);
  for (size_t i = 0; i < batch.size(); ++i) {
    Request& r = *batch[i];
    r.done = true;
    if (!deps) continue;
    auto it = deps->find(i);
    if (it != deps->end()) r.files = std::move(it->second);
    r.absent = absent;
  }
  ++counts_.runs;
}

}  // namespace ob::exec
