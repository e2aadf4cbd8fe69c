// A small, strict RESP2 reply reader for the Redis backend (redis_storage.cpp):
// one reply per request, fed in chunks as they arrive. It accepts only what
// our commands get back: a simple string (+OK), an error (-ERR ...), an
// integer (:1) and a bulk string ($N, or $-1 for nil). An array, any other
// type, a malformed or overflowing number, a line longer than kMaxRespLine and
// a bulk string longer than the cap are refused as soon as their header is
// read, before anything is allocated for them: a server cannot make the client
// hold more than the cap (max-entry-size) plus one line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ob::storage {

// The longest header or simple-string/error line accepted, CRLF included.
inline constexpr size_t kMaxRespLine = 64 * 1024;

struct RespReply {
  enum class Type { Status, Error, Integer, Bulk, Nil };
  Type type = Type::Nil;
  std::string text;     // Status, Error: the line; Bulk: the value
  int64_t integer = 0;  // Integer
};

class RespReader {
 public:
  enum class State { NeedMore, Done, Bad };
  // `max_bulk_bytes`: the largest bulk string accepted.
  explicit RespReader(uint64_t max_bulk_bytes) : max_bulk_(max_bulk_bytes) {}

  // Feed the next bytes of the reply. Done once the whole reply is read
  // (bytes after it are refused: one command, one reply); Bad with error()
  // saying why; NeedMore until then. Feeding after Done or Bad is Bad.
  State feed(std::string_view bytes);
  State state() const { return state_; }
  const std::string& error() const { return error_; }
  // The reply, once Done.
  RespReply& reply() { return reply_; }
  // True when refused for a bulk string over the cap (error() names the size).
  bool too_large() const { return too_large_; }

 private:
  enum class Phase { Line, Bulk, BulkEnd, Complete };
  State fail(std::string why);
  State finish_line();

  uint64_t max_bulk_;
  State state_ = State::NeedMore;
  Phase phase_ = Phase::Line;
  std::string line_;     // the header line so far
  uint64_t bulk_left_ = 0;
  std::string crlf_;     // the bulk string's terminator so far
  RespReply reply_;
  std::string error_;
  bool too_large_ = false;
};

// "1234" or "-1" (and no other form: no sign but '-', no spaces, no leading
// '+', at most 19 digits), overflow-checked; false when malformed.
bool parse_resp_integer(std::string_view digits, int64_t& out);

}  // namespace ob::storage
