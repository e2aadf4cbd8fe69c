// Parse libomptarget's LIBOMPTARGET_INFO=-1 lines (LLVM 22), e.g.
//   omptarget device 0 info: Copying data from host to device, HstPtr=0x.., TgtPtr=0x.., Size=4194304, Name=y[0:N]
//   "PluginInterface" device 0 info: Launching kernel __omp_offloading_fe00_a7209a_main_l6 with [1,1,1] blocks and [1,1,1] threads in Generic mode
//   omptarget device 0 info: Copying data from device to host, TgtPtr=0x.., HstPtr=0x.., Size=4194304, Name=y[0:N]
// The prefix names the component that printed it: omptarget, "PluginInterface",
// CUDA, AMDGPU (older releases: Libomptarget); any one word or quoted name is accepted.
#include "offload_build/report/offload_log.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/core.h>

#include "offload_build/util/strings.hpp"

namespace ob::report {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

struct Header {
  int device = -1;
  std::string_view payload;  // the text after "info:"
};

size_t skip_spaces(std::string_view s, size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// `<name> device <N> info:` starting exactly at `pos`; <name> is a word or "quoted".
std::optional<Header> header_at(std::string_view line, size_t pos) {
  size_t i = pos;
  if (i >= line.size()) return std::nullopt;
  if (line[i] == '"') {
    size_t end = line.find('"', i + 1);
    if (end == std::string_view::npos || end == i + 1) return std::nullopt;
    i = end + 1;
  } else {
    size_t start = i;
    while (i < line.size() && is_word(line[i])) ++i;
    if (i == start) return std::nullopt;
  }
  size_t after_name = skip_spaces(line, i);
  if (after_name == i) return std::nullopt;
  i = after_name;
  if (line.substr(i, 6) != "device") return std::nullopt;
  size_t after_device = skip_spaces(line, i + 6);
  if (after_device == i + 6) return std::nullopt;
  i = after_device;
  size_t digits = i;
  int device = 0;
  while (i < line.size() && is_digit(line[i]) && i - digits < 9) device = device * 10 + (line[i++] - '0');
  if (i == digits) return std::nullopt;
  i = skip_spaces(line, i);
  if (line.substr(i, 5) != "info:") return std::nullopt;
  return Header{device, line.substr(skip_spaces(line, i + 5))};
}

// The header anywhere in the line: runtime output can share a line with the
// program's own unterminated stdout when both go to one terminal or file.
std::optional<Header> find_header(std::string_view line) {
  if (auto h = header_at(line, skip_spaces(line, 0))) return h;
  for (size_t at = line.find("device"); at != std::string_view::npos;
       at = line.find("device", at + 1)) {
    // Walk back over the spaces and the name before "device".
    size_t i = at;
    while (i > 0 && is_space(line[i - 1])) --i;
    if (i == at || i == 0) continue;
    size_t name_end = i;
    if (line[name_end - 1] == '"') {
      if (name_end < 2) continue;
      size_t open = line.rfind('"', name_end - 2);
      if (open == std::string_view::npos) continue;
      i = open;
    } else {
      while (i > 0 && is_word(line[i - 1])) --i;
    }
    if (auto h = header_at(line, i)) return h;
  }
  return std::nullopt;
}

std::vector<std::string_view> tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while ((i = skip_spaces(s, i)) < s.size()) {
    size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

// "Launching kernel NAME with B blocks and T threads in MODE mode"; B and T are
// "[x,y,z]" in LLVM 22 and plain numbers in older releases; spaces inside are dropped.
std::optional<KernelLaunch> parse_launch(std::string_view payload, int device) {
  auto t = tokens(payload);
  if (t.size() < 3 || t[0] != "Launching" || t[1] != "kernel") return std::nullopt;
  KernelLaunch k;
  k.device = device;
  k.kernel = std::string(t[2]);
  size_t i = 3;
  auto collect_until = [&](std::string_view stop) {
    std::string out;
    while (i < t.size() && t[i] != stop) out += t[i++];
    if (i < t.size()) ++i;  // the stop word
    return out;
  };
  if (i < t.size() && t[i] == "with") {
    ++i;
    k.blocks = collect_until("blocks");
    if (i < t.size() && t[i] == "and") ++i;
    k.threads = collect_until("threads");
  }
  return k;
}

// Size=<N> in a copy line (spaces around '=' allowed).
std::optional<uint64_t> size_field(std::string_view payload) {
  size_t at = payload.find("Size");
  while (at != std::string_view::npos) {
    size_t i = skip_spaces(payload, at + 4);
    if (i < payload.size() && payload[i] == '=') {
      i = skip_spaces(payload, i + 1);
      uint64_t n = 0;
      size_t start = i;
      while (i < payload.size() && is_digit(payload[i])) n = n * 10 + uint64_t(payload[i++] - '0');
      if (i > start) return n;
    }
    at = payload.find("Size", at + 4);
  }
  return std::nullopt;
}

bool starts_with_words(std::string_view payload, std::string_view words) {
  auto a = tokens(payload), b = tokens(words);
  if (a.size() < b.size()) return false;
  for (size_t i = 0; i < b.size(); ++i) {
    std::string_view x = a[i];
    if (i + 1 == b.size() && !x.empty() && x.back() == ',') x.remove_suffix(1);
    if (x != b[i]) return false;
  }
  return true;
}

// B below 1 KiB, else one decimal in the largest unit that keeps the number under 1024
// once rounded (1048575 B is "1.0 MiB", not "1024.0 KiB").
std::string format_bytes(uint64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  double v = double(n) / 1024.0;
  for (const char* unit : {"KiB", "MiB", "GiB"}) {
    if (v < 1023.95 || std::string_view(unit) == "GiB") return fmt::format("{:.1f} {}", v, unit);
    v /= 1024.0;
  }
  return "";  // not reached
}

std::string plural(size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string copies(uint64_t bytes, size_t count, std::string_view direction) {
  if (count == 0) return fmt::format("nothing copied {}", direction);
  return fmt::format("{} {} in {}", format_bytes(bytes), direction, plural(count, "copy", "copies"));
}

}  // namespace

bool is_runtime_info_line(std::string_view line) {
  return header_at(line, skip_spaces(line, 0)).has_value();
}

void accumulate(OffloadSummary& summary, std::string_view line) {
  auto h = find_header(line);
  if (!h) return;
  if (auto launch = parse_launch(h->payload, h->device)) {
    summary.launches.push_back(std::move(*launch));
    return;
  }
  const bool to_device = starts_with_words(h->payload, "Copying data from host to device");
  const bool from_device = starts_with_words(h->payload, "Copying data from device to host");
  if (!to_device && !from_device) return;
  // The plugin also copies its own launch environment to a GPU; that is not user data.
  if (h->payload.find("Name=KernelLaunchEnv") != std::string_view::npos) return;
  uint64_t size = size_field(h->payload).value_or(0);
  if (to_device) {
    summary.bytes_to_device += size;
    ++summary.copies_to_device;
  } else {
    summary.bytes_from_device += size;
    ++summary.copies_from_device;
  }
}

OffloadSummary parse_offload_log(std::string_view text) {
  OffloadSummary summary;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    accumulate(summary, text.substr(start, end - start));
    start = end + 1;
  }
  return summary;
}

std::string format_summary(const OffloadSummary& s) {
  std::string out = "offload: ";
  if (s.launches.empty()) {
    out += "no kernel launches";
  } else {
    std::vector<int> devices;
    std::vector<std::pair<std::string, size_t>> kernels;  // first-seen order, launch count
    for (const auto& k : s.launches) {
      if (std::find(devices.begin(), devices.end(), k.device) == devices.end()) devices.push_back(k.device);
      auto it = std::find_if(kernels.begin(), kernels.end(),
                             [&](const auto& e) { return e.first == k.kernel; });
      if (it == kernels.end()) kernels.emplace_back(k.kernel, 1);
      else ++it->second;
    }
    std::sort(devices.begin(), devices.end());
    std::vector<std::string> dev_names, kernel_names;
    for (int d : devices) dev_names.push_back(std::to_string(d));
    constexpr size_t kShown = 3;
    for (size_t i = 0; i < kernels.size() && i < kShown; ++i) {
      kernel_names.push_back(kernels[i].second == 1
                                 ? kernels[i].first
                                 : fmt::format("{} x{}", kernels[i].first, kernels[i].second));
    }
    if (kernels.size() > kShown) kernel_names.push_back(fmt::format("+{} more", kernels.size() - kShown));
    out += fmt::format("{} on {} {} ({})", plural(s.launches.size(), "kernel launch", "kernel launches"),
                       devices.size() == 1 ? "device" : "devices", util::join(dev_names, ", "),
                       util::join(kernel_names, ", "));
  }
  out += "; ";
  if (s.copies_to_device == 0 && s.copies_from_device == 0) {
    out += "no data copied";
  } else {
    out += copies(s.bytes_to_device, s.copies_to_device, "to device") + ", " +
           copies(s.bytes_from_device, s.copies_from_device, "from device");
  }
  return out;
}

}  // namespace ob::report
