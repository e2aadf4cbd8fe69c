// Toolchain discovery against fake LLVM trees in a temporary directory, plus
// one check of the real /usr/lib/llvm-22 on this machine.
#include <stdlib.h>
#include <elf.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <set>

#include <catch2/catch.hpp>

#include "offload_build/toolchain/runtime_libs.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "support/skip.hpp"

using namespace ob;

namespace {

// A temporary directory removed at the end of the test.
struct FakeTree {
  fs::path dir;
  FakeTree() {
    std::string tmpl = (fs::temp_directory_path() / "ob-toolchain-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
  }
  ~FakeTree() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  fs::path file(const fs::path& rel, bool executable = false) {
    fs::path p = dir / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "#!/bin/sh\n";
    if (executable) {
      fs::permissions(p, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    }
    return p;
  }
  // An LLVM root with the required tools, minus `skip`.
  fs::path llvm(const std::string& rel, std::vector<std::string> skip = {}) {
    for (const char* tool : {"clang", "clang++", "llvm-offload-binary", "clang-linker-wrapper",
                             "llvm-objdump"}) {
      if (std::find(skip.begin(), skip.end(), tool) == skip.end()) file(rel + "/bin/" + tool, true);
    }
    return dir / rel;
  }
};

toolchain::ToolchainSearch fake_search(const FakeTree& t) {
  toolchain::ToolchainSearch s;
  s.system_prefix = t.dir / "usr-lib";
  s.path_env = "";
  return s;
}

}  // namespace

TEST_CASE("toolchain_at fills every path of a complete tree", "[toolchain]") {
  FakeTree t;
  fs::path root = t.llvm("llvm-22");
  auto tc = toolchain::toolchain_at(root);
  REQUIRE(tc.ok());
  CHECK(tc->root == root);
  CHECK(tc->clang == root / "bin/clang");
  CHECK(tc->clangxx == root / "bin/clang++");
  CHECK(tc->offload_binary == root / "bin/llvm-offload-binary");
  CHECK(tc->linker_wrapper == root / "bin/clang-linker-wrapper");
  CHECK(tc->objdump == root / "bin/llvm-objdump");
  CHECK(tc->lib_dir == root / "lib");
}

TEST_CASE("toolchain_at accepts the bin directory or clang itself", "[toolchain]") {
  FakeTree t;
  fs::path root = t.llvm("llvm-22");
  CHECK(toolchain::toolchain_at(root / "bin")->root == root);
  CHECK(toolchain::toolchain_at(root / "bin" / "clang")->root == root);
}

TEST_CASE("toolchain_at names the missing tool and the package", "[toolchain]") {
  FakeTree t;
  fs::path root = t.llvm("llvm-22", {"clang-linker-wrapper"});
  auto tc = toolchain::toolchain_at(root);
  REQUIRE_FALSE(tc.ok());
  CHECK(tc.error().code == exit_code::usage);
  CHECK(tc.error().message ==
        "LLVM toolchain at " + root.string() + " is incomplete: clang-linker-wrapper not found in " +
            (root / "bin").string() +
            "; install clang-tools-22 (scripts/setup.sh does) or set $OFFLOAD_BUILD_LLVM (a manifest build also "
            "reads \"toolchain\" in offload.json; cargo mode reads no offload.json)");
}

TEST_CASE("toolchain_at lists several missing tools once per package", "[toolchain]") {
  FakeTree t;
  fs::path root = t.llvm("llvm-23", {"clang", "clang++", "llvm-offload-binary"});
  auto tc = toolchain::toolchain_at(root);
  REQUIRE_FALSE(tc.ok());
  CHECK_THAT(tc.error().message,
             Catch::Contains("clang, clang++, llvm-offload-binary not found in") &&
                 Catch::Contains("install clang-23 llvm-23 (scripts/setup.sh does)"));
}

TEST_CASE("toolchain_at on an LLVM older than 16 points at LLVM 22 and 19", "[toolchain]") {
  FakeTree t;
  fs::path root = t.llvm("llvm-14", {"llvm-offload-binary"});
  auto tc = toolchain::toolchain_at(root);
  REQUIRE_FALSE(tc.ok());
  CHECK(tc.error().message ==
        "LLVM toolchain at " + root.string() +
            " is LLVM 14, older than LLVM 16, the oldest whose offload driver offload-build models; install "
            "clang-22 clang-tools-22 lld-22 llvm-22 libomp-22-dev liboffload-22 (scripts/setup.sh does; "
            "scripts/setup.sh --llvm 19 unpacks LLVM 19, which has a GPU device runtime, into a private prefix) "
            "or set $OFFLOAD_BUILD_LLVM (a manifest build also reads \"toolchain\" in offload.json)");
  // The major is the resource directory's, whatever the root is called.
  fs::path renamed = t.llvm("opt/clang-15");
  t.file("opt/clang-15/lib/clang/15/include/omp.h");
  CHECK_THAT(toolchain::toolchain_at(renamed).error().message, Catch::Contains("is LLVM 15, older than LLVM 16"));
}

TEST_CASE("toolchain_at: LLVM 16-19 package with clang-offload-packager", "[toolchain]") {
  FakeTree t;
  fs::path root = t.llvm("llvm-19", {"llvm-offload-binary"});
  t.file("llvm-19/lib/clang/19/include/omp.h");
  auto missing = toolchain::toolchain_at(root);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message,
             Catch::Contains("llvm-offload-binary (or clang-offload-packager) not found") &&
                 Catch::Contains("install clang-tools-19"));
  t.file("llvm-19/bin/clang-offload-packager", true);
  auto tc = toolchain::toolchain_at(root);
  REQUIRE(tc.ok());
  CHECK(tc->major == 19);
  CHECK(tc->offload_binary == root / "bin/clang-offload-packager");
  // Its driver names the host device's image arch "", LLVM 22's "generic".
  const manifest::Target host{std::string(manifest::kHostTriple), "generic"};
  const manifest::Target nv{std::string(manifest::kNvptxTriple), "sm_90"};
  CHECK(tc->image_arch(host).empty());
  CHECK(tc->image_arch(nv) == "sm_90");
  t.file("llvm-22/lib/clang/22/include/omp.h");
  auto tc22 = toolchain::toolchain_at(t.llvm("llvm-22"));
  CHECK(tc22->image_arch(host) == "generic");
  // Both names there: the new one (22's old name warns).
  t.file("llvm-22/bin/clang-offload-packager", true);
  CHECK(toolchain::toolchain_at(t.dir / "llvm-22")->offload_binary == t.dir / "llvm-22/bin/llvm-offload-binary");
}

TEST_CASE("a per-arch device runtime serves its own arch, from a private prefix by its directory", "[toolchain]") {
  FakeTree t;
  fs::path root = t.llvm("prefix/usr/lib/llvm-19");
  t.file("prefix/usr/lib/llvm-19/lib/clang/19/include/omp.h");
  t.file("prefix/usr/lib/llvm-19/lib/libomptarget-nvptx-sm_80.bc");
  t.file("prefix/usr/lib/llvm-19/lib/libomptarget-nvptx-sm_90.bc");
  t.file("prefix/usr/lib/llvm-19/lib/libomptarget-amdgpu-gfx90a.bc");
  auto tc = toolchain::toolchain_at(root);
  REQUIRE(tc.ok());
  const manifest::Target sm90{std::string(manifest::kNvptxTriple), "sm_90"};
  const manifest::Target sm100{std::string(manifest::kNvptxTriple), "sm_100"};
  const manifest::Target gfx90a{std::string(manifest::kAmdgcnTriple), "gfx90a"};
  const manifest::Target gfx942{std::string(manifest::kAmdgcnTriple), "gfx942"};
  REQUIRE(tc->device_runtime(sm90));
  CHECK(tc->device_runtime(sm90)->file == root / "lib/libomptarget-nvptx-sm_90.bc");
  CHECK(tc->device_runtime(sm90)->bitcode_elsewhere);  // not /usr/lib/llvm-19/lib
  CHECK_FALSE(tc->device_runtime(sm90)->without_rocm_libs);
  CHECK_FALSE(tc->has_device_runtime(sm100));
  CHECK_FALSE(tc->has_device_runtime(gfx942));
  REQUIRE(tc->device_runtime(gfx90a));
  if (!fs::exists("/opt/rocm/amdgcn/bitcode/ocml.bc")) CHECK(tc->device_runtime(gfx90a)->without_rocm_libs);
  CHECK(toolchain::runtime_archs(root, manifest::kNvptxTriple) == std::vector<std::string>{"sm_80", "sm_90"});
  CHECK(toolchain::runtime_archs(root, manifest::kHostTriple).empty());
}

TEST_CASE("program_llvm_major: the installation's resource directory, else the name's suffix", "[toolchain]") {
  FakeTree t;
  t.llvm("llvm-19");
  t.file("llvm-19/lib/clang/19/include/omp.h");
  fs::create_directories(t.dir / "bin");
  fs::create_symlink(t.dir / "llvm-19/bin/clang", t.dir / "bin/cc-for-project");
  CHECK(toolchain::program_llvm_major((t.dir / "bin/cc-for-project").string()) == 19);
  CHECK(toolchain::program_llvm_major("/nonexistent/clang-18") == 18);
  CHECK(toolchain::program_llvm_major("/nonexistent/clang++-17.1") == 17);
  CHECK(toolchain::program_llvm_major("/nonexistent/clang") == toolchain::kDefaultLlvm);
}

TEST_CASE("toolchain_at rejects a non-executable tool and a missing directory", "[toolchain]") {
  FakeTree t;
  fs::path root = t.llvm("llvm-22", {"llvm-offload-binary"});
  t.file("llvm-22/bin/llvm-offload-binary", /*executable=*/false);
  auto tc = toolchain::toolchain_at(root);
  REQUIRE_FALSE(tc.ok());
  CHECK_THAT(tc.error().message, Catch::Contains("llvm-offload-binary not found"));

  auto none = toolchain::toolchain_at(t.dir / "nope");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code == exit_code::usage);
  CHECK_THAT(none.error().message, Catch::Contains("does not exist"));
}

TEST_CASE("find_toolchain_in: hint, then env, then newest /usr/lib/llvm-N", "[toolchain]") {
  FakeTree t;
  fs::path hinted = t.llvm("custom");
  fs::path env = t.llvm("from-env");
  t.llvm("usr-lib/llvm-22");
  t.llvm("usr-lib/llvm-24");
  auto s = fake_search(t);

  CHECK(toolchain::find_toolchain_in(s)->root == t.dir / "usr-lib/llvm-24");
  s.env_root = env;
  CHECK(toolchain::find_toolchain_in(s)->root == env);
  s.env_root = t.dir / "no-such-llvm";
  auto bad_env = toolchain::find_toolchain_in(s);
  REQUIRE_FALSE(bad_env.ok());
  CHECK_THAT(bad_env.error().message, Catch::StartsWith("$OFFLOAD_BUILD_LLVM: LLVM toolchain directory"));
  s.env_root = env;
  s.hint = hinted;
  CHECK(toolchain::find_toolchain_in(s)->root == hinted);
}

TEST_CASE("find_toolchain_in: an explicit hint never falls back", "[toolchain]") {
  FakeTree t;
  t.llvm("usr-lib/llvm-22");
  fs::path broken = t.llvm("custom", {"clang++"});
  auto s = fake_search(t);
  s.hint = broken;
  auto tc = toolchain::find_toolchain_in(s);
  REQUIRE_FALSE(tc.ok());
  CHECK_THAT(tc.error().message, Catch::Contains("clang++ not found"));
}

TEST_CASE("find_toolchain_in skips an incomplete newer llvm-N", "[toolchain]") {
  FakeTree t;
  t.llvm("usr-lib/llvm-25", {"clang-linker-wrapper"});
  t.llvm("usr-lib/llvm-22");
  t.llvm("usr-lib/llvm-15");  // older than 16: never chosen
  auto s = fake_search(t);
  CHECK(toolchain::find_toolchain_in(s)->root == t.dir / "usr-lib/llvm-22");
  fs::remove_all(t.dir / "usr-lib/llvm-22");
  // Only the incomplete one is left: its error says what to install.
  auto tc = toolchain::find_toolchain_in(s);
  REQUIRE_FALSE(tc.ok());
  CHECK_THAT(tc.error().message, Catch::Contains("llvm-25 is incomplete") &&
                                     Catch::Contains("install clang-tools-25"));
}

TEST_CASE("find_toolchain_in falls back to clang on PATH through symlinks", "[toolchain]") {
  FakeTree t;
  fs::path root = t.llvm("opt/llvm");
  fs::create_directories(t.dir / "path-bin");
  fs::create_symlink(root / "bin/clang", t.dir / "path-bin/clang");
  auto s = fake_search(t);
  s.path_env = "/nonexistent:" + (t.dir / "path-bin").string();
  auto tc = toolchain::find_toolchain_in(s);
  REQUIRE(tc.ok());
  CHECK(tc->root == fs::canonical(root));
  CHECK(toolchain::toolchain_root_candidate(s) == fs::canonical(root));
}

TEST_CASE("find_toolchain_in: nothing found says where it looked and what to install",
          "[toolchain]") {
  FakeTree t;
  fs::path old = t.llvm("llvm-14", {"llvm-offload-binary", "clang-linker-wrapper"});
  auto s = fake_search(t);
  auto tc = toolchain::find_toolchain_in(s);
  REQUIRE_FALSE(tc.ok());
  CHECK(tc.error().code == exit_code::usage);
  CHECK(tc.error().message ==
        "no LLVM 16+ toolchain found (looked in " + (t.dir / "usr-lib").string() +
            "/llvm-{30..16}, clang on PATH: not found); run scripts/setup.sh or install clang-22 "
            "clang-tools-22 lld-22 llvm-22 libomp-22-dev liboffload-22, or set $OFFLOAD_BUILD_LLVM (a manifest "
            "build also reads \"toolchain\" in offload.json; cargo mode reads no offload.json)");
  CHECK_FALSE(toolchain::toolchain_root_candidate(s).has_value());

  s.path_env = (old / "bin").string();
  auto tc2 = toolchain::find_toolchain_in(s);
  REQUIRE_FALSE(tc2.ok());
  CHECK_THAT(tc2.error().message,
             Catch::Contains("clang on PATH: " + old.string() + " is not a complete LLVM 16+"));
}

TEST_CASE("find_in_path and find_cuda", "[toolchain]") {
  FakeTree t;
  t.file("a/ptxas", false);  // not executable: skipped
  t.file("cuda-x/bin/ptxas", true);
  std::string path = (t.dir / "a").string() + "::" + (t.dir / "cuda-x/bin").string();
  CHECK(toolchain::find_in_path("ptxas", path) == t.dir / "cuda-x/bin/ptxas");
  CHECK_FALSE(toolchain::find_in_path("nvlink", path).has_value());

  // /usr/local/cuda-like default wins when it has bin/ptxas.
  t.file("default-cuda/bin/ptxas", true);
  CHECK(toolchain::find_cuda(t.dir / "default-cuda", path) == t.dir / "default-cuda");
  CHECK(toolchain::find_cuda(t.dir / "missing-cuda", path) == t.dir / "cuda-x");
  CHECK_FALSE(toolchain::find_cuda(t.dir / "missing-cuda", (t.dir / "a").string()).has_value());
}

TEST_CASE("find_libomptarget prefers the versioned file", "[toolchain]") {
  FakeTree t;
  CHECK_FALSE(toolchain::find_libomptarget(t.dir / "lib").has_value());
  t.file("lib/libomptarget.so");
  CHECK(toolchain::find_libomptarget(t.dir / "lib") == t.dir / "lib/libomptarget.so");
  t.file("lib/libomptarget.so.22.1");
  CHECK(toolchain::find_libomptarget(t.dir / "lib") == t.dir / "lib/libomptarget.so.22.1");
}

TEST_CASE("device runtimes are found in every known place", "[toolchain]") {
  FakeTree t;
  fs::path root = t.llvm("llvm");
  auto tc = toolchain::toolchain_at(root);
  REQUIRE(tc.ok());
  const manifest::Target host{std::string(manifest::kHostTriple), "generic"};
  const manifest::Target nv{std::string(manifest::kNvptxTriple), "sm_90"};
  const manifest::Target amd{std::string(manifest::kAmdgcnTriple), "gfx90a"};

  CHECK(tc->has_device_runtime(host));
  CHECK_FALSE(tc->device_runtime(host).has_value());
  CHECK_FALSE(tc->has_device_runtime(nv));
  CHECK_FALSE(tc->has_device_runtime(amd));

  // A Toolchain remembers what it found: the installation as it is now.
  auto now = [&] { return *toolchain::toolchain_at(root); };
  SECTION("remembered by a Toolchain and its copies") {
    t.file("llvm/lib/clang/22/lib/nvptx64-nvidia-cuda/libompdevice.a");
    const toolchain::Toolchain copy = *tc;
    CHECK_FALSE(copy.has_device_runtime(nv));
    CHECK(now().has_device_runtime(nv));
  }
  SECTION("lib/clang/N/lib/<triple>/libompdevice.a") {
    t.file("llvm/lib/clang/22/lib/nvptx64-nvidia-cuda/libompdevice.a");
    CHECK(now().device_runtime(nv)->file == root / "lib/clang/22/lib/nvptx64-nvidia-cuda/libompdevice.a");
    CHECK_FALSE(now().has_device_runtime(amd));
  }
  SECTION("lib/<triple>/libompdevice.a") {
    t.file("llvm/lib/amdgcn-amd-amdhsa/libompdevice.a");
    CHECK(now().device_runtime(amd)->file == root / "lib/amdgcn-amd-amdhsa/libompdevice.a");
    CHECK_FALSE(now().has_device_runtime(nv));
  }
  SECTION("lib/libomptarget-*.bc") {
    t.file("llvm/lib/libomptarget-nvptx-sm_90.bc");
    t.file("llvm/lib/libomptarget-amdgpu-gfx90a.bc");
    CHECK(now().device_runtime(nv)->file == root / "lib/libomptarget-nvptx-sm_90.bc");
    CHECK(now().device_runtime(amd)->file == root / "lib/libomptarget-amdgpu-gfx90a.bc");
  }
  SECTION("lib/<triple>/libomptarget-nvptx.bc") {
    t.file("llvm/lib/nvptx64-nvidia-cuda/libomptarget-nvptx.bc");
    CHECK(now().device_runtime(nv)->file == root / "lib/nvptx64-nvidia-cuda/libomptarget-nvptx.bc");
  }
  SECTION("unrelated files do not count") {
    t.file("llvm/lib/libomptarget.so.22.1");
    t.file("llvm/lib/clang/22/include/nvptxintrin.h");
    t.file("llvm/lib/nvptx64-nvidia-cuda/libother.a");
    CHECK_FALSE(now().has_device_runtime(nv));
  }
}

TEST_CASE("the real LLVM 22 on this machine", "[toolchain]") {
  if (!fs::exists("/usr/lib/llvm-22/bin/clang")) OB_SKIP("no LLVM 22 at /usr/lib/llvm-22");
  auto tc = toolchain::toolchain_at("/usr/lib/llvm-22");
  REQUIRE(tc.ok());
  CHECK(tc->linker_wrapper == "/usr/lib/llvm-22/bin/clang-linker-wrapper");
  CHECK(toolchain::find_libomptarget(tc->lib_dir).has_value());
  // Debian's LLVM 22 ships no OpenMP GPU device runtime.
  CHECK_FALSE(tc->has_device_runtime(manifest::Target{std::string(manifest::kNvptxTriple), "sm_90"}));
  CHECK_FALSE(tc->has_device_runtime(manifest::Target{std::string(manifest::kAmdgcnTriple), "gfx90a"}));
  if (fs::exists("/usr/local/cuda/bin/ptxas")) CHECK(tc->cuda_path == fs::path("/usr/local/cuda"));
}

// The no-op record stamps searched_dirs: every place a search finds
// something must be one of them, or a runtime installed there later would
// leave a no-op build standing.
TEST_CASE("searched_dirs holds the directory of everything the searches find", "[toolchain][noop]") {
  FakeTree t;
  const fs::path root = t.llvm("llvm");
  const manifest::Target nv{std::string(manifest::kNvptxTriple), "sm_90"};
  const manifest::Target amd{std::string(manifest::kAmdgcnTriple), "gfx90a"};
  t.file("llvm/lib/clang/22/lib/nvptx64-nvidia-cuda/libompdevice.a");
  t.file("llvm/lib/amdgcn-amd-amdhsa/libompdevice.a");
  t.file("llvm/lib/libomptarget.so.22.1");
  auto tc = toolchain::toolchain_at(root);
  REQUIRE(tc.ok());
  const auto dirs = toolchain::searched_dirs(*tc, {nv, amd}, "/opt/bin:relative");
  auto searched = [&](const fs::path& d) { return std::find(dirs.begin(), dirs.end(), d) != dirs.end(); };
  for (const auto& found : {tc->device_runtime(nv)->file, tc->device_runtime(amd)->file, *toolchain::find_libomptarget(tc->lib_dir), tc->clang}) {
    INFO(found);
    CHECK(searched(found.parent_path()));
  }
  CHECK(searched(root.parent_path()));  // another LLVM beside it
  CHECK(searched(toolchain::ToolchainSearch{}.system_prefix));
  CHECK(searched(fs::path(toolchain::kDefaultCudaRoot) / "bin"));
  CHECK(searched("/opt/bin"));
  CHECK_FALSE(searched("relative"));
  // Where nothing is found yet, but a runtime could appear.
  CHECK(searched(root / "lib/nvptx64-nvidia-cuda"));
  CHECK(searched(root / "lib/clang/22/lib/amdgcn-amd-amdhsa"));
}

TEST_CASE("needed_libraries reads an ELF's DT_NEEDED and nothing from anything else", "[toolchain]") {
  const auto ls = toolchain::needed_libraries("/bin/ls");
  CHECK(std::find(ls.begin(), ls.end(), "libc.so.6") != ls.end());
  FakeTree t;
  CHECK(toolchain::needed_libraries(t.file("script.sh")).empty());
  CHECK(toolchain::needed_libraries(t.dir / "missing").empty());
  // A truncated ELF header: nothing, no crash.
  const fs::path cut = t.dir / "cut";
  {
    std::ifstream in("/bin/ls", std::ios::binary);
    std::string head(40, '\0');
    in.read(head.data(), 40);
    std::ofstream(cut, std::ios::binary) << head;
  }
  CHECK(toolchain::needed_libraries(cut).empty());
  // No LLVM holds a runtime /bin/ls needs.
  CHECK_FALSE(toolchain::runtime_library_dir("/bin/ls", {"/usr/lib/llvm-22"}).has_value());
}

namespace {

// A minimal ELF64 with a section header table: a null section, .shstrtab, and
// a section `name` holding `content`.
void write_bytes(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

std::string elf_with_section(const std::string& name, const std::string& content) {
  const std::string names = std::string("\0.shstrtab\0", 11) + name + '\0';
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = EM_X86_64;
  eh.e_ehsize = sizeof eh;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 3;
  eh.e_shstrndx = 1;
  const size_t names_at = sizeof eh, content_at = names_at + names.size();
  eh.e_shoff = content_at + content.size();
  Elf64_Shdr sh[3] = {};
  sh[1].sh_name = 1;
  sh[1].sh_type = SHT_STRTAB;
  sh[1].sh_offset = names_at;
  sh[1].sh_size = names.size();
  sh[2].sh_name = 11;
  sh[2].sh_type = SHT_PROGBITS;
  sh[2].sh_offset = content_at;
  sh[2].sh_size = content.size();
  std::string out(reinterpret_cast<const char*>(&eh), sizeof eh);
  out += names + content;
  out.append(reinterpret_cast<const char*>(sh), sizeof sh);
  return out;
}

}  // namespace

TEST_CASE("offload_entry_names reads the kernel symbols a program's offload entries name", "[toolchain]") {
  FakeTree t;
  const fs::path prog = t.dir / "prog";
  write_bytes(prog, elf_with_section(".llvm.rodata.offloading", std::string("scale_v2\0twice\0twice\0", 21)));
  CHECK(toolchain::offload_entry_names(prog) == std::set<std::string>{"scale_v2", "twice"});
  // Another section of a name that begins alike: not it.
  write_bytes(prog, elf_with_section(".llvm.rodata.offloading.x", std::string("a\0", 2)));
  CHECK_FALSE(toolchain::offload_entry_names(prog).has_value());
  // No section table, not an ELF, missing, cut short: nothing, no crash.
  CHECK_FALSE(toolchain::offload_entry_names(t.file("script.sh")).has_value());
  CHECK_FALSE(toolchain::offload_entry_names(t.dir / "missing").has_value());
  std::string cut = elf_with_section(".llvm.rodata.offloading", "k\0");
  write_bytes(prog, cut.substr(0, cut.size() - 10));
  CHECK_FALSE(toolchain::offload_entry_names(prog).has_value());
}
