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

void RemoteBackendRegistry::add(std::vector<RemoteScheme> schemes) {
  for (auto& scheme : schemes) schemes_.push_back(std::move(scheme));
}

const RemoteScheme* RemoteBackendRegistry::find(std::string_view url) const {
  for (const auto& scheme : schemes_)
    if (!scheme.prefix.empty() && url.substr(0, scheme.prefix.size()) == scheme.prefix) return &scheme;
  return nullptr;
}

}  // namespace ob::storage
