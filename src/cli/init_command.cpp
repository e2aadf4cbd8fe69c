#include "init_command.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <system_error>

#include <fmt/core.h>

#include "offload_build/config/config.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cli {

namespace {

bool has_init(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "init", ec);
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace

std::optional<fs::path> find_templates_dir(const std::optional<fs::path>& setting) {
  if (setting && has_init(*setting)) return *setting;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "offload-build" / "templates";
    if (has_init(installed)) return installed;
  }
#ifdef OB_SOURCE_DIR
  const fs::path source = fs::path(OB_SOURCE_DIR) / "templates";
  if (has_init(source)) return source;
#endif
  return std::nullopt;
}

std::string project_name_for(const fs::path& dir) {
  fs::path abs = fs::absolute(dir).lexically_normal();
  std::string name = abs.filename().string();
  if (name.empty()) name = abs.parent_path().filename().string();  // "dir/" normalizes to "dir/"
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '-';
  if (name.empty() || name == "-") name = "offload-project";
  return name;
}

Result<void> init_project(const InitOptions& options, std::ostream& out) {
  if (options.lang != "c" && options.lang != "cxx" && options.lang != "rust" && options.lang != "cargo")
    return Error::usage(fmt::format("init: unknown language \"{}\"; use --lang c, cxx, rust or cargo",
                                    options.lang));
  if (options.dir.empty()) return Error::usage("init: name the directory to create, e.g. `offload-build init my-app`");
  const auto templates = find_templates_dir(options.templates);
  if (!templates)
    return Error::usage(
        "init: no project templates found; looked in $OFFLOAD_BUILD_TEMPLATES, "
        "<offload-build's dir>/../share/offload-build/templates and the source tree; "
        "reinstall offload-build or set OFFLOAD_BUILD_TEMPLATES to its templates/ directory");
  const fs::path from = *templates / "init" / options.lang;
  if (!fs::is_directory(from))
    return Error::usage(fmt::format("init: no template for {} in {}", options.lang, from.string()));

  const fs::path dir = options.dir;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return Error::usage(fmt::format("init: {} exists and is not a directory", dir.string()));

  // Everything to write, checked before anything is written.
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(it->path().lexically_relative(from));
  }
  if (ec) return Error::failure(fmt::format("init: cannot read {}: {}", from.string(), ec.message()));
  std::sort(files.begin(), files.end());
  std::vector<std::string> existing;
  for (const auto& rel : files)
    if (fs::exists(dir / rel, ec)) existing.push_back((dir / rel).string());
  if (!existing.empty())
    return Error::usage(fmt::format("init: refusing to overwrite {} (nothing was written); pick a "
                                    "new or empty directory",
                                    util::join(existing, ", ")));

  const std::string name = project_name_for(dir);
  std::string crate = name;  // the name as a Rust path (a cargo package's library)
  std::replace(crate.begin(), crate.end(), '-', '_');
  for (const auto& rel : files) {
    const fs::path to = dir / rel;
    fs::create_directories(to.parent_path(), ec);
    if (ec) return Error::failure(fmt::format("init: cannot create {}: {}", to.parent_path().string(), ec.message()));
    auto text = util::read_regular_file(from / rel, util::kMaxWholeFile, "a template file");
    if (!text) return Error::failure("init: " + text.error().message);
    std::ofstream o(to, std::ios::binary | std::ios::trunc);
    o << replace_all(replace_all(std::move(*text), "@NAME@", name), "@CRATE@", crate);
    o.close();
    if (!o) return Error::failure(fmt::format("init: cannot write {}", to.string()));
    // Keep an executable bit; the copy is the user's to edit, even from a read-only install.
    fs::permissions(to, fs::status(from / rel).permissions() | fs::perms::owner_read | fs::perms::owner_write, ec);
  }

  out << fmt::format("offload-build: created {} project \"{}\" in {}:\n", options.lang, name,
                     dir.string());
  for (const auto& rel : files) out << "  " << rel.string() << '\n';
  out << fmt::format("Build and run it, proving the kernel ran on the offload device:\n"
                     "  offload-build -C {} {}run --verify\n",
                     util::shell_quote(dir.string()), options.lang == "cargo" ? "cargo " : "");
  return {};
}

}  // namespace ob::cli
