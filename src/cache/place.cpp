#include "offload_build/cache/place.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "offload_build/storage/hash.hpp"
#include "offload_build/util/json_text.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cache {

namespace {

using nlohmann::json;

bool option_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// Where an absolute path starts in an argument: the whole argument, after
// '=' (--sysroot=/p), or after an option's letters (-I/p); npos: none.
size_t path_start(const std::string& s) {
  if (s.empty()) return std::string::npos;
  if (s[0] == '/') return 0;
  if (s[0] != '-') return std::string::npos;
  if (auto eq = s.find('='); eq != std::string::npos && eq + 1 < s.size() && s[eq + 1] == '/') return eq + 1;
  const size_t slash = s.find('/');
  if (slash == std::string::npos) return std::string::npos;
  for (size_t i = 1; i < slash; ++i)
    if (!option_char(s[i])) return std::string::npos;
  return slash;
}

// `s` with its absolute path under `top` (the working directory's first
// component: /home, /tmp, /builds) made relative to `cwd`: the same for a
// checkout with the same layout anywhere under it. System directories
// (/usr, /lib) stay absolute: they do not move with a checkout.
std::string portable(const std::string& s, const fs::path& cwd, const fs::path& top) {
  const size_t at = path_start(s);
  if (at == std::string::npos || top.empty()) return s;
  const fs::path p = fs::path(s.substr(at)).lexically_normal();
  const fs::path rel = p.lexically_relative(top);
  if (rel.empty() || *rel.begin() == "..") return s;
  return s.substr(0, at) + p.lexically_relative(cwd).string();
}

fs::path top_of(const fs::path& cwd) {
  auto it = cwd.begin();
  if (it == cwd.end() || *it != "/" || ++it == cwd.end()) return {};
  return fs::path("/") / *it;
}

// The deepest directory holding both.
fs::path common_parent(const fs::path& a, const fs::path& b) {
  fs::path out;
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end() && *i == *j; ++i, ++j) out /= *i;
  return out;
}

}  // namespace

std::string place_free_key(const plan::Plan& plan, const plan::Job& job, const JobKey& key) {
  const fs::path top = top_of(plan.cwd);
  storage::Hasher h;
  h.field("format", std::string(kKeyFormat) + " place-free, program-free").field("kind", plan::job_kind_name(job.kind));
  if (job.target) h.field("target", job.target->triple + ":" + job.target->arch);
  for (const auto& a : key.argv) h.field("arg", portable(a, plan.cwd, top));
  for (const auto& e : key.env) {  // NAME=/path (flang's PWD) as a path
    const size_t eq = e.find('=');
    h.field("env", eq == std::string::npos ? e : e.substr(0, eq + 1) + portable(e.substr(eq + 1), plan.cwd, top));
  }
  for (const auto& d : key.inputs) {
    h.field("input", portable(d.path, plan.cwd, top)).field("sha", d.sha256);
    h.field("name", portable(d.name, plan.cwd, top));
  }
  return h.hex();
}

PlaceRecord place_record(const plan::Plan& plan, const JobKey& key) {
  PlaceRecord r{plan.cwd.string(), key.tools, key.argv, {}};
  for (const auto& d : key.inputs) r.inputs.emplace_back(d.path, d.name);
  return r;
}

std::string encode_place_meta(const PlaceRecord& record) {
  json inputs = json::array();
  for (const auto& [path, name] : record.inputs) inputs.push_back({path, name});
  return util::dump_lossless(
      json{{"cwd", record.cwd}, {"tools", record.tools}, {"argv", record.argv}, {"inputs", inputs}});
}

Result<PlaceRecord> decode_place_meta(const storage::Entry& entry) {
  auto bad = [](const char* what) { return Error::failure(std::string("bad metadata: ") + what); };
  const json doc = util::parse_lossless(entry.metadata);
  if (!doc.is_object() || doc.size() != 4 || !entry.files.empty()) return bad("not a place entry");
  const json &cwd = doc.value("cwd", json()), &tools = doc.value("tools", json()),
             &argv = doc.value("argv", json()), &inputs = doc.value("inputs", json());
  if (!cwd.is_string() || !tools.is_array() || !argv.is_array() || !inputs.is_array())
    return bad("not a place entry");
  PlaceRecord r{cwd.get<std::string>(), {}, {}, {}};
  for (const auto& [from, to] : {std::pair{&tools, &r.tools}, std::pair{&argv, &r.argv}})
    for (const auto& a : *from) {
      if (!a.is_string()) return bad("a program or an argument is not a string");
      to->push_back(a.get<std::string>());
    }
  for (const auto& i : inputs) {
    if (!i.is_array() || i.size() != 2 || !i[0].is_string() || !i[1].is_string())
      return bad("an input is not [PATH, NAME]");
    r.inputs.emplace_back(i[0].get<std::string>(), i[1].get<std::string>());
  }
  return r;
}

namespace {

// The first program that differs, as "NOW here, EARLIER there".
std::string program_differs(const PlaceRecord& earlier, const PlaceRecord& now) {
  for (size_t i = 0; i < std::max(now.tools.size(), earlier.tools.size()); ++i) {
    const std::string here = i < now.tools.size() ? now.tools[i] : "none";
    const std::string there = i < earlier.tools.size() ? earlier.tools[i] : "none";
    if (here != there) return fmt::format("{} here, {} there", here, there);
  }
  return {};
}

}  // namespace

std::optional<std::string> explain_place(const PlaceRecord& earlier, const PlaceRecord& now) {
  const std::string program = program_differs(earlier, now);
  if (earlier.cwd == now.cwd)
    return program.empty() ? std::nullopt
                           : std::optional(fmt::format("only its compiler differs: the same job was built with "
                                                       "another program and would be served but for it ({})",
                                                       program));
  std::string differs;
  for (size_t i = 0; i < now.argv.size() && i < earlier.argv.size() && differs.empty(); ++i)
    if (now.argv[i] != earlier.argv[i]) differs = fmt::format("{} here, {} there", now.argv[i], earlier.argv[i]);
  for (size_t i = 0; i < now.inputs.size() && i < earlier.inputs.size() && differs.empty(); ++i) {
    const auto &[path, name] = now.inputs[i];
    if (path != earlier.inputs[i].first)
      differs = fmt::format("{} here, {} there", path, earlier.inputs[i].first);
    else if (name != earlier.inputs[i].second)
      differs = fmt::format("kernel names of {} from {} here, {} there", path, name, earlier.inputs[i].second);
  }
  const fs::path parent = common_parent(now.cwd, earlier.cwd);
  const std::string what =
      parent.empty() || parent == "/"
          ? std::string("keep the checkouts at the same depth under one directory and set base_dir to it")
          : fmt::format("set base_dir to a directory holding both checkouts (--base-dir {0} or "
                        "OFFLOAD_BUILD_BASE_DIR={0}; with CMake, the offload-build package passes its "
                        "source and build trees itself)",
                        parent.string());
  if (!program.empty())
    return fmt::format("its place and its compiler differ: the same job was built in {} with another program "
                       "({}), and its paths differ ({}); {}",
                       earlier.cwd, program, differs.empty() ? "paths" : differs, what);
  return fmt::format("only its place differs: the same job was built in {} and would be served but for "
                     "its paths ({}); {}",
                     earlier.cwd, differs.empty() ? "paths" : differs, what);
}

}  // namespace ob::cache
