// A project's working set in the engine (exec/remote/working_set.hpp).
#include "offload_build/exec/remote/working_set.hpp"

#include <charconv>

#include "offload_build/storage/hash.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/util/files.hpp"

namespace ob::exec {

namespace {

constexpr std::string_view kMagic = "ob-working-set-1\n";
constexpr const char* kSetValueKind = "working-set";

// "N\n" at `at`: the number, `at` moved past it.
std::optional<uint64_t> read_length(std::string_view text, size_t& at) {
  const size_t end = text.find('\n', at);
  if (end == std::string_view::npos || end == at || end - at > 20) return std::nullopt;
  uint64_t n = 0;
  auto [p, ec] = std::from_chars(text.data() + at, text.data() + end, n);
  if (ec != std::errc() || p != text.data() + end) return std::nullopt;
  at = end + 1;
  return n;
}

}  // namespace

std::optional<std::string> encode_working_set(const std::map<std::string, std::string>& values, uint64_t max_bytes) {
  std::string pack(kMagic);
  for (const auto& [name, value] : values) {
    pack += std::to_string(name.size()) + '\n' + std::to_string(value.size()) + '\n';
    pack += name;
    pack += value;
    if (pack.size() > max_bytes) return std::nullopt;
  }
  return pack;
}

std::optional<std::map<std::string, std::string>> decode_working_set(std::string_view pack) {
  if (pack.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  std::map<std::string, std::string> values;
  size_t at = kMagic.size();
  while (at < pack.size()) {
    auto name = read_length(pack, at);
    if (!name) return std::nullopt;
    auto value = read_length(pack, at);
    if (!value || *name > pack.size() - at || *value > pack.size() - at - *name) return std::nullopt;
    std::string key(pack.substr(at, *name));
    at += *name;
    values[std::move(key)] = std::string(pack.substr(at, *value));
    at += *value;
  }
  return values;
}

std::string working_set_name(std::string_view identity, std::string_view signing_key) {
  storage::Hasher h;
  h.field("working-set", "1").field("project", identity);
  if (!signing_key.empty())
    h.field("writer", storage::sha256_hex("offload-build working set writer\n" + std::string(signing_key)));
  return h.hex();
}

WorkingSet::WorkingSet(std::shared_ptr<EngineLink> link, std::string name, std::optional<fs::path> memo_dir)
    : link_(std::move(link)), name_(std::move(name)), memo_dir_(std::move(memo_dir)) {
  lazy_after_ = memo_text().empty() ? 0 : kLazyLookups;
}

bool WorkingSet::eager() const {
  std::lock_guard lock(mu_);
  return lazy_after_ == 0;
}

void WorkingSet::load() {
  std::lock_guard lock(mu_);
  if (loaded_ || name_.empty()) return;
  loaded_ = true;
  if (link_->down()) return;
  auto client = link_->client();
  if (!client || !*client || !(*client)->stores_values()) return;
  std::string pack, error;
  if (!(*client)->get_value(kSetValueKind, name_, kMaxWorkingSetBytes, pack, error)) {
    link_->failed(error);
    return;
  }
  if (pack.empty()) return;
  auto values = decode_working_set(pack);
  if (!values) return;  // not a pack of ours: every entry is asked alone
  values_ = std::move(*values);
  loaded_digest_ = storage::sha256_hex(pack);
  remember(loaded_digest_);
}

std::optional<std::string> WorkingSet::find(const std::string& name) {
  {
    std::lock_guard lock(mu_);
    if (name_.empty() || asked_++ < lazy_after_) return std::nullopt;
  }
  load();
  std::lock_guard lock(mu_);
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  ++served_;
  return it->second;
}

void WorkingSet::forget(const std::string& name) {
  std::lock_guard lock(mu_);
  values_.erase(name);
}

size_t WorkingSet::loaded() const {
  std::lock_guard lock(mu_);
  return values_.size();
}

bool WorkingSet::wanted() const {
  std::lock_guard lock(mu_);
  return !name_.empty() && loaded_digest_.empty() && memo_text().empty() && !link_->down();
}

void WorkingSet::save(const std::map<std::string, std::string>& values) {
  if (values.empty() || !wanted()) return;
  auto pack = encode_working_set(values);
  if (!pack) return;  // too big to keep whole: the entries stay one by one
  const std::string digest = storage::sha256_hex(*pack);
  auto client = link_->client();
  if (!client || !*client || !(*client)->stores_values()) return;
  std::string error;
  if (!(*client)->put_value(kSetValueKind, name_, *pack, error)) {
    link_->failed(error);
    return;
  }
  remember(digest);
}

std::string WorkingSet::memo_text() const {
  if (!memo_dir_) return {};
  return util::read_file(*memo_dir_ / name_, 1024).value_or("");
}

void WorkingSet::remember(const std::string& digest) const {
  if (memo_dir_) storage::write_file_atomically(*memo_dir_, name_, digest);
}

}  // namespace ob::exec
