// Status and Result<T>: how expected failures travel inside smd. Each Code maps one-to-one to an
// smd_code of the C ABI (same numeric values).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace smd {

enum class Code : int {
  kOk = 0,
  kInternal = 1,
  kInvalidArgument = 2,
  kNotFound = 3,
  kIO = 4,
  kCorrupt = 5,
  kOutOfMemory = 6,
  kUnsupported = 7,
  kInvalidState = 8,
  kAlreadyExists = 9,
  kCancelled = 10,
  kTensorUnavailableForStep = 11,
  kTensorUnavailable = 12,
  kStepUnavailable = 13,
  kStepNotYetAvailable = 14,
  kNoMoreData = 15,
  kMissingCollectionFiles = 16,
  kShapeUnavailableForStep = 17,
  kInvalidWorker = 18,
  kRuleConditionMet = 19,
  kHttp = 20,
  kAuth = 21,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prepends context: "while writing step 3: <message>".
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
inline Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
inline Status IOError(std::string m) { return Status(Code::kIO, std::move(m)); }
inline Status Corrupt(std::string m) { return Status(Code::kCorrupt, std::move(m)); }
inline Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }
inline Status Unsupported(std::string m) { return Status(Code::kUnsupported, std::move(m)); }
inline Status InvalidState(std::string m) { return Status(Code::kInvalidState, std::move(m)); }

// errno-based I/O error: "<what> '<path>': <strerror(err)>".
Status ErrnoStatus(const std::string& what, const std::string& path, int err);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace smd

#define SMD_CONCAT_INNER(a, b) a##b
#define SMD_CONCAT(a, b) SMD_CONCAT_INNER(a, b)

#define SMD_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::smd::Status smd_status_ = (expr);        \
    if (!smd_status_.ok()) return smd_status_; \
  } while (0)

#define SMD_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#define SMD_ASSIGN_OR_RETURN(lhs, expr) \
  SMD_ASSIGN_OR_RETURN_IMPL(SMD_CONCAT(smd_result_, __LINE__), lhs, expr)
