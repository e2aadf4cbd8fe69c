// The cargo flow's progress lines (cargo_build.cpp): the [i/n] line of each
// job when it ends, " (cached)" when the cache served it, " (fresh)" when
// cargo found it current (cargo's own output comes first: it is not
// buffered). Nothing under --quiet.
#pragma once

#include <iostream>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "cargo_explain.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/report/progress.hpp"

namespace ob::run {

class CargoLines final : public report::Progress {
 public:
  // `host`, the host pass, is named `host_name` ("cargo build app"); each job
  // that succeeds is recorded for a later --explain.
  CargoLines(bool quiet, plan::JobId host, std::string host_name, const CargoExplain& explain)
      : quiet_(quiet), host_(host), host_name_(std::move(host_name)), explain_(explain) {}
  void build_started(const plan::Plan& plan) override {
    cwd_ = plan.cwd;
    total_ = plan.jobs.size();
  }
  void job_served(const plan::Job& job, report::ServedFrom from, double) override {
    explain_.record(job);
    say(job, from == report::ServedFrom::Cache ? " (cached)" : " (up to date)");
  }
  void job_found_current(const plan::Job& job) override { fresh_ = job.id; }
  void job_finished(const plan::Job& job, double) override {
    explain_.record(job);
    say(job, fresh_ == job.id ? " (fresh)" : "");
  }

 private:
  void say(const plan::Job& job, const char* note) {
    ++done_;
    const std::string name = job.id == host_ ? host_name_ : job.describe(cwd_);
    if (!quiet_) std::cerr << fmt::format("[{}/{}] {}{}\n", done_, total_, name, note) << std::flush;
  }
  bool quiet_;
  plan::JobId host_;
  std::string host_name_;
  const CargoExplain& explain_;
  fs::path cwd_;
  size_t total_ = 0, done_ = 0;
  std::optional<plan::JobId> fresh_;
};

}  // namespace ob::run
