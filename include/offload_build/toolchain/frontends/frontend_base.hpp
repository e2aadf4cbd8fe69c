// What every frontend is, whatever the shape of its passes: a name and the
// languages it compiles. The C family's frontends (frontend.hpp: a driver
// whose device and host passes clang's tools package and link) and Rust's
// (rust_frontend.hpp: a crate's device passes, image link, embed and host
// pass) derive from it; the planners ask the frontend that compiles a
// source's language for each pass's argv.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/manifest/manifest.hpp"

namespace ob::toolchain::frontend {

// A device image, as every frontend's package step takes it: the file, its
// target and, under offload LTO (-foffload-lto), the device compile's target
// features ("+ptx88") the driver records in it as `feature=` entries.
struct Image {
  std::filesystem::path file;
  manifest::Target target;
  std::vector<std::string> features = {};
};

class FrontendBase {
 public:
  virtual ~FrontendBase() = default;
  virtual std::string_view name() const = 0;
  // Whether this frontend compiles sources of `lang`.
  virtual bool compiles(manifest::Language lang) const = 0;
};

}  // namespace ob::toolchain::frontend
