// A test that cannot run here says so and returns, and CTest reports it as
// Skipped, not Passed (Catch2 2.13 has no SKIP()). OB_SKIP("why" << detail)
// prints the line "OB-TEST-SKIPPED: why detail" on stdout, the
// SKIP_REGULAR_EXPRESSION that tests/CMakeLists.txt gives every discovered
// test; scripts/test.sh fails when a reason is not in tests/allowed_skips.txt.
// Skip before checking anything: CTest calls a test whose output has the
// marker Skipped even when an earlier check failed.
#pragma once

#include <catch2/catch.hpp>

#include <iostream>
#include <sstream>
#include <string>

namespace ob::test {

inline constexpr const char* kSkipMarker = "OB-TEST-SKIPPED: ";

inline void report_skip(const std::string& why) {
  std::cout << '\n' << kSkipMarker << why << '\n' << std::flush;
  WARN("skipped: " << why);
}

}  // namespace ob::test

#define OB_SKIP(why)                              \
  do {                                            \
    std::ostringstream ob_skip_why_;              \
    ob_skip_why_ << why;                          \
    ::ob::test::report_skip(ob_skip_why_.str());  \
    return;                                       \
  } while (0)
