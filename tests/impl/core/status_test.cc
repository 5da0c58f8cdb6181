// Unit tests for impl/core/status.{h,cc}: Status, Result<T>, ErrnoStatus and the propagation
// macros. (That Code's values are the C ABI's smd_code values is checked at compile time in
// capi/src/common.cc.)
#include "impl/core/status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace smd {
namespace {

TEST(Status, DefaultIsOkWithNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().message(), "");
}

TEST(Status, HelpersSetTheirCodeAndKeepTheMessage) {
  struct Case {
    Status status;
    Code code;
  };
  const Case cases[] = {
      {InvalidArgument("m1"), Code::kInvalidArgument}, {NotFound("m2"), Code::kNotFound},
      {IOError("m3"), Code::kIO},                      {Corrupt("m4"), Code::kCorrupt},
      {Internal("m5"), Code::kInternal},               {Unsupported("m6"), Code::kUnsupported},
      {InvalidState("m7"), Code::kInvalidState},
  };
  int i = 1;
  for (const Case& c : cases) {
    EXPECT_FALSE(c.status.ok());
    EXPECT_EQ(c.status.code(), c.code);
    EXPECT_EQ(c.status.message(), "m" + std::to_string(i++));
  }
}

TEST(Status, AnyCodeButOkIsAnError) {
  for (int c = 1; c <= 21; ++c) EXPECT_FALSE(Status(static_cast<Code>(c), "x").ok()) << c;
  // An error with an empty message is still an error.
  EXPECT_FALSE(Status(Code::kInternal, "").ok());
  // kOk with a message is still ok.
  EXPECT_TRUE(Status(Code::kOk, "ignored").ok());
}

TEST(Status, MessageIsKeptByteForByte) {
  const std::string m("a\0b\xff\n'", 6);
  Status s = Corrupt(m);
  EXPECT_EQ(s.message(), m);
  EXPECT_EQ(s.message().size(), 6u);
}

TEST(Status, WithContextPrependsAndKeepsTheCode) {
  Status s = NotFound("no such tensor 'w'");
  Status c = s.WithContext("while reading step 3");
  EXPECT_EQ(c.code(), Code::kNotFound);
  EXPECT_EQ(c.message(), "while reading step 3: no such tensor 'w'");
  EXPECT_EQ(s.message(), "no such tensor 'w'");  // the original is unchanged
  EXPECT_EQ(c.WithContext("trial 'x'").message(),
            "trial 'x': while reading step 3: no such tensor 'w'");
  EXPECT_EQ(Status(Code::kIO, "").WithContext("ctx").message(), "ctx: ");
}

TEST(Status, WithContextOnOkStaysOkWithoutAMessage) {
  Status c = Status::Ok().WithContext("while writing step 3");
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.message(), "");
}

TEST(Status, ErrnoStatusCodes) {
  EXPECT_EQ(ErrnoStatus("cannot open", "/p", ENOENT).code(), Code::kNotFound);
  EXPECT_EQ(ErrnoStatus("cannot open", "/p", ENOMEM).code(), Code::kOutOfMemory);
  EXPECT_EQ(ErrnoStatus("cannot create", "/p", EEXIST).code(), Code::kAlreadyExists);
  for (int err : {EACCES, EPERM, EISDIR, ENOTDIR, ENOSPC, EIO, EROFS, EINVAL, ENAMETOOLONG}) {
    EXPECT_EQ(ErrnoStatus("cannot open", "/p", err).code(), Code::kIO) << err;
  }
  // Not a failure errno at all: still an error, never ok.
  EXPECT_FALSE(ErrnoStatus("cannot open", "/p", 0).ok());
}

TEST(Status, ErrnoStatusMessageNamesWhatThePathAndTheReason) {
  Status s = ErrnoStatus("cannot open the hook configuration", "/opt/ml/my config.json", ENOENT);
  EXPECT_EQ(s.message(), "cannot open the hook configuration '/opt/ml/my config.json': " +
                             std::string(std::strerror(ENOENT)));
  EXPECT_EQ(ErrnoStatus("cannot read", "", EACCES).message(),
            std::string("cannot read '': ") + std::strerror(EACCES));
}

// ---- Result<T> ----

TEST(Result, HoldsAValue) {
  Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(*r, 42);
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.status().message(), "");
  Result<std::string> s = std::string("abc");
  EXPECT_EQ(s->size(), 3u);
  s.value() += "d";
  EXPECT_EQ(*s, "abcd");
}

TEST(Result, HoldsAnError) {
  Result<int> r = NotFound("step 7 not found");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(), "step 7 not found");
  const Result<int> copy = r;
  EXPECT_EQ(copy.status().message(), "step 7 not found");
}

TEST(Result, MoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 5);
}

// ---- the macros ----

int g_calls = 0;

Status Step(bool fail, const char* what) {
  ++g_calls;
  return fail ? IOError(what) : Status::Ok();
}

Result<int> Number(bool fail, int v) {
  ++g_calls;
  if (fail) return Corrupt("bad number " + std::to_string(v));
  return v;
}

Status TwoSteps(bool fail_first, bool fail_second) {
  SMD_RETURN_IF_ERROR(Step(fail_first, "first"));
  SMD_RETURN_IF_ERROR(Step(fail_second, "second"));
  return Status::Ok();
}

Result<int> Sum(bool fail_a, bool fail_b) {
  SMD_ASSIGN_OR_RETURN(int a, Number(fail_a, 1));
  SMD_ASSIGN_OR_RETURN(int b, Number(fail_b, 2));  // a second one in the same scope compiles
  return a + b;
}

Result<std::unique_ptr<int>> MakeBox(bool fail) {
  if (fail) return NotFound("no box");
  return std::make_unique<int>(9);
}

Result<int> Unbox(bool fail) {
  SMD_ASSIGN_OR_RETURN(std::unique_ptr<int> p, MakeBox(fail));
  return *p + 1;
}

TEST(StatusMacros, ReturnIfErrorStopsAtTheFirstError) {
  g_calls = 0;
  EXPECT_TRUE(TwoSteps(false, false).ok());
  EXPECT_EQ(g_calls, 2);
  g_calls = 0;
  Status s = TwoSteps(true, false);
  EXPECT_EQ(s.code(), Code::kIO);
  EXPECT_EQ(s.message(), "first");
  EXPECT_EQ(g_calls, 1);  // the second step never ran
  g_calls = 0;
  EXPECT_EQ(TwoSteps(false, true).message(), "second");
  EXPECT_EQ(g_calls, 2);
}

TEST(StatusMacros, AssignOrReturnEvaluatesOnceAndPropagates) {
  g_calls = 0;
  Result<int> ok = Sum(false, false);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  EXPECT_EQ(g_calls, 2);
  g_calls = 0;
  Result<int> bad = Sum(true, false);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kCorrupt);
  EXPECT_EQ(bad.status().message(), "bad number 1");
  EXPECT_EQ(g_calls, 1);
  EXPECT_EQ(Sum(false, true).status().message(), "bad number 2");
}

TEST(StatusMacros, AssignOrReturnMovesMoveOnlyValues) {
  Result<int> ok = Unbox(false);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 10);
  Result<int> bad = Unbox(true);
  EXPECT_EQ(bad.status().code(), Code::kNotFound);
  EXPECT_EQ(bad.status().message(), "no box");
}

}  // namespace
}  // namespace smd
