// The C glue's out-of-memory path: when even the error object cannot be allocated, a call still
// returns a non-NULL SMD_E_OUT_OF_MEMORY error (NULL would read as success), and freeing it is
// harmless. capi/src/common.cc is compiled into this test, whose operator new fails on demand.
#include <cstdlib>
#include <new>
#include <string>

#include <gtest/gtest.h>

#include "capi/src/capi_internal.h"

namespace {
bool g_fail_new = false;
}  // namespace

void* operator new(std::size_t n) {
  if (g_fail_new) throw std::bad_alloc();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

struct FailNew {
  FailNew() { g_fail_new = true; }
  ~FailNew() { g_fail_new = false; }
};

TEST(CapiOutOfMemory, MakeErrorNeverReturnsNull) {
  std::string message(200, 'x');  // built before allocations start failing
  smd_error* e = nullptr;
  {
    FailNew fail;
    e = smd::capi::MakeError(SMD_E_IO, std::move(message));
  }
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(smd_error_code(e), SMD_E_OUT_OF_MEMORY);
  EXPECT_STREQ(smd_error_message(e), "out of memory");
  smd_error_free(e);  // a no-op for the static error
  EXPECT_EQ(smd_error_code(e), SMD_E_OUT_OF_MEMORY);
  EXPECT_EQ(e, smd::capi::OutOfMemoryError());
}

TEST(CapiOutOfMemory, FailingCallReportsOutOfMemoryNotSuccess) {
  smd_dtype out = SMD_DTYPE_INVALID;
  smd_error* e = nullptr;
  {
    FailNew fail;
    e = smd_dtype_from_name(nullptr, &out);  // an argument error whose error object cannot be made
  }
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(smd_error_code(e), SMD_E_OUT_OF_MEMORY);
  smd_error_free(e);
  // Ordinary errors are still separate heap objects.
  smd_error* ok_err = smd_dtype_from_name(nullptr, &out);
  ASSERT_NE(ok_err, nullptr);
  EXPECT_NE(ok_err, smd::capi::OutOfMemoryError());
  EXPECT_EQ(smd_error_code(ok_err), SMD_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_error_message(ok_err)).find("name"), std::string::npos);
  smd_error_free(ok_err);
}

}  // namespace
