#include "settings.hpp"

#include <charconv>

#include "offload_build/config/config.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cli {

namespace {

using config::Origin;

void from_command_line(const GlobalOptions& o, config::Config& c) {
  auto set = [&](std::string_view key, std::string text) {
    const config::Setting* s = config::find_setting(key);
    c.set(key, std::move(text), Origin::CommandLine, std::string(s->cli));
  };
  auto set_flag = [&](std::string_view key, bool given) {
    if (given) set(key, "true");
  };
  if (o.cache_dir) set("cache_dir", fs::absolute(*o.cache_dir).string());
  if (o.base_dir) set("base_dir", fs::absolute(*o.base_dir).string());
  if (!o.remote_storage.empty()) set("remote_storage", util::join(o.remote_storage, " "));
  if (o.jobs > 0) set("jobs", std::to_string(o.jobs));
  if (o.kernel_namespace) set("kernel_namespace", *o.kernel_namespace);
  if (!o.prefix_command.empty()) set("prefix_command", o.prefix_command);
  if (!o.remote_execution.empty()) set("remote_execution", o.remote_execution);
  if (o.trace) set("trace", fs::absolute(*o.trace).string());
  if (o.color != "auto") set("color", o.color);
  set_flag("no_cache", o.no_cache);
  set_flag("explain", o.explain);
  set_flag("two_parse", o.two_parse);
  set_flag("verbose", o.verbose);
  set_flag("quiet", o.quiet);
}

void to_options(const config::Config& c, GlobalOptions& o) {
  o.no_cache = c.flag("no_cache");
  o.explain = c.flag("explain");
  o.two_parse = c.flag("two_parse");
  o.verbose = c.flag("verbose");
  o.quiet = c.flag("quiet");
  o.color = c.text("color");
  if (o.jobs == 0) {
    const std::string jobs = c.text("jobs");
    size_t n = 0;
    std::from_chars(jobs.data(), jobs.data() + jobs.size(), n);
    o.jobs = n;
  }
  if (!o.kernel_namespace && c.get("kernel_namespace")) o.kernel_namespace = c.text("kernel_namespace");
  if (o.prefix_command.empty()) o.prefix_command = c.text("prefix_command");
  if (o.remote_execution.empty()) o.remote_execution = c.text("remote_execution");
  if (!o.trace && c.get("trace")) o.trace = fs::path(c.text("trace"));
}

}  // namespace

Result<void> resolve_settings(GlobalOptions& o) {
  auto loaded = config::load();
  if (!loaded) return loaded.error();
  from_command_line(o, *loaded);
  to_options(*loaded, o);
  config::set_current(std::move(*loaded));
  return {};
}

}  // namespace ob::cli
