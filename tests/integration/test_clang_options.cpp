// The launcher's option table (clang_options.hpp) walked against clang-22's
// own option list (`clang-22 --autocomplete=-`: every driver spelling and
// its help): every option that takes a value is classified, and one whose
// value may be a path is keyed by content, known never to be read, searched
// through the depfile, or refused (the compile runs unchanged); every flag
// accepted is one clang-22 knows and takes no value; the table names no
// spelling clang-22 does not know.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>

#include "integration/launcher_support.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/toolchain/frontends/clang_options.hpp"
#include "support/skip.hpp"

using namespace ob;
using namespace ob::test;
using toolchain::clang_cli::OptionEffect;
using toolchain::clang_cli::OptionForm;

namespace {

// clang-22's spellings, each with its help text ("" for none).
std::map<std::string, std::string> clang_options() {
  auto r = run_tool({kClang, "--autocomplete=-"}, fs::temp_directory_path(), {});
  REQUIRE(r.exit_code == 0);
  std::map<std::string, std::string> out;
  for (const auto& line : util::split(r.out, '\n')) {
    if (line.empty()) continue;
    const auto tab = line.find('\t');
    out[line.substr(0, tab)] = tab == std::string::npos ? "" : line.substr(tab + 1);
  }
  REQUIRE(out.size() > 3000);
  return out;
}

// Of `names`, those that take the next argument as their value: clang-22
// asked once, each followed by a word it reports as a missing input unless
// the option took it.
std::set<std::string> take_next_argument(const std::vector<std::string>& names) {
  Argv argv{kClang, "-###", "-c", "-x", "c", "/dev/null"};
  for (size_t i = 0; i < names.size(); ++i) argv.insert(argv.end(), {names[i], "obv" + std::to_string(i)});
  auto r = run_tool(argv, fs::temp_directory_path(), {});
  std::set<std::string> taking;
  for (size_t i = 0; i < names.size(); ++i)
    if (r.err.find("no such file or directory: 'obv" + std::to_string(i) + "'") == std::string::npos)
      taking.insert(names[i]);
  return taking;
}

// Words in a name or help text that say its value may be a path.
const std::regex kPathLike("file|director|dir=|path|plugin|sysroot|install-dir|toolchain|bitcode|config",
                           std::regex::icase);

// Options keyed as written whose name or help speaks of files, libraries or
// paths but whose value names nothing read (reviewed): regular expressions,
// library kinds, linker search paths (unused in a compile), counts.
const std::set<std::string_view> kNamesNoFile = {
    "-fprofile-exclude-files=", "-fprofile-filter-files=", "-fprofile-function-groups=",
    "-fprofile-selected-function-group=", "-fprofile-update=", "-fembed-bitcode=", "-fveclib=",
    "-stdlib=", "--stdlib=", "-rtlib=", "--rtlib=", "-unwindlib=", "--unwindlib=", "-fms-runtime-lib=",
    "-L", "-l", "-rpath", "-Xlinker", "-fsanitize-undefined-strip-path-components=",
    "--system-header-prefix=", "--no-system-header-prefix=", "-fuse-ld=", "-fbinutils-version=",
    "-fdiagnostics-hotness-threshold=", "-fdiagnostics-misexpect-tolerance=", "-finput-charset=",
    "-funique-source-file-identifier=", "-fuse-cuid="};

}  // namespace

TEST_CASE("clang-22's options: every one that takes a path is keyed or refused",
          "[launcher][clang_cli][flagkeys][integration]") {
  if (!fs::exists(kClang)) OB_SKIP("clang-22 is not installed");
  const auto options = clang_options();

  // The table names no spelling clang-22 does not know (but for refusals by
  // prefix): listed, or accepted by the driver (the list leaves out some,
  // -nogpulib, --sysroot=, -static-libgcc).
  Argv unlisted{kClang, "-###", "-c", "-x", "c", "/dev/null"};
  std::vector<std::string> asked;
  for (const auto& o : toolchain::clang_cli::option_table()) {
    if (o.form == OptionForm::Prefix || options.count(std::string(o.spelling))) continue;
    asked.emplace_back(o.spelling);
    if (o.form == OptionForm::Flag) unlisted.emplace_back(o.spelling);
    else if (o.form == OptionForm::Joined) unlisted.push_back(std::string(o.spelling) + "x");
    else unlisted.insert(unlisted.end(), {std::string(o.spelling), "x"});
  }
  const auto accepted = run_tool(unlisted, fs::temp_directory_path(), {});
  for (const auto& a : asked) {
    INFO(a);
    CHECK(accepted.err.find("unknown argument: '" + a) == std::string::npos);
    CHECK(accepted.err.find("unknown argument '" + a) == std::string::npos);
  }
  // The generated flags are clang-22's, and none takes the next argument.
  std::vector<std::string> flags;
  for (auto f : toolchain::clang_cli::clang22_flags()) {
    INFO(f);
    CHECK(options.count(std::string(f)) == 1);
    flags.emplace_back(f);
  }
  for (const auto& o : toolchain::clang_cli::option_table())
    if (o.form == OptionForm::Flag && o.effect == OptionEffect::Text) flags.emplace_back(o.spelling);
  CHECK(take_next_argument(flags).empty());

  // Every option that takes a value: joined ones (spelled with '=' or
  // written before their value) and those taking the next argument.
  // (Not those that stop the driver before it looks at its inputs, nor
  // those that change the target or the language; the table refuses them.)
  const std::regex stops(
      "^--?(print|dump|help|version|working-directory|cc1|autocomplete|ccc-|config|driver-mode|target-help|"
      "rsp-quoting|no-default-config)|^-(###|Xarch|x$|arch$|target$|-target)");
  std::vector<std::string> others;
  for (const auto& [name, help] : options)
    if (name.back() != '=' && !std::regex_search(name, stops)) others.push_back(name);
  const auto separate = take_next_argument(others);
  size_t valued = 0, keyed = 0, refused = 0, unknown = 0;
  for (const auto& [name, help] : options) {
    const bool joined = name.back() == '=';
    if (!joined && !separate.count(name)) continue;  // a flag: it names no file
    ++valued;
    INFO(name << "  (" << help << ")");
    const std::string path = "/tmp/ob-path-probe/p.file";
    Argv argv{kClang, "-fopenmp", kHostTargets, "-O2"};
    if (joined) argv.push_back(name + path);
    else argv.insert(argv.end(), {name, path});
    argv.insert(argv.end(), {"-c", "k.c", "-o", "k.o"});
    const auto parsed = toolchain::clang_cli::parse(argv);
    const auto o = toolchain::clang_cli::find_option(joined ? name + path : name);
    if (!o) {
      ++unknown;  // never taken as harmless: the compile runs unchanged
      CHECK_FALSE(parsed.compile);
      continue;
    }
    if (!parsed.compile) {
      ++refused;
      continue;
    }
    // Split: the path is the content of the key, or a path the table says
    // is never read or is searched through the depfile.
    const auto& files = parsed.compile->keyed_files;
    const auto& maybe = parsed.compile->maybe_files;
    if (std::find(files.begin(), files.end(), path) != files.end() ||
        std::find(maybe.begin(), maybe.end(), path) != maybe.end()) {
      ++keyed;
      continue;
    }
    const bool path_like = std::regex_search(name, kPathLike) || std::regex_search(help, kPathLike);
    if (path_like && !kNamesNoFile.count(o->spelling))
      CHECK((o->effect == OptionEffect::PathText || o->effect == OptionEffect::Depfile ||
             o->effect == OptionEffect::Parsed));
    CHECK(o->effect != OptionEffect::File);  // a File option always lists its path
  }
  INFO(valued << " options take a value: " << keyed << " keyed by content, " << refused << " refused, "
              << unknown << " unknown (refused)");
  CHECK(valued > 400);
  CHECK(keyed >= 20);

  // The options the issue names, each keyed or refused.
  for (const std::string opt :
       {"-fprofile-sample-use=", "-fprofile-instr-use=", "-fprofile-use=", "-fpass-plugin=", "-fprofile-list=",
        "-fxray-attr-list=", "-fmemory-profile-use=", "-fsanitize-ignorelist=", "-fplugin=", "-B",
        "--gcc-install-dir=", "-fcoverage-compilation-dir="}) {
    INFO(opt);
    const auto o = toolchain::clang_cli::find_option(opt);
    REQUIRE(o);
    CHECK((o->effect == OptionEffect::File || o->effect == OptionEffect::Unchanged ||
           o->effect == OptionEffect::Depfile || o->effect == OptionEffect::PathText));
  }
}
