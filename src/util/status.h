// Status and Result<T>: the one error channel of Muster. Fallible functions
// return these (never throw across a module boundary). A Status carries a
// code and a human message that already names what was wrong and where.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace muster::util {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // bad user input (option, field, config value)
  kOutOfRange,       // a number outside what an option takes (its own exit code in sbatch)
  kNotFound,
  kPermissionDenied,
  kUnavailable,      // controller not reachable, resources never satisfiable
  kAlreadyExists,
  kFailedPrecondition,
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {Code::kOutOfRange, std::move(m)}; }
inline Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status PermissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
inline Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
inline Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {Code::kFailedPrecondition, std::move(m)}; }

// Result<T> holds either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace muster::util

// Early return on error, for Status-returning functions.
#define MUSTER_RETURN_IF_ERROR(expr)          \
  do {                                        \
    ::muster::util::Status _st = (expr);      \
    if (!_st.ok()) return _st;                \
  } while (0)
