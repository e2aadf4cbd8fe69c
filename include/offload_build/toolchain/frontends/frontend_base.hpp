// What every frontend is, whatever the shape of its passes: a name and the
// languages it compiles. The C family's frontends (frontend.hpp: a driver
// whose device and host passes clang's tools package and link) and Rust's
// (rust_frontend.hpp: a crate's device passes, image link, embed and host
// pass) derive from it; the planners ask the frontend that compiles a
// source's language for each pass's argv.
#pragma once

#include <string_view>

#include "offload_build/manifest/manifest.hpp"

namespace ob::toolchain::frontend {

class FrontendBase {
 public:
  virtual ~FrontendBase() = default;
  virtual std::string_view name() const = 0;
  // Whether this frontend compiles sources of `lang`.
  virtual bool compiles(manifest::Language lang) const = 0;
};

}  // namespace ob::toolchain::frontend
