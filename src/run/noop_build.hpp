// Private to src/run: the manifest build's no-op fast path (make's and
// ninja's idea: a build with nothing to do only stats files). A plain build
// that succeeded with every job current leaves a record
// (cache/noop_record.hpp) in the build directory; the next plain build whose
// record still holds prints what a no-op build prints and returns, without
// planning or reading the build state.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "offload_build/cache/noop_record.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/run/request.hpp"
#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::run {

// Whether a build may take the fast path and leave a record: nothing asked
// of it but its outputs and the usual lines (no --dry-run, --explain,
// --report, --timings, --trace, --compdb, -v, --no-cache).
bool noop_eligible(const Request& o);

// Everything outside the record's files and variables that decides the
// plan: this binary, the command line, the directory, every setting's value
// (secrets excepted), the boot (`native` targets ask the GPUs present).
std::string build_fingerprint(const Request& o);

// The fast path: when the record in the manifest's build directory holds,
// print the no-op build's lines and return the program and the summary
// (Session::run prints it); nullopt to build as usual.
struct NoopBuilt {
  fs::path program;
  exec::ExecSummary summary;
};
std::optional<NoopBuilt> noop_build(const Request& o, const fs::path& manifest_file);

// The files a build's plan depends on beyond its jobs' own (which the build
// state has): the manifest, the directories its globs looked into, the
// tools and the stable-names library, the toolchain's directories.
std::vector<fs::path> plan_files(const manifest::Manifest& m, const toolchain::Toolchain& tc, const plan::Plan& plan);

// Files modified at or after this (wall clock, ns) make a record racy (not
// written): the build's start less the coarsest file timestamp (2 s, FAT).
int64_t racy_from(std::chrono::system_clock::time_point started);

}  // namespace ob::run
