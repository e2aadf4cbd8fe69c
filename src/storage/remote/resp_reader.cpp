// The RESP2 reply reader: see resp_reader.hpp.
#include "offload_build/storage/remote/resp_reader.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace ob::storage {

bool parse_resp_integer(std::string_view digits, int64_t& out) {
  const bool negative = !digits.empty() && digits[0] == '-';
  if (negative) digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 19) return false;
  uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');  // 19 digits fit in 64 bits
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (value > limit) return false;
  out = negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  return true;
}

RespReader::State RespReader::fail(std::string why) {
  error_ = std::move(why);
  state_ = State::Bad;
  line_.clear();
  reply_ = {};
  return state_;
}

namespace {

bool known_type(char c) { return c == '+' || c == '-' || c == ':' || c == '$'; }

std::string describe_type(char c) {
  if (c == '*') return "an array reply (*), where one value was expected";
  return fmt::format("not a Redis reply (it starts with byte 0x{:02x})", static_cast<unsigned char>(c));
}

}  // namespace

// line_ holds one whole line, '\n' included.
RespReader::State RespReader::finish_line() {
  if (line_.size() < 3 || line_[line_.size() - 2] != '\r')
    return fail("a reply line not ended by CRLF");
  const char type = line_[0];
  std::string_view body(line_.data() + 1, line_.size() - 3);
  if (body.find('\r') != std::string_view::npos) return fail("a reply line with a bare CR");
  switch (type) {
    case '+':
    case '-':
      reply_.type = type == '+' ? RespReply::Type::Status : RespReply::Type::Error;
      reply_.text.assign(body);
      phase_ = Phase::Complete;
      break;
    case ':':
      if (!parse_resp_integer(body, reply_.integer))
        return fail(fmt::format("a malformed integer reply \":{}\"", body.substr(0, 40)));
      reply_.type = RespReply::Type::Integer;
      phase_ = Phase::Complete;
      break;
    case '$': {
      int64_t n = 0;
      if (!parse_resp_integer(body, n) || n < -1)
        return fail(fmt::format("a malformed bulk string length \"${}\"", body.substr(0, 40)));
      if (n == -1) {
        reply_.type = RespReply::Type::Nil;
        phase_ = Phase::Complete;
        break;
      }
      if (static_cast<uint64_t>(n) > max_bulk_) {
        too_large_ = true;
        return fail(fmt::format("the value is {} bytes, more than max-entry-size ({} bytes)", n,
                                max_bulk_));
      }
      reply_.type = RespReply::Type::Bulk;
      reply_.text.reserve(static_cast<size_t>(n));  // at most the cap
      bulk_left_ = static_cast<uint64_t>(n);
      phase_ = n > 0 ? Phase::Bulk : Phase::BulkEnd;
      break;
    }
    default:
      return fail(describe_type(type));
  }
  line_.clear();
  return state_;
}

RespReader::State RespReader::feed(std::string_view in) {
  if (state_ == State::Bad) return state_;
  while (!in.empty()) {
    switch (phase_) {
      case Phase::Line: {
        // Refused at the first byte when it cannot start a reply we accept
        // (a 14-byte "*2147483647\r\n" costs nothing).
        if (line_.empty() && !known_type(in[0])) return fail(describe_type(in[0]));
        const size_t nl = in.find('\n');
        const size_t take = nl == std::string_view::npos ? in.size() : nl + 1;
        if (line_.size() + take > kMaxRespLine)
          return fail(fmt::format("a reply line longer than {} bytes", kMaxRespLine));
        line_.append(in.substr(0, take));
        in.remove_prefix(take);
        if (nl != std::string_view::npos && finish_line() == State::Bad) return state_;
        break;
      }
      case Phase::Bulk: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(bulk_left_, in.size()));
        reply_.text.append(in.data(), take);
        in.remove_prefix(take);
        bulk_left_ -= take;
        if (bulk_left_ == 0) phase_ = Phase::BulkEnd;
        break;
      }
      case Phase::BulkEnd:
        while (!in.empty() && crlf_.size() < 2) {
          crlf_.push_back(in[0]);
          in.remove_prefix(1);
        }
        if (crlf_.size() == 2) {
          if (crlf_ != "\r\n") return fail("a bulk string longer than its declared length");
          phase_ = Phase::Complete;
        }
        break;
      case Phase::Complete:
        return fail("bytes after the reply");
    }
  }
  if (phase_ == Phase::Complete) state_ = State::Done;
  return state_;
}

}  // namespace ob::storage
