// The engine of one build (docs/DISTRIBUTED.md), shared by the remote runner
// (exec/remote/runner.hpp) and the local cache's engine layer
// (exec/remote/layer.hpp): its client module loaded, its connection made
// and its capabilities asked once, on first use, by whichever needs it first;
// its first failure said once (one warning per build), after which every use
// is answered here.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "offload_build/exec/remote/setting.hpp"

namespace ob::exec {

// An engine's text (a status, a worker's answer) in one of our lines: one
// line, no control sequences, at most 300 bytes.
std::string printable_engine_text(const std::string& text);

class EngineLink {
 public:
  struct Setup {
    RemoteExecutionConfig config;
    // One line, said once per build (the first engine failure); any thread.
    std::function<void(const std::string&)> warn;
    // As RemoteRunnerSetup::engine_down: whether the engine failed earlier in
    // this build (mark=false), or that it failed now (mark=true).
    std::function<bool(bool mark)> engine_down;
  };
  explicit EngineLink(Setup setup);
  EngineLink(const EngineLink&) = delete;
  EngineLink& operator=(const EngineLink&) = delete;

  // The client, opened on the first call (any thread; later calls wait for
  // it): nullptr when the engine cannot be used (it cannot be reached:
  // warned; it failed earlier in this build: said then), an error when the
  // client module is missing (a usage error: remote execution is refused).
  Result<reapi::Client*> client();
  // Why client() is nullptr although this process never warned: the engine
  // failed earlier in this build (an earlier compile of the make run).
  bool down_earlier() const { return down_earlier_; }
  // The first failure of a call: one warning naming `error`, and from now on
  // client() is nullptr. Any thread.
  void failed(const std::string& error);
  bool down() const { return down_; }
  // Values (by the engine layer's names) the engine was asked for in this
  // build and does not hold: noted by the layer, asked by the runner. Any thread.
  void note_absent(std::string name);
  bool absent(const std::string& name) const;
  // Cancel every call in flight (Ctrl-C). Any thread.
  void cancel();
  const RemoteExecutionConfig& config() const { return setup_.config; }

 private:
  Setup setup_;
  std::mutex open_m_;  // held while the client is opened
  bool opened_ = false;
  std::optional<std::string> refused_;
  std::mutex client_m_;  // guards client_ against cancel()
  std::unique_ptr<reapi::Client> client_;
  std::atomic<bool> down_{false};
  mutable std::mutex absent_m_;
  std::set<std::string> absent_;
  bool down_earlier_ = false;
};

}  // namespace ob::exec
