#include "offload_build/util/secrets.hpp"

#include <mutex>
#include <set>

namespace ob::util {

namespace {

std::mutex g_mu;
std::set<std::string, std::less<>>& hidden() {
  static std::set<std::string, std::less<>> names{"OFFLOAD_BUILD_SIGNING_KEY",
                                                  "OFFLOAD_BUILD_SIGNING_KEY_FILE"};
  return names;
}

}  // namespace

void hide_from_children(std::string_view name) {
  std::lock_guard lock(g_mu);
  hidden().emplace(name);
}

bool hidden_from_children(std::string_view name) {
  std::lock_guard lock(g_mu);
  return hidden().count(name) > 0;
}

}  // namespace ob::util
