//===- ir/Safetensors.h - f32 safetensors files ------------------------------------===//
//
// The tools exchange tensors as safetensors files (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length, a JSON header mapping each tensor name to its dtype,
// shape and byte range in the data section, an optional "__metadata__" map of strings, then
// the raw data. sinter reads and writes F32 tensors only; any other dtype, an offset outside
// the data or disagreeing with the shape, and a truncated file are errors that name the file.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace sinter {

using SafetensorsMetadata = std::map<std::string, std::string>;

/// Decodes the bytes of a safetensors file; `fileName` prefixes every error message. When
/// `metadata` is given it receives the "__metadata__" entries.
llvm::Expected<TensorMap> parseSafetensors(llvm::StringRef bytes, llvm::StringRef fileName,
                                           SafetensorsMetadata *metadata = nullptr);

/// Reads the safetensors file at `path`.
llvm::Expected<TensorMap> readSafetensors(llvm::StringRef path,
                                          SafetensorsMetadata *metadata = nullptr);

/// Encodes `tensors` (in name order, data 8-byte aligned) with optional metadata.
std::string serializeSafetensors(const TensorMap &tensors,
                                 const SafetensorsMetadata &metadata = {});

/// Writes `tensors` to `path`, through a temporary file renamed into place so that a reader
/// never sees a partial file.
llvm::Error writeSafetensors(llvm::StringRef path, const TensorMap &tensors,
                             const SafetensorsMetadata &metadata = {});

} // namespace sinter
