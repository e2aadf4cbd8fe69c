// Result<T>: an `expected`-style value-or-error used everywhere inside the library.
// Exceptions are not used for expected failures; what throws is caught at the
// entries (cli::main, a launcher call, which then runs the compiler unchanged).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <variant>

namespace ob {

// The whole library's short name for std::filesystem.
namespace fs = std::filesystem;

// Process exit codes, shared by every command.
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int failure = 1;      // a build step or the program failed
inline constexpr int usage = 2;        // bad manifest, bad option, missing tool
inline constexpr int interrupted = 130;
}  // namespace exit_code

// A fully formatted, user-facing error. `message` already names the file,
// line:column or option and says what to do; callers only add context.
struct Error {
  std::string message;
  int code = exit_code::failure;

  static Error usage(std::string msg) { return {std::move(msg), exit_code::usage}; }
  static Error failure(std::string msg) { return {std::move(msg), exit_code::failure}; }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(implicit)
  Result(Error error) : v_(std::move(error)) {}    // NOLINT(implicit)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT(implicit)

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace ob

// Propagate an error from an expression returning Result<...>.
#define OB_TRY(expr)                                 \
  do {                                               \
    auto ob_try_result_ = (expr);                    \
    if (!ob_try_result_) return ob_try_result_.error(); \
  } while (0)
