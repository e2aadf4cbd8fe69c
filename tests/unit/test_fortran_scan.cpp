// The Fortran scan (fortran_scan.hpp) and what the manifest planner makes of
// it: module order, .mod outputs and inputs, included files keyed.
#include <catch2/catch.hpp>

#include <algorithm>

#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/fortran_scan.hpp"
#include "offload_build/util/files.hpp"
#include "support/fake_toolchain.hpp"
#include "support/temp_dir.hpp"
#include <optional>

using namespace ob;
namespace fortran = ob::toolchain::frontend::fortran;

namespace {

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  REQUIRE(util::write_file_atomic(p, text));
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("the Fortran scan finds modules defined and used, case-insensitively, free form", "[fortran-scan]") {
  test::TempDir tmp("ob-fscan");
  put(tmp / "inc/params.inc", "integer, parameter :: k = 3\n  include \"more.inc\"\n");
  put(tmp / "inc/more.inc", "USE deep\n");
  put(tmp / "a.f90",
      "! module commented\n"
      "MODULE Alpha ! a comment\n"
      "  use beta, only: x; use :: gamma\n"
      "  use, intrinsic :: iso_c_binding\n"
      "  use iso_fortran_env\n"
      "  use omp_lib\n"
      "  use, non_intrinsic :: delta\n"
      "  use alpha_helper\n"
      "  interface\n    module function f(x)\n    end function\n  end interface\n"
      "contains\n  module procedure g\n  end procedure\n"
      "  subroutine s()\n    print *, 'use nothing; module nothing'\n    include 'params.inc'\n  end subroutine\n"
      "end module alpha\n"
      "submodule (alpha) impl\nend submodule\n"
      "submodule (alpha:impl) deeper\nend submodule\n"
      "module &\n  epsilon\nend module\n"
      "#include \"cpp.h\"\n");
  put(tmp / "cpp.h", "");
  const auto s = fortran::scan(tmp / "a.f90", {tmp / "inc"}, false);
  CHECK_FALSE(s.problem);
  CHECK(s.defines == Names{"alpha-deeper.mod", "alpha-impl.mod", "alpha.mod", "epsilon.mod"});
  CHECK(s.uses == Names{"alpha_helper.mod", "beta.mod", "deep.mod", "delta.mod", "gamma.mod"});
  CHECK(s.reads == std::vector<fs::path>{tmp / "cpp.h", tmp / "inc/more.inc", tmp / "inc/params.inc"});
}

TEST_CASE("the Fortran scan reads fixed form, #line files, and says when an INCLUDE is found nowhere", "[fortran-scan]") {
  test::TempDir tmp("ob-fscan");
  put(tmp / "orig.f", "");
  put(tmp / "b.f",
      "C a comment: module commented\n"
      "*     use commented\n"
      "      MODULE FIX\n"
      "      USE\n"
      "     &  OTHER\n"
      "      END MODULE\n"
      "#line \"orig.f\" 1\n"
      "# 3 \"" + (tmp / "orig.f").string() + "\"\n");
  const auto s = fortran::scan(tmp / "b.f", {}, fortran::fixed_form_by_extension(tmp / "b.f"));
  CHECK(s.defines == Names{"fix.mod"});
  CHECK(s.uses == Names{"other.mod"});
  CHECK(s.reads == std::vector<fs::path>{tmp / "orig.f"});

  put(tmp / "opts.f90", "program p\n  use, intrinsic :: iso_fortran_env, only: compiler_options\n  print *, "
                       "my_compiler_options\n  print *, Compiler_Options()\nend program\n");
  const auto opts = fortran::scan(tmp / "opts.f90", {}, false);
  REQUIRE(opts.problem);
  CHECK_THAT(*opts.problem, Catch::Contains("opts.f90:4: COMPILER_OPTIONS() writes the command line"));

  put(tmp / "c.f90", "program p\n  include 'omp_lib.h'\n  include 'absent.inc'\nend program\n");
  const auto c = fortran::scan(tmp / "c.f90", {}, false);
  REQUIRE(c.problem);
  CHECK_THAT(*c.problem, Catch::Contains("c.f90:3: the included file 'absent.inc' is found in none"));
}

TEST_CASE("the Fortran scan skips the #if branches the options' macros certainly leave out", "[fortran-scan]") {
  test::TempDir tmp("ob-fscan");
  put(tmp / "d.F90",
      "program p\n"
      "#if defined(USE_A)\n  use a\n#elif defined(USE_B)\n  use b\n#elif defined(USE_C)\n  use c\n#else\n  use d\n#endif\n"
      "#ifdef _OPENMP\n  use e\n#endif\n"          // predefined: not known, read
      "#ifndef USE_A\n  use f\n#else\n  use g\n#endif\n"
      "#if 0\n  use h\n#endif\n"
      "#if !defined(USE_Z)\n  use i\n#endif\n"
      "#if defined(USE_A) && defined(USE_B)\n  use j\n#endif\n"  // an expression: read
      "#ifdef USE_Z\n  use k\n#endif\n"
      "#undef USE_A\n#ifdef USE_A\n  use l\n#endif\n"  // #undef: no longer known
      "end program\n");
  const auto s = fortran::scan(tmp / "d.F90", {}, false, {{"USE_B"}, {"USE_Z"}});
  // USE_A: no option defines it, flang predefines no such name.
  CHECK(s.uses == Names{"b.mod", "e.mod", "f.mod", "i.mod", "j.mod", "l.mod"});
  // Without the options' macros: the #else branches and what is not known.
  CHECK(fortran::scan(tmp / "d.F90", {}, false).uses == Names{"d.mod", "e.mod", "f.mod", "i.mod", "j.mod", "l.mod"});
}

TEST_CASE("a manifest's Fortran sources are planned definers first, .mod files declared and keyed", "[fortran-scan][plan]") {
  test::TempDir tmp("ob-fplan");
  const fs::path proj = tmp / "proj";
  put(proj / "main.f90", "program p\n  use m\n  include 'params.inc'\nend program\n");
  put(proj / "params.inc", "integer, parameter :: k = 3\n");
  put(proj / "zmod.f90", "module m\n  use ext\nend module\n");
  put(proj / "ext.mod", "");  // a module no source defines, in the project directory
  manifest::Manifest m;
  m.file = proj / "offload.json";
  m.project_dir = proj;
  m.name = "f";
  m.output = "f";
  m.build_dir = proj / "build";
  m.sources = {{proj / "main.f90", manifest::Language::Fortran}, {proj / "zmod.f90", manifest::Language::Fortran}};
  m.targets = {{"x86_64-unknown-linux-gnu", "generic"}};
  const plan::Plan plan = plan::make_plan(m, test::fake_toolchain_at("/nonexistent/llvm"));
  const fs::path mod = proj / "build/mod/m.mod";
  std::optional<plan::JobId> writer;
  for (const auto& j : plan.jobs) {
    for (plan::JobId d : j.deps) CHECK(d < j.id);
    if (j.kind == plan::JobKind::Link) continue;
    CHECK(j.cacheable);
    const auto has = [&](const std::vector<fs::path>& v, const fs::path& p) {
      return std::find(v.begin(), v.end(), p) != v.end();
    };
    if (j.kind != plan::JobKind::Package) {
      auto at = std::find(j.argv.begin(), j.argv.end(), "-module-dir");
      REQUIRE(at != j.argv.end());
      CHECK(*(at + 1) == "build/mod");
    }
    if (has(j.outputs, mod)) {
      CHECK(j.source == proj / "zmod.f90");
      CHECK(j.written_in_place == std::vector<fs::path>{mod});
      CHECK(has(j.unordered_reads, proj / "ext.mod"));  // keyed by content or absence when served
      writer = j.id;
    }
    if (j.source == proj / "main.f90" && j.kind != plan::JobKind::Package) {
      REQUIRE(writer);  // planned after the module's writer
      CHECK(has(j.inputs, mod));
      CHECK(has(j.inputs, proj / "params.inc"));
      CHECK(std::find(j.deps.begin(), j.deps.end(), *writer) != j.deps.end());
    }
  }
  CHECK(writer);
  // The link keeps the manifest's order.
  const auto& link = plan.jobs.back();
  CHECK(link.inputs == std::vector<fs::path>{proj / "build/obj/main.f90.host.o", proj / "build/obj/zmod.f90.host.o"});
}
