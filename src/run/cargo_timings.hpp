// Private to src/run: the cargo flow's host pass on the --timings page and in
// --trace, named for what it is (`cargo build app`, not a link) and with the
// crates cargo compiled in it, each a bar, read from cargo's own --timings
// page (the host pass runs with --timings when pictures are wanted).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/report/timeline.hpp"

namespace ob::run::cargo_timings {

namespace fs = std::filesystem;

// One unit cargo compiled: its crate, its target ("lib", "bin app", "build
// script"), its start after cargo started and its duration (seconds).
struct Unit {
  std::string name;
  std::string target;
  double start_s = 0;
  double duration_s = 0;
};

// The units of cargo's --timings page (its UNIT_DATA table); nullopt when the
// text has none that parses.
std::optional<std::vector<Unit>> parse_page(const std::string& html);

// Where cargo writes that page for the target directory `target_dir`.
fs::path page_path(const fs::path& target_dir);

// Timeline job `host` (the host pass) renamed `name`, of kind "cargo"; each
// unit a job of kind "crate" ("rustc kern lib") placed in the host pass's
// time, depending on nothing.
void show_host_pass(report::Timeline& t, size_t host, const std::string& name, const std::vector<Unit>& units);

}  // namespace ob::run::cargo_timings
