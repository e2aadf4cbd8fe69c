// detail::Reader: type checks with located, hinting error messages.
#include "manifest_reader.hpp"

#include "offload_build/util/strings.hpp"

#include <algorithm>

namespace ob::manifest::detail {

const std::vector<std::string> kManifestKeys = {
    "$schema",    "description",  "name",       "output", "build_dir", "sources",
    "language",   "targets",      "include_dirs", "defines", "flags",   "host_flags",
    "device_flags", "link_flags", "libs",       "toolchain", "device_cfg", "cache_dir", "base_dir", "cache_max_size",
    "cache_time_macros", "linker", "remote_storage"};

std::string example_for(std::string_view key) {
  static const std::vector<std::pair<std::string_view, std::string_view>> examples = {
      {"$schema", R"("$schema": "offload.schema.json")"},
      {"description", R"("description": "SAXPY on every device")"},
      {"name", R"("name": "saxpy")"},
      {"output", R"("output": "saxpy")"},
      {"build_dir", R"("build_dir": "build")"},
      {"sources", R"("sources": ["src/*.c"])"},
      {"language", R"("language": "c++")"},
      {"targets", R"("targets": ["host", "sm_90"])"},
      {"include_dirs", R"("include_dirs": ["include"])"},
      {"defines", R"("defines": ["NDEBUG", "N=1024"])"},
      {"flags", R"("flags": ["-O2"])"},
      {"host_flags", R"("host_flags": ["-march=native"])"},
      {"device_flags", R"("device_flags": ["-O3"])"},
      {"link_flags", R"("link_flags": ["-Wl,--as-needed"])"},
      {"libs", R"("libs": ["m"])"},
      {"toolchain", R"("toolchain": "/usr/lib/llvm-22")"},
      {"device_cfg", R"("device_cfg": "offload_device")"},
      {"cache_dir", R"("cache_dir": ".offload-cache")"},
      {"base_dir", R"("base_dir": "..")"},
      {"cache_max_size", R"("cache_max_size": "5G")"},
      {"cache_time_macros", R"("cache_time_macros": false)"},
      {"linker", R"("linker": "lld")"},
      {"remote_storage", R"("remote_storage": "http://cache.example:8080/ob|read-only")"}};
  for (const auto& [k, example] : examples)
    if (k == key) return std::string(example);
  return {};
}

std::string type_phrase(const nlohmann::json& value) {
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_array()) return "a list";
  if (value.is_object()) return "an object";
  return "null";
}

const JsonLocator& Reader::locator() const {
  if (!locator_) locator_.emplace(text_);
  return *locator_;
}

Error Reader::error_at(std::string_view pointer, std::string_view message) const {
  return Error::usage(format_diagnostic(file_, locator().value(pointer), message));
}

Error Reader::error_at_key(std::string_view pointer, std::string_view message) const {
  return Error::usage(format_diagnostic(file_, locator().key(pointer), message));
}

Result<std::optional<std::string>> Reader::optional_string(const std::string& key,
                                                           bool allow_empty) const {
  const auto it = root_.find(key);
  if (it == root_.end()) return std::optional<std::string>();
  const std::string where = json_pointer("", key);
  if (!it->is_string())
    return error_at(where, "\"" + key + "\" must be a string, not " + type_phrase(*it) + "; e.g. " +
                               example_for(key));
  std::string value = it->get<std::string>();
  if (value.empty() && !allow_empty)
    return error_at(where, "\"" + key + "\" is empty; e.g. " + example_for(key) + ", or leave the key out");
  return std::optional<std::string>(std::move(value));
}

Result<std::optional<bool>> Reader::optional_bool(const std::string& key) const {
  const auto it = root_.find(key);
  if (it == root_.end()) return std::optional<bool>();
  if (!it->is_boolean())
    return error_at(json_pointer("", key), "\"" + key + "\" must be true or false, not " +
                                               type_phrase(*it) + "; e.g. " + example_for(key));
  return std::optional<bool>(it->get<bool>());
}

Result<std::vector<std::string>> Reader::string_list(const std::string& key) const {
  const auto it = root_.find(key);
  if (it == root_.end()) return std::vector<std::string>();
  const std::string where = json_pointer("", key);
  if (!it->is_array()) {
    const std::string hint = it->is_string() ? "write [" + util::shorten(it->dump(), 200) + "]" : "e.g. " + example_for(key);
    return error_at(where, "\"" + key + "\" must be a list of strings, not " + type_phrase(*it) + "; " + hint);
  }
  std::vector<std::string> values;
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& v = (*it)[i];
    if (!v.is_string())
      return error_at(json_pointer(where, i), "\"" + key + "\" must be a list of strings, but entry " +
                                                  std::to_string(i + 1) + " is " + type_phrase(v) +
                                                  "; e.g. " + example_for(key));
    values.push_back(v.get<std::string>());
    if (values.back().empty())
      return error_at(json_pointer(where, i), "\"" + key + "\" entry " + std::to_string(i + 1) +
                                                  " is an empty string; remove it");
  }
  return values;
}

}  // namespace ob::manifest::detail
