//===- ir/Tensor.cpp - host tensors --------------------------------------------------===//
//
// HostTensor is plain data; this file exists so that the header has a translation unit
// that checks it compiles on its own.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Tensor.h"
