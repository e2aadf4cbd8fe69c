// The remote backends, by the scheme their URLs start with. Each backend's
// file describes its schemes; this list is the one place that names them.
#include "offload_build/storage/remote/backend_registry.hpp"

namespace ob::storage {

// Defined by each backend's file, next to its class.
std::vector<RemoteScheme> redis_schemes();  // redis_storage.cpp
std::vector<RemoteScheme> http_schemes();   // http_storage.cpp

const RemoteBackendRegistry& RemoteBackendRegistry::builtin() {
  static const RemoteBackendRegistry registry = [] {
    RemoteBackendRegistry r;
    for (auto schemes : {redis_schemes(), http_schemes()}) r.add(std::move(schemes));
    return r;
  }();
  return registry;
}

}  // namespace ob::storage
