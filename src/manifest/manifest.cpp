// Loading offload.json: parse once with nlohmann::json, then validate and resolve
// every key, locating the first problem with JsonLocator for the diagnostic.
#include "offload_build/manifest/manifest.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "manifest_reader.hpp"
#include "rust_manifest.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/storage/remote/remote.hpp"
#include "offload_build/manifest/json_locator.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::manifest {
namespace {

using detail::example_for;
using detail::kManifestKeys;
using detail::Reader;

const std::vector<std::string> kRequiredKeys = {"name", "sources", "targets"};

// A directory from the manifest: relative to the project, absolute, no trailing '/'.
fs::path resolve_dir(const fs::path& project_dir, const std::string& dir) {
  fs::path p = (project_dir / dir).lexically_normal();
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p;
}

bool is_file_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos;
}

Result<void> check_keys(const Reader& r) {
  std::optional<std::pair<TextPos, std::string>> first;  // the earliest unknown key
  for (const auto& [key, value] : r.root().items()) {
    if (std::find(kManifestKeys.begin(), kManifestKeys.end(), key) != kManifestKeys.end()) continue;
    const TextPos pos = r.key_pos(json_pointer("", key)).value_or(TextPos{});
    if (!first || std::pair(pos.line, pos.column) < std::pair(first->first.line, first->first.column))
      first = {pos, key};
  }
  if (first) {
    std::string msg = "unknown key \"" + first->second + "\"; ";
    if (auto near = util::closest_match(first->second, kManifestKeys))
      msg += "did you mean \"" + *near + "\"?";
    else
      msg += "accepted keys: " + util::join(kManifestKeys, ", ");
    return r.error_at_key(json_pointer("", first->second), msg);
  }
  for (const auto& key : kRequiredKeys)
    if (!r.root().contains(key))
      return r.error_at("", "missing required key \"" + key + "\"; add it, e.g. " + example_for(key));
  return {};
}

Result<void> read_scalars(const Reader& r, Manifest& m) {
  for (const char* ignored : {"$schema", "description"}) OB_TRY(r.optional_string(ignored, true));
  auto name = r.optional_string("name");
  OB_TRY(name);
  m.name = **name;

  auto output = r.optional_string("output");
  OB_TRY(output);
  m.output = output->value_or(m.name);
  if (!is_file_name(m.output)) {
    if (*output)
      return r.error_at("/output", "\"output\" must be a file name, not \"" + m.output +
                                       "\"; choose the directory with \"build_dir\"");
    return r.error_at("/name", "\"name\" \"" + m.name + "\" cannot be the program file name; "
                                   "set \"output\" to a file name");
  }

  auto build_dir = r.optional_string("build_dir");
  OB_TRY(build_dir);
  m.build_dir = resolve_dir(m.project_dir, build_dir->value_or("build"));

  auto cache_dir = r.optional_string("cache_dir");
  OB_TRY(cache_dir);
  if (*cache_dir) m.cache_dir = resolve_dir(m.project_dir, **cache_dir);
  auto base_dir = r.optional_string("base_dir");
  OB_TRY(base_dir);
  if (*base_dir) m.base_dir = resolve_dir(m.project_dir, **base_dir);
  auto max_size = r.optional_string("cache_max_size");
  OB_TRY(max_size);
  if (*max_size) {
    auto bytes = util::parse_size(**max_size);
    if (!bytes) return r.error_at("/cache_max_size", bytes.error().message);
    m.cache_max_size = *bytes;
  }
  if (auto it = r.root().find("remote_storage"); it != r.root().end() && it->is_string()) {
    auto one = r.optional_string("remote_storage");
    OB_TRY(one);
    m.remote_storage = {**one};
  } else {
    auto list = r.string_list("remote_storage");
    OB_TRY(list);
    m.remote_storage = std::move(*list);
  }
  for (size_t i = 0; i < m.remote_storage.size(); ++i) {
    auto parsed = storage::parse_remote_url(m.remote_storage[i]);
    if (!parsed)
      return r.error_at(r.root()["remote_storage"].is_string()
                            ? std::string("/remote_storage")
                            : "/remote_storage/" + std::to_string(i),
                        parsed.error().message);
  }
  auto time_macros = r.optional_bool("cache_time_macros");
  OB_TRY(time_macros);
  m.cache_time_macros = time_macros->value_or(false);
  auto linker = r.optional_string("linker");
  OB_TRY(linker);
  if (*linker) {
    if (**linker == "system") m.linker = Manifest::Linker::System;
    else if (**linker != "lld")
      return r.error_at("/linker", "unknown linker \"" + **linker +
                                       "\"; use \"lld\" (LLVM's, the default) or \"system\" "
                                       "(the compiler's default, e.g. GNU ld)");
  }

  return detail::read_toolchain(r, m);
}

Result<void> read_targets(const Reader& r, Manifest& m) {
  auto spellings = r.string_list("targets");
  OB_TRY(spellings);
  if (spellings->empty())
    return r.error_at("/targets", "\"targets\" is empty; list at least one offload target, e.g. [\"host\"]");
  for (size_t i = 0; i < spellings->size(); ++i) {
    auto target = resolve_target((*spellings)[i]);
    if (!target) return r.error_at(json_pointer("/targets", i), target.error().message);
    if (std::find(m.targets.begin(), m.targets.end(), *target) == m.targets.end())
      m.targets.push_back(*target);
  }
  return {};
}

// defines, libs and include_dirs are written without their -D, -l, -I.
Result<void> check_no_flag_prefix(const Reader& r, const std::string& key,
                                  const std::vector<std::string>& values) {
  static const std::vector<std::pair<std::string, std::string>> prefixes = {
      {"defines", "-D"}, {"libs", "-l"}, {"include_dirs", "-I"}};
  const auto it = std::find_if(prefixes.begin(), prefixes.end(),
                               [&](const auto& p) { return p.first == key; });
  if (it == prefixes.end()) return {};
  for (size_t i = 0; i < values.size(); ++i) {
    if (!util::starts_with(values[i], it->second)) continue;
    const std::string bare = values[i].substr(2);
    const std::string what = key == "defines" ? "NAME or NAME=VALUE" : key == "libs" ? "the library name" : "the directory";
    return r.error_at(json_pointer("/" + key, i),
                      "\"" + key + "\" entry \"" + values[i] + "\" starts with " + it->second +
                          "; write " + what + " without " + it->second + ", e.g. \"" + bare + "\"");
  }
  return {};
}

Result<void> check_defines(const Reader& r, const std::vector<std::string>& defines) {
  for (size_t i = 0; i < defines.size(); ++i) {
    const std::string name = defines[i].substr(0, defines[i].find_first_of("=("));
    const bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                    std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
    if (!ok)
      return r.error_at(json_pointer("/defines", i),
                        "define \"" + defines[i] + "\" does not start with a macro name; write NAME or "
                        "NAME=VALUE, where NAME is a C identifier, e.g. \"N=1024\"");
  }
  return {};
}

Result<void> read_lists(const Reader& r, Manifest& m, const ManifestOptions& options) {
  const std::pair<const char*, std::vector<std::string>*> lists[] = {
      {"include_dirs", &m.include_dirs}, {"defines", &m.defines},       {"flags", &m.flags},
      {"host_flags", &m.host_flags},     {"device_flags", &m.device_flags}, {"link_flags", &m.link_flags},
      {"libs", &m.libs}};
  for (const auto& [key, field] : lists) {
    auto values = r.string_list(key);
    OB_TRY(values);
    OB_TRY(check_no_flag_prefix(r, key, *values));
    if (auto problem = options.check_list ? options.check_list(key, *values) : std::nullopt)
      return r.error_at(json_pointer(std::string("/") + key, problem->first), problem->second);
    *field = std::move(*values);
  }
  return check_defines(r, m.defines);
}

Result<void> read_sources(const Reader& r, Manifest& m) {
  auto language = r.optional_string("language");
  OB_TRY(language);
  std::optional<Language> forced;
  if (*language) {
    auto lang = parse_language(**language);
    if (!lang) return r.error_at("/language", lang.error().message);
    forced = *lang;
  }
  auto patterns = r.string_list("sources");
  OB_TRY(patterns);
  if (patterns->empty())
    return r.error_at("/sources", "\"sources\" is empty; list at least one source file or glob, e.g. [\"src/*.c\"]");
  for (size_t i = 0; i < patterns->size(); ++i) {
    const std::string where = json_pointer("/sources", i);
    auto files = expand_source_pattern(m.project_dir, (*patterns)[i], &m.glob_dirs);
    if (!files) return r.error_at(where, files.error().message);
    for (const auto& file : *files) {
      auto lang = forced ? Result<Language>(*forced) : language_for_source(file, m.project_dir);
      if (!lang) return r.error_at(where, lang.error().message);
      m.sources.push_back({file, *lang});
    }
  }
  auto by_path = [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; };
  auto same_path = [](const SourceFile& a, const SourceFile& b) { return a.path == b.path; };
  std::stable_sort(m.sources.begin(), m.sources.end(), by_path);
  m.sources.erase(std::unique(m.sources.begin(), m.sources.end(), same_path), m.sources.end());
  for (auto& dir : m.glob_dirs) dir = dir.lexically_normal();
  std::sort(m.glob_dirs.begin(), m.glob_dirs.end());
  m.glob_dirs.erase(std::unique(m.glob_dirs.begin(), m.glob_dirs.end()), m.glob_dirs.end());
  return {};
}

}  // namespace

Result<Manifest> parse_manifest(const std::string& text, const fs::path& file,
                                const ManifestOptions& options) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const JsonSyntaxError err = describe_json_error(text, e.byte, e.what());
    return Error::usage(format_diagnostic(file, err.pos, err.message));
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range: number overflow
    const JsonSyntaxError err = describe_json_error(text, 0, e.what());
    return Error::usage(format_diagnostic(file, err.pos, err.message));
  }
  const Reader r(text, file, root);
  if (!root.is_object())
    return r.error_at("", "the manifest must be a JSON object, not " + detail::type_phrase(root) +
                              "; e.g. {\"name\": \"saxpy\", \"sources\": [\"src/*.c\"], \"targets\": [\"host\"]}");
  OB_TRY(check_keys(r));

  Manifest m;
  std::error_code ec;
  const fs::path absolute = fs::absolute(file, ec);
  m.file = (ec ? file : absolute).lexically_normal();
  m.project_dir = m.file.parent_path();
  OB_TRY(read_scalars(r, m));
  OB_TRY(read_targets(r, m));
  OB_TRY(read_lists(r, m, options));
  OB_TRY(read_sources(r, m));
  OB_TRY(detail::read_rust(r, m));
  return m;
}

std::optional<fs::path> manifest_build_dir(const fs::path& file) {
  auto text = util::read_file(file, kMaxManifestSize);
  if (!text) return std::nullopt;
  const auto root = nlohmann::json::parse(*text, nullptr, false);
  if (!root.is_object()) return std::nullopt;
  std::string dir = "build";
  if (auto it = root.find("build_dir"); it != root.end()) {
    if (!it->is_string()) return std::nullopt;
    dir = it->get<std::string>();
  }
  std::error_code ec;
  const fs::path absolute = fs::absolute(file, ec);
  if (ec) return std::nullopt;
  return resolve_dir(absolute.lexically_normal().parent_path(), dir);
}

Result<Manifest> load_manifest(const fs::path& file, const ManifestOptions& options) {
  auto text = util::read_regular_file(file, kMaxManifestSize, "a manifest");
  if (!text) return text.error();
  return parse_manifest(*text, file, options);
}

}  // namespace ob::manifest
