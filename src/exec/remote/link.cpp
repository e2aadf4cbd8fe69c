// The engine of one build, opened once (exec/remote/link.hpp).
#include "offload_build/exec/remote/link.hpp"

#include <fmt/format.h>

#include <random>

#include "offload_build/util/strings.hpp"

namespace ob::exec {

std::string printable_engine_text(const std::string& text) {
  std::string one = util::foreign_text(text, "engine");
  for (char& c : one)
    if (c == '\n' || c == '\t') c = ' ';
  return util::shorten(one, 300);
}

namespace {

std::string invocation_id() {
  std::random_device rd;
  return fmt::format("{:08x}-{:04x}-4{:03x}-8{:03x}-{:08x}{:04x}", rd(), rd() & 0xffff, rd() & 0xfff, rd() & 0xfff,
                     rd(), rd() & 0xffff);
}

}  // namespace

EngineLink::EngineLink(Setup setup) : setup_(std::move(setup)) {}

Result<reapi::Client*> EngineLink::client() {
  std::lock_guard once(open_m_);
  if (!opened_) {
    opened_ = true;
    // An engine that failed an earlier compile of this make run is not asked
    // again: its deadlines are paid once per build, not once per compile.
    if (setup_.engine_down && setup_.engine_down(false)) {
      down_earlier_ = true;
      down_ = true;
    } else {
      // A copy: config() may be read while this thread opens (a launcher
      // call that never opens pays for no invocation id either).
      reapi::Endpoint endpoint = setup_.config.endpoint;
      endpoint.tool_version = OB_VERSION;
      endpoint.invocation_id = invocation_id();
      auto opened = setup_.config.scheme
                        ? setup_.config.scheme->open(endpoint)
                        : Result<std::unique_ptr<reapi::Client>>(Error::usage("remote_execution: no engine"));
      if (!opened) {
        refused_ = opened.error().message;
      } else {
        reapi::Capabilities caps;
        std::string error;
        if ((*opened)->capabilities(caps, error)) {
          std::lock_guard lock(client_m_);
          client_ = std::move(*opened);
        } else {
          down_ = true;
          if (setup_.engine_down) setup_.engine_down(true);
          if (setup_.warn)
            setup_.warn(fmt::format("remote_execution {}: {}; the build runs locally", setup_.config.display,
                                    printable_engine_text(error)));
        }
      }
    }
  }
  if (refused_) return Error::usage(*refused_);
  if (down_) return static_cast<reapi::Client*>(nullptr);
  return client_.get();
}

void EngineLink::failed(const std::string& error) {
  if (down_.exchange(true)) return;
  if (setup_.engine_down) setup_.engine_down(true);
  if (setup_.warn)
    setup_.warn(fmt::format("remote_execution {}: {}; this build's remaining jobs run locally", setup_.config.display,
                            printable_engine_text(error)));
}

void EngineLink::note_absent(std::string name) {
  std::lock_guard lock(absent_m_);
  absent_.insert(std::move(name));
}

bool EngineLink::absent(const std::string& name) const {
  std::lock_guard lock(absent_m_);
  return absent_.count(name) > 0;
}

void EngineLink::cancel() {
  std::lock_guard lock(client_m_);
  if (client_) client_->cancel();
}

}  // namespace ob::exec
