//===- ir/Safetensors.cpp - f32 safetensors files ------------------------------------===//
//
// Reading validates everything the header claims before touching the data: the header
// length against the file size, each entry's dtype, shape and offsets, and that the byte
// range of each tensor matches its shape, so a corrupt file gives one clear error instead of
// a crash or garbage.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Safetensors.h"

#include "ir/Error.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <limits>

namespace sinter {
namespace {

static_assert(sizeof(float) == 4, "safetensors F32 is IEEE binary32");

uint64_t readLE64(const char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | uint8_t(p[i]);
  return v;
}

void appendLE64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(char((v >> (8 * i)) & 0xff));
}

/// A JSON number that is a non-negative integer, as a uint64_t.
bool asIndex(const nlohmann::json &j, uint64_t &out) {
  if (j.is_number_unsigned()) {
    out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) {
    out = uint64_t(j.get<int64_t>());
    return true;
  }
  return false;
}

} // namespace

llvm::Expected<TensorMap> parseSafetensors(llvm::StringRef bytes, llvm::StringRef fileName,
                                           SafetensorsMetadata *metadata) {
  auto fail = [&](const llvm::Twine &msg) { return makeError(fileName + ": " + msg); };
  if (bytes.size() < 8)
    return fail("truncated safetensors file: no 8-byte header length");
  uint64_t headerLen = readLE64(bytes.data());
  if (headerLen > bytes.size() - 8)
    return fail("truncated safetensors file: header of " + llvm::Twine(headerLen) +
                " bytes, file has " + llvm::Twine(bytes.size() - 8) + " after the length");
  llvm::StringRef headerText = bytes.substr(8, headerLen);
  llvm::StringRef data = bytes.substr(8 + headerLen);

  nlohmann::json header = nlohmann::json::parse(headerText.begin(), headerText.end(), nullptr,
                                                /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return fail("safetensors header is not a JSON object");

  TensorMap tensors;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string &name = it.key();
    const nlohmann::json &entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object())
        return fail("__metadata__ is not an object of strings");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string())
          return fail("__metadata__ entry '" + m.key() + "' is not a string");
        if (metadata)
          (*metadata)[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    auto bad = [&](const llvm::Twine &msg) { return fail("tensor '" + name + "': " + msg); };
    if (!entry.is_object())
      return bad("header entry is not an object");
    auto dtype = entry.find("dtype");
    if (dtype == entry.end() || !dtype->is_string())
      return bad("missing dtype");
    if (dtype->get<std::string>() != "F32")
      return bad("dtype " + dtype->get<std::string>() + " is not supported (only F32)");
    auto shapeJ = entry.find("shape");
    if (shapeJ == entry.end() || !shapeJ->is_array())
      return bad("missing shape");
    Shape shape;
    uint64_t numel = 1;
    for (const nlohmann::json &d : *shapeJ) {
      uint64_t dim = 0;
      if (!asIndex(d, dim) || dim > uint64_t(std::numeric_limits<int32_t>::max()))
        return bad("shape holds a value that is not a dimension");
      shape.push_back(int64_t(dim));
      numel *= dim;
      if (numel > (uint64_t(1) << 40))
        return bad("shape is implausibly large");
    }
    auto offsets = entry.find("data_offsets");
    uint64_t begin = 0, end = 0;
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
        !asIndex((*offsets)[0], begin) || !asIndex((*offsets)[1], end))
      return bad("data_offsets is not a pair of byte offsets");
    if (begin > end || end > data.size())
      return bad("data_offsets [" + llvm::Twine(begin) + ", " + llvm::Twine(end) +
                 ") outside the data section of " + llvm::Twine(data.size()) +
                 " bytes (truncated file?)");
    if (end - begin != numel * 4)
      return bad("data_offsets cover " + llvm::Twine(end - begin) + " bytes, shape " +
                 shapeStr(shape) + " needs " + llvm::Twine(numel * 4));
    HostTensor t(shape);
    if (numel)
      std::memcpy(t.data.data(), data.data() + begin, numel * 4);
    tensors.emplace(name, std::move(t));
  }
  return tensors;
}

llvm::Expected<TensorMap> readSafetensors(llvm::StringRef path, SafetensorsMetadata *metadata) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(path + ": cannot read: " + buffer.getError().message());
  return parseSafetensors((*buffer)->getBuffer(), path, metadata);
}

std::string serializeSafetensors(const TensorMap &tensors, const SafetensorsMetadata &metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) {
    nlohmann::json m = nlohmann::json::object();
    for (const auto &[k, v] : metadata)
      m[k] = v;
    header["__metadata__"] = m;
  }
  uint64_t offset = 0;
  for (const auto &[name, t] : tensors) {
    assert(t.type.dtype == DType::F32 && int64_t(t.data.size()) == t.numel() &&
           "a HostTensor holds numel f32 values");
    nlohmann::json shape = nlohmann::json::array();
    for (int64_t d : t.type.shape)
      shape.push_back(d);
    uint64_t size = uint64_t(t.data.size()) * 4;
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  std::string headerText = header.dump();
  // Pad with spaces so the data section starts 8-byte aligned, as the reference writer does.
  while ((8 + headerText.size()) % 8)
    headerText.push_back(' ');
  std::string out;
  out.reserve(8 + headerText.size() + offset);
  appendLE64(out, headerText.size());
  out += headerText;
  for (const auto &[name, t] : tensors)
    out.append(reinterpret_cast<const char *>(t.data.data()), t.data.size() * 4);
  return out;
}

llvm::Error writeSafetensors(llvm::StringRef path, const TensorMap &tensors,
                             const SafetensorsMetadata &metadata) {
  std::string bytes = serializeSafetensors(tensors, metadata);
  std::string tmp = (path + ".tmp" + llvm::Twine(llvm::sys::Process::getProcessId())).str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return makeError(path + ": cannot write: " + ec.message());
    os << bytes;
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return makeError(path + ": cannot write: " + message);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return makeError(path + ": cannot write: " + ec.message());
  }
  return llvm::Error::success();
}

} // namespace sinter
