// The remote execution engines, by the scheme their URLs start with. Each
// engine's file describes its schemes; this list is the one place that names them.
#include "offload_build/exec/remote/engine_registry.hpp"

namespace ob::exec {

// Defined by each engine's file.
std::vector<EngineScheme> reapi_schemes();  // reapi_engine.cpp

const EngineRegistry& EngineRegistry::builtin() {
  static const EngineRegistry registry = [] {
    EngineRegistry r;
    r.add(reapi_schemes());
    return r;
  }();
  return registry;
}

}  // namespace ob::exec
