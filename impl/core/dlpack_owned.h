// DLPack tensors whose ownership the caller handed to smd (smd_hook_save_dlpack_managed). The
// implementation never looks inside one: it keeps the pointer while it needs the data and then
// gives the tensor back to its producer. Only impl/core/dlpack_owned.cc sees the DLPack layout;
// impl headers do not include the public smd/dlpack.h.
#pragma once

extern "C" {
struct DLManagedTensorVersioned;  // defined in smd/dlpack.h
}

namespace smd {

// Calls the tensor's deleter, if it has one. nullptr is allowed.
void ReleaseDLPack(DLManagedTensorVersioned* tensor);

}  // namespace smd
