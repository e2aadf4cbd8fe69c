// Things registered by the scheme their URLs start with (remote storage's
// backends, storage/remote/backend_registry.hpp; remote execution's engines,
// exec/remote/engine_registry.hpp): a list of schemes, each a struct whose
// `prefix` is what its URLs start with ("redis://", "grpc://").
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace ob::util {

template <class Scheme>
class SchemeRegistry {
 public:
  void add(std::vector<Scheme> schemes) {
    for (auto& scheme : schemes) schemes_.push_back(std::move(scheme));
  }
  // The scheme `url` starts with, or nullptr.
  const Scheme* find(std::string_view url) const {
    for (const auto& scheme : schemes_)
      if (!scheme.prefix.empty() && url.substr(0, scheme.prefix.size()) == scheme.prefix) return &scheme;
    return nullptr;
  }
  const std::vector<Scheme>& schemes() const { return schemes_; }

 private:
  std::vector<Scheme> schemes_;
};

}  // namespace ob::util
