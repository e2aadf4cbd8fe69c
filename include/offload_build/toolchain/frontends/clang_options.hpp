// The one table of clang driver options launcher mode knows (clang's
// Options.td and clang-linker-wrapper's option table are the model): each
// spelling, how it takes its value, and what it means for a compile's key.
// The parser (clang_cli.cpp) classifies every argument through it; an option
// it does not list is never taken as harmless: the compile runs unchanged.
// tests/integration/test_clang_options.cpp walks clang-22's own option list
// (`clang-22 --autocomplete=-`) against it. docs/LAUNCHER.md.
#pragma once

#include "offload_build/toolchain/toolchain.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ob::toolchain::clang_cli {

enum class OptionForm {
  Flag,              // the spelling alone: -fPIC
  Joined,            // the value attached: -fprofile-use=FILE, -DNAME
  Separate,          // the value is the next argument: -mllvm ARG
  JoinedOrSeparate,  // either: -I DIR, -IDIR
  Prefix,            // any spelling starting so (refusals only: -fmodules..., -print-...)
};

// What an option means for the key of a compile.
enum class OptionEffect {
  Text,         // keyed as written, passed to every pass (-O2, -DX=1, -march=, -fPIC)
  PathText,     // names a path never read, written into the output (-fdebug-compilation-dir=,
                // -fdebug-prefix-map=, -fprofile-generate=DIR): keyed as written
  Depfile,      // names a file or directory whose reads clang's depfile lists (-I, -include,
                // --sysroot=, --gcc-install-dir=): keyed by those files' content
  File,         // names a file the compile reads that no depfile lists (profiles, ignore
                // lists, plugins): keyed by its content; a missing one: run unchanged
  Unchanged,    // reads what offload-build cannot key (programs found by -B, device
                // libraries, module caches) or writes files the split would not: run unchanged
  NotCompile,   // asks for something other than an object (-E, -S, -print-*): run unchanged
  Parsed,       // the parser's own (-o, -x, -M*, -fopenmp, offload targets, -Xclang, -mllvm...)
};

struct OptionInfo {
  std::string_view spelling;
  OptionForm form;
  OptionEffect effect;
};

// The table's own entries (not the generated clang-22 flag list).
std::span<const OptionInfo> option_table();
// The -f/-m/-g flags clang-22 lists (clang22_flags.inc), keyed as written
// unless the table says otherwise.
std::span<const std::string_view> clang22_flags();
// The flags of the clang of LLVM `major` (clangNN_flags.inc, generated from
// that driver by scripts/gen_clang_flags.py: 19 and 22), the nearest
// generated list for a major without one (16-20: 19's; 21 and newer: 22's).
std::span<const std::string_view> clang_flags(int major);
// The major whose list clang_flags(major) is.
int flags_major(int major);

// The option `token` is (exact spellings first, then the longest joined
// prefix, then the flags of the clang of LLVM `major`); nullopt: an option
// the table does not know. For a Separate or JoinedOrSeparate spelling
// written alone, the value is the next argument.
std::optional<OptionInfo> find_option(std::string_view token, int major = kDefaultLlvm);

// "option", "text", "path (not read)", ...: for messages and tests.
std::string_view effect_name(OptionEffect e);

}  // namespace ob::toolchain::clang_cli
