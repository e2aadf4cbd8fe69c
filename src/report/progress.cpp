#include "offload_build/report/progress.hpp"
#include "offload_build/config/config.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <streambuf>

#include <fmt/core.h>

namespace ob::report {

std::string_view build_result_name(BuildResult result) {
  switch (result) {
    case BuildResult::Ok: return "ok";
    case BuildResult::Failed: return "failed";
    case BuildResult::Interrupted: return "interrupted";
  }
  return "failed";
}

void ProgressTee::build_started(const plan::Plan& plan) {
  for (auto* s : sinks_) s->build_started(plan);
}
void ProgressTee::job_started(const plan::Job& job) {
  for (auto* s : sinks_) s->job_started(job);
}
void ProgressTee::job_served(const plan::Job& job, ServedFrom from, double seconds) {
  for (auto* s : sinks_) s->job_served(job, from, seconds);
}
void ProgressTee::job_output(const plan::Job& job, std::string_view text) {
  for (auto* s : sinks_) s->job_output(job, text);
}
void ProgressTee::job_finished(const plan::Job& job, double seconds) {
  for (auto* s : sinks_) s->job_finished(job, seconds);
}
void ProgressTee::job_found_current(const plan::Job& job) {
  for (auto* s : sinks_) s->job_found_current(job);
}

void ProgressTee::job_cpu(const plan::Job& job, double cpu_seconds) {
  for (auto* s : sinks_) s->job_cpu(job, cpu_seconds);
}
void ProgressTee::job_failed(const plan::Job& job, int exit_code, double seconds, const std::string& error) {
  for (auto* s : sinks_) s->job_failed(job, exit_code, seconds, error);
}
void ProgressTee::build_finished(BuildResult result) {
  for (auto* s : sinks_) s->build_finished(result);
}


namespace {

constexpr std::string_view kEraseLine = "\r\x1b[K";

bool env_nonempty(const char* name) {
  const char* v = config::env_or_null(name);
  return v && *v;
}

// Byte offsets that start a UTF-8 character (so an elision never splits one).
bool starts_char(std::string_view s, size_t i) {
  return i >= s.size() || (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
}

size_t count_chars(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) n += starts_char(s, i);
  return n;
}

// Byte offset of the character number `chars`.
size_t offset_of_char(std::string_view s, size_t chars) {
  size_t i = 0;
  for (size_t n = 0; i < s.size(); ++i) {
    if (!starts_char(s, i)) continue;
    if (n++ == chars) return i;
  }
  return s.size();
}

}  // namespace

ProgressMode choose_progress_mode(bool quiet, int fd) {
  if (quiet) return ProgressMode::Quiet;
  if (env_nonempty("CI")) return ProgressMode::Plain;
  const char* term = config::env_or_null("TERM");
  if (!term || !*term || std::string_view(term) == "dumb") return ProgressMode::Plain;
  return isatty(fd) == 1 ? ProgressMode::Status : ProgressMode::Plain;
}

int terminal_width(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* cols = config::env_or_null("COLUMNS")) {
    const int n = std::atoi(cols);
    if (n > 0) return n;
  }
  return 80;
}

std::string elide_middle(std::string_view text, size_t width) {
  const size_t chars = count_chars(text);
  if (chars <= width) return std::string(text);
  if (width <= 3) return std::string("...").substr(0, width);
  const size_t keep = width - 3;
  const size_t head = keep / 2, tail = keep - head;
  return std::string(text.substr(0, offset_of_char(text, head))) + "..." +
         std::string(text.substr(offset_of_char(text, chars - tail)));
}

// A streambuf in front of the guarded stream's own: before anything passes
// through, the status line is erased.
class ConsoleProgress::GuardBuf final : public std::streambuf {
 public:
  GuardBuf(std::streambuf* target, ConsoleProgress& owner) : target_(target), owner_(owner) {}
  std::streambuf* target() const { return target_; }

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    before();
    owner_.others_mid_line_ = traits_type::to_char_type(ch) != '\n';
    return target_->sputc(traits_type::to_char_type(ch));
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n <= 0) return 0;
    before();
    owner_.others_mid_line_ = s[n - 1] != '\n';
    return target_->sputn(s, n);
  }
  int sync() override { return target_->pubsync(); }

 private:
  void before() { owner_.erase_status(); }

  std::streambuf* target_;
  ConsoleProgress& owner_;
};

ConsoleProgress::ConsoleProgress(std::ostream& out, ConsoleOptions options, std::ostream* guard)
    : options_(options), sink_(out.rdbuf()) {
  if (options_.mode != ProgressMode::Status) return;
  if (options_.width <= 0) options_.width = terminal_width();
  if (guard) {
    guard_ = guard;
    guard_buf_ = std::make_unique<GuardBuf>(guard->rdbuf(), *this);
    if (guard->rdbuf() == sink_) sink_ = guard_buf_->target();
    guard->rdbuf(guard_buf_.get());
  }
}

ConsoleProgress::~ConsoleProgress() {
  if (status_shown_) write("\n");
  status_shown_ = false;
  if (guard_ && guard_->rdbuf() == guard_buf_.get()) guard_->rdbuf(guard_buf_->target());
}

void ConsoleProgress::write(std::string_view text) {
  sink_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
  sink_->pubsync();
}

void ConsoleProgress::erase_status() {
  if (!status_shown_) return;
  status_shown_ = false;
  write(kEraseLine);
}

void ConsoleProgress::draw(const std::string& line) {
  std::string text;
  if (others_mid_line_) {  // someone left a line unfinished: do not overwrite it
    text += '\n';
    others_mid_line_ = false;
  }
  text += '\r';
  text += elide_middle(line, static_cast<size_t>(std::max(options_.width - 1, 1)));
  text += "\x1b[K";
  write(text);
  status_shown_ = true;
}

void ConsoleProgress::build_started(const plan::Plan& plan) {
  cwd_ = plan.cwd;
  begin(plan.jobs.size());
}

void ConsoleProgress::begin(size_t total) {
  total_ = total;
  counted_ = 0;
}

void ConsoleProgress::served(std::string_view description, ServedFrom from) {
  announce(description, from == ServedFrom::Cache ? " (cached)" : " (up to date)");
}

void ConsoleProgress::announce(std::string_view description, std::string_view note) {
  ++counted_;
  if (options_.mode == ProgressMode::Quiet) return;
  std::string line = fmt::format("[{}/{}] {}{}", counted_, total_, description, note);
  if (options_.mode == ProgressMode::Plain) {
    write(line + "\n");
    return;
  }
  last_status_ = std::move(line);
  draw(last_status_);
}

void ConsoleProgress::job_started(const plan::Job& job) { announce(job.describe(cwd_), ""); }

void ConsoleProgress::job_served(const plan::Job& job, ServedFrom from, double) {
  served(job.describe(cwd_), from);
}

void ConsoleProgress::job_output(const plan::Job&, std::string_view text) {
  if (text.empty()) return;
  erase_status();
  write(text);
  if (text.back() != '\n') write("\n");
  if (options_.mode == ProgressMode::Status && !last_status_.empty()) draw(last_status_);
}

void ConsoleProgress::job_failed(const plan::Job&, int, double, const std::string&) {
  // The error itself is printed once, by the caller; here the status line only
  // has to get out of its way.
  erase_status();
  last_status_.clear();
}

void ConsoleProgress::build_finished(BuildResult result) {
  if (!status_shown_) return;
  if (result == BuildResult::Ok) {
    write("\n");  // as ninja: the last status line stays, the summary follows
    status_shown_ = false;
  } else {
    erase_status();
  }
}

}  // namespace ob::report
