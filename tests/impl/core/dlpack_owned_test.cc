// Unit tests for impl/core/dlpack_owned.{h,cc}: ReleaseDLPack gives a tensor back to its producer
// through the tensor's own deleter, exactly once, and accepts what has nothing to release.
#include "impl/core/dlpack_owned.h"

#include <gtest/gtest.h>

#include "smd/dlpack.h"

namespace smd {
namespace {

struct Producer {
  int released = 0;
  DLManagedTensorVersioned* last = nullptr;
};

void CountingDeleter(DLManagedTensorVersioned* self) {
  auto* p = static_cast<Producer*>(self->manager_ctx);
  ++p->released;
  p->last = self;
}

TEST(DLPackOwned, CallsTheDeleterOnceWithTheTensor) {
  Producer producer;
  DLManagedTensorVersioned t{};
  t.manager_ctx = &producer;
  t.deleter = CountingDeleter;
  ReleaseDLPack(&t);
  EXPECT_EQ(producer.released, 1);
  EXPECT_EQ(producer.last, &t);
}

// The usual producer: the deleter frees the tensor itself (ASan reports a leak or a double free).
TEST(DLPackOwned, DeleterMayFreeTheTensor) {
  static int freed = 0;
  freed = 0;
  auto* t = new DLManagedTensorVersioned{};
  t->version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  t->dl_tensor.data = new float[4]{1, 2, 3, 4};
  t->deleter = [](DLManagedTensorVersioned* self) {
    delete[] static_cast<float*>(self->dl_tensor.data);
    delete self;
    ++freed;
  };
  ReleaseDLPack(t);
  EXPECT_EQ(freed, 1);
}

TEST(DLPackOwned, NoDeleterAndNullAreNoOps) {
  ReleaseDLPack(nullptr);
  Producer producer;
  DLManagedTensorVersioned t{};
  t.manager_ctx = &producer;
  t.deleter = nullptr;  // DLPack: a producer with nothing to free may leave it NULL
  t.flags = 7;
  ReleaseDLPack(&t);
  EXPECT_EQ(producer.released, 0);
  EXPECT_EQ(t.manager_ctx, &producer);
  EXPECT_EQ(t.flags, 7u);
}

}  // namespace
}  // namespace smd
