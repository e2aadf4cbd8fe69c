// Environment variables that hold secrets, kept from every child process.
// offload-build reads them itself (the signing key, remote credentials); the
// compilers, cargo, build scripts and the program `run` starts never see them.
// exec's spawn is the one place a child's environment is made, and asks here.
#pragma once

#include <string>
#include <string_view>

namespace ob::util {

// Never pass `name` to a child process from now on. Thread-safe.
void hide_from_children(std::string_view name);
// Whether `name` is kept from children: OFFLOAD_BUILD_SIGNING_KEY and
// OFFLOAD_BUILD_SIGNING_KEY_FILE always, and every name hidden so far.
bool hidden_from_children(std::string_view name);

}  // namespace ob::util
