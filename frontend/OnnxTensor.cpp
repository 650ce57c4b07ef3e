//===- frontend/OnnxTensor.cpp - constant tensors of an ONNX model -------------------===//
//
// Decoding follows the ONNX IR spec: data lives in raw_data (little-endian, packed), else in
// the typed field of the data type (float_data, int32_data for every type of 32 bits or
// fewer, int64_data, double_data, uint64_data), else in an external file named by the
// "location", "offset" and "length" entries of external_data. Sizes are checked before
// anything is allocated, so a corrupt count cannot make the importer allocate more than
// the model holds.
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxTensor.h"

#include "ir/Error.h"
#include "onnx.pb.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>

namespace sinter::onnximport {

int64_t checkedNumel(llvm::ArrayRef<int64_t> shape, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return -1;
    if (d != 0 && n > limit / d)
      return -1;
    n *= d;
  }
  return n <= limit ? n : -1;
}

int64_t ConstTensor::numel() const {
  switch (kind) {
  case ElemKind::F32:
    return int64_t(f32.size());
  case ElemKind::F64:
    return int64_t(f64.size());
  case ElemKind::I64:
    return int64_t(i64.size());
  }
  llvm_unreachable("unknown element kind");
}

double ConstTensor::num(size_t i) const {
  switch (kind) {
  case ElemKind::F32:
    return f32[i];
  case ElemKind::F64:
    return f64[i];
  case ElemKind::I64:
    return double(i64[i]);
  }
  llvm_unreachable("unknown element kind");
}

int64_t ConstTensor::integer(size_t i) const {
  if (kind == ElemKind::I64)
    return i64[i];
  double v = num(i);
  // Out-of-range and NaN floats saturate instead of being undefined behaviour.
  if (!(v > -9.2e18))
    return std::isnan(v) ? 0 : INT64_MIN;
  if (v > 9.2e18)
    return INT64_MAX;
  return int64_t(v);
}

ConstTensor ConstTensor::zeros(ElemKind kind, llvm::ArrayRef<int64_t> shape) {
  ConstTensor t;
  t.kind = kind;
  t.shape.assign(shape.begin(), shape.end());
  int64_t n = checkedNumel(shape, kMaxElements);
  assert(n >= 0 && "zeros: the caller checks the element count");
  switch (kind) {
  case ElemKind::F32:
    t.f32.assign(size_t(n), 0.0f);
    break;
  case ElemKind::F64:
    t.f64.assign(size_t(n), 0.0);
    break;
  case ElemKind::I64:
    t.i64.assign(size_t(n), 0);
    break;
  }
  return t;
}

void ConstTensor::set(size_t i, double v) {
  switch (kind) {
  case ElemKind::F32:
    f32[i] = float(v);
    return;
  case ElemKind::F64:
    f64[i] = v;
    return;
  case ElemKind::I64: {
    ConstTensor one;
    one.kind = ElemKind::F64;
    one.f64 = {v};
    i64[i] = one.integer(0);
    return;
  }
  }
}

void ConstTensor::setInt(size_t i, int64_t v) {
  if (kind == ElemKind::I64)
    i64[i] = v;
  else
    set(i, double(v));
}

std::vector<float> ConstTensor::toF32() const {
  if (kind == ElemKind::F32)
    return f32;
  std::vector<float> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = float(num(i));
  return out;
}

std::string onnxTypeName(int t) {
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return "float";
  case onnx::TensorProto::UINT8:
    return "uint8";
  case onnx::TensorProto::INT8:
    return "int8";
  case onnx::TensorProto::UINT16:
    return "uint16";
  case onnx::TensorProto::INT16:
    return "int16";
  case onnx::TensorProto::INT32:
    return "int32";
  case onnx::TensorProto::INT64:
    return "int64";
  case onnx::TensorProto::STRING:
    return "string";
  case onnx::TensorProto::BOOL:
    return "bool";
  case onnx::TensorProto::FLOAT16:
    return "float16";
  case onnx::TensorProto::DOUBLE:
    return "double";
  case onnx::TensorProto::UINT32:
    return "uint32";
  case onnx::TensorProto::UINT64:
    return "uint64";
  case onnx::TensorProto::COMPLEX64:
    return "complex64";
  case onnx::TensorProto::COMPLEX128:
    return "complex128";
  case onnx::TensorProto::BFLOAT16:
    return "bfloat16";
  case 17:
  case 18:
  case 19:
  case 20:
    return "float8";
  case 21:
    return "uint4";
  case 22:
    return "int4";
  default:
    return "data type " + std::to_string(t);
  }
}

std::optional<ElemKind> elemKindOf(int t) {
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return ElemKind::F32;
  case onnx::TensorProto::DOUBLE:
    return ElemKind::F64;
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    return ElemKind::I64;
  default:
    return std::nullopt;
  }
}

llvm::Expected<llvm::StringRef> ExternalData::bytes(llvm::StringRef location, uint64_t offset,
                                                    uint64_t length) {
  if (dir.empty())
    return makeError("the tensor is stored in external file '" + location +
                     "' but the model was not read from a file");
  // The ONNX spec wants a path relative to the model's folder; anything else could read
  // files the model has no business with.
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(
          llvm::make_range(llvm::sys::path::begin(location), llvm::sys::path::end(location)), ".."))
    return makeError("external data location '" + location +
                     "' must be a relative path inside the model's folder");
  auto it = files.find(location);
  if (it == files.end()) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, location);
    auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (!buf)
      return makeError("cannot read external data file " + path + ": " + buf.getError().message());
    it = files.try_emplace(location, std::move(*buf)).first;
  }
  llvm::StringRef all = it->second->getBuffer();
  if (offset > all.size() || length > all.size() - offset)
    return makeError("external data [" + llvm::Twine(offset) + ", " + llvm::Twine(offset + length) +
                     ") lies outside '" + location + "' (" + llvm::Twine(uint64_t(all.size())) +
                     " bytes)");
  return all.substr(offset, length);
}

namespace {

/// Bytes per element of the types read from raw bytes.
unsigned rawSize(int t) {
  switch (t) {
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::BOOL:
    return 1;
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::INT16:
    return 2;
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  default:
    return 8;
  }
}

template <class T> T loadLE(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v; // the hosts sinter runs on are little-endian, as ONNX's raw data is
}

/// Fills `out` (sized) from little-endian packed bytes of ONNX type `t`.
void fromRaw(llvm::StringRef raw, int t, ConstTensor &out) {
  size_t n = size_t(out.numel());
  const char *p = raw.data();
  for (size_t i = 0; i < n; ++i) {
    const char *e = p + i * rawSize(t);
    switch (t) {
    case onnx::TensorProto::FLOAT:
      out.f32[i] = loadLE<float>(e);
      break;
    case onnx::TensorProto::DOUBLE:
      out.f64[i] = loadLE<double>(e);
      break;
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      out.i64[i] = uint8_t(*e);
      break;
    case onnx::TensorProto::INT8:
      out.i64[i] = int8_t(*e);
      break;
    case onnx::TensorProto::UINT16:
      out.i64[i] = loadLE<uint16_t>(e);
      break;
    case onnx::TensorProto::INT16:
      out.i64[i] = loadLE<int16_t>(e);
      break;
    case onnx::TensorProto::INT32:
      out.i64[i] = loadLE<int32_t>(e);
      break;
    case onnx::TensorProto::UINT32:
      out.i64[i] = loadLE<uint32_t>(e);
      break;
    case onnx::TensorProto::INT64:
      out.i64[i] = loadLE<int64_t>(e);
      break;
    case onnx::TensorProto::UINT64:
      out.i64[i] = int64_t(loadLE<uint64_t>(e));
      break;
    default:
      llvm_unreachable("elemKindOf admits no other type");
    }
  }
}

} // namespace

llvm::Expected<ConstTensor> decodeTensor(const onnx::TensorProto &t, ExternalData &external) {
  int type = t.data_type();
  std::optional<ElemKind> kind = elemKindOf(type);
  if (!kind)
    return makeError("data type " + onnxTypeName(type) + " is not supported");
  if (t.has_segment())
    return makeError("segmented tensors are not supported");
  Shape shape(t.dims().begin(), t.dims().end());
  int64_t n = checkedNumel(shape, kMaxElements);
  if (n < 0)
    return makeError("dims " + shapeStr(shape) + " are negative or too large");

  std::optional<llvm::StringRef> raw;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    uint64_t offset = 0;
    std::optional<uint64_t> length;
    for (const onnx::StringStringEntryProto &e : t.external_data()) {
      unsigned long long v = 0;
      if (e.key() == "location")
        location = e.value();
      else if ((e.key() == "offset" || e.key() == "length")) {
        if (llvm::getAsUnsignedInteger(e.value(), 10, v))
          return makeError("external data " + e.key() + " '" + e.value() + "' is not a number");
        if (e.key() == "offset")
          offset = v;
        else
          length = v;
      }
    }
    uint64_t want = uint64_t(n) * rawSize(type);
    if (length && *length != want)
      return makeError("external data length " + llvm::Twine(*length) + " disagrees with dims " +
                       shapeStr(shape) + " of " + onnxTypeName(type) + " (" + llvm::Twine(want) +
                       " bytes)");
    auto bytes = external.bytes(location, offset, want);
    if (!bytes)
      return bytes.takeError();
    raw = *bytes;
  } else if (t.has_raw_data()) {
    raw = llvm::StringRef(t.raw_data());
  }

  ConstTensor out;
  out.kind = *kind;
  out.shape = shape;
  auto sizeError = [&](size_t got) {
    return makeError("holds " + llvm::Twine(uint64_t(got)) + " elements but its dims " +
                     shapeStr(shape) + " need " + llvm::Twine(n));
  };
  if (raw) {
    if (raw->size() != uint64_t(n) * rawSize(type))
      return makeError("raw data of " + llvm::Twine(uint64_t(raw->size())) +
                       " bytes disagrees with dims " + shapeStr(shape) + " of " +
                       onnxTypeName(type));
    out = ConstTensor::zeros(*kind, shape);
    fromRaw(*raw, type, out);
    return out;
  }
  switch (type) {
  case onnx::TensorProto::FLOAT:
    if (t.float_data_size() != n)
      return sizeError(t.float_data_size());
    out.f32.assign(t.float_data().begin(), t.float_data().end());
    return out;
  case onnx::TensorProto::DOUBLE:
    if (t.double_data_size() != n)
      return sizeError(t.double_data_size());
    out.f64.assign(t.double_data().begin(), t.double_data().end());
    return out;
  case onnx::TensorProto::INT64:
    if (t.int64_data_size() != n)
      return sizeError(t.int64_data_size());
    out.i64.assign(t.int64_data().begin(), t.int64_data().end());
    return out;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    if (t.uint64_data_size() != n)
      return sizeError(t.uint64_data_size());
    for (uint64_t v : t.uint64_data())
      out.i64.push_back(int64_t(v));
    return out;
  default:
    // int32_data carries every type of 32 bits or fewer.
    if (t.int32_data_size() != n)
      return sizeError(t.int32_data_size());
    out.i64.assign(t.int32_data().begin(), t.int32_data().end());
    return out;
  }
}

} // namespace sinter::onnximport
