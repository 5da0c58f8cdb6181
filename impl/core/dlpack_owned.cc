#include "impl/core/dlpack_owned.h"

#include "smd/dlpack.h"

namespace smd {

void ReleaseDLPack(DLManagedTensorVersioned* tensor) {
  if (tensor != nullptr && tensor->deleter != nullptr) tensor->deleter(tensor);
}

}  // namespace smd
