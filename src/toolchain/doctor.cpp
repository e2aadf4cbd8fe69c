#include "offload_build/toolchain/doctor.hpp"

#include "offload_build/toolchain/doctor_facts.hpp"

namespace ob::toolchain {

int run_doctor(const std::optional<std::filesystem::path>& toolchain_hint,
               const std::optional<std::filesystem::path>& llvm, std::ostream& out) {
  const doctor::DoctorFacts facts = doctor::probe_facts(toolchain_hint, llvm);
  out << doctor::format_report(facts) << std::flush;
  return doctor::exit_code(facts);
}

}  // namespace ob::toolchain
