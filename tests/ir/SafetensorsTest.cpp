//===- tests/ir/SafetensorsTest.cpp - safetensors round trip and corrupt files -------===//
//
// A written file reads back identically (values, shapes, metadata, a scalar, an empty
// tensor), matches the layout of the format (header length, 8-byte aligned data), and every
// kind of damage gives one error that names the file and says what is wrong.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Safetensors.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace sinter;

namespace {

std::string header(const std::string &json, const std::string &data = "") {
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i)
    out[i] = char((n >> (8 * i)) & 0xff);
  return out + json + data;
}

std::string errorOf(llvm::StringRef bytes) {
  auto r = parseSafetensors(bytes, "t.safetensors");
  if (r)
    return "(no error)";
  return llvm::toString(r.takeError());
}

} // namespace

TEST(Safetensors, RoundTripKeepsValuesShapesAndMetadata) {
  TensorMap in;
  in["b"] = HostTensor({2, 3}, {1, -2, 3.5f, 0, 1e-30f, -7});
  in["a"] = HostTensor({}, {42});
  in["empty"] = HostTensor({0, 4});
  std::string bytes = serializeSafetensors(in, {{"graph", "s0"}});
  // The data section starts 8-byte aligned after the length and the header.
  uint64_t headerLen = 0;
  std::memcpy(&headerLen, bytes.data(), 8);
  EXPECT_EQ((8 + headerLen) % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + headerLen + 7 * 4);

  SafetensorsMetadata meta;
  auto out = parseSafetensors(bytes, "t.safetensors", &meta);
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 3u);
  for (const auto &[name, t] : in) {
    ASSERT_EQ(out->count(name), 1u) << name;
    EXPECT_EQ(out->at(name).type, t.type) << name;
    EXPECT_EQ(out->at(name).data, t.data) << name;
  }
  EXPECT_EQ(meta["graph"], "s0");
}

TEST(Safetensors, FileRoundTripAndMissingFile) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("sinter-st", "safetensors", path));
  TensorMap in;
  in["x"] = HostTensor({3}, {1, 2, 3});
  ASSERT_FALSE(bool(writeSafetensors(path, in)));
  auto out = readSafetensors(path);
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_EQ(out->at("x").data, in["x"].data);
  llvm::sys::fs::remove(path);

  auto missing = readSafetensors("/nonexistent/x.safetensors");
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(llvm::toString(missing.takeError()),
            "/nonexistent/x.safetensors: cannot read: No such file or directory");
}

TEST(Safetensors, ReadsFilesLaidOutByOtherWriters) {
  // Unsorted entries, unpadded header, a gap-free data section in another order.
  float v[3] = {1.5f, -2, 4};
  std::string data(reinterpret_cast<const char *>(v), 12);
  auto r = parseSafetensors(header(R"({"y":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
                                   R"("x":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]}})",
                                   data),
                            "t.safetensors");
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->at("x").data, (std::vector<float>{1.5f, -2}));
  EXPECT_EQ(r->at("y").data, (std::vector<float>{4}));
}

TEST(Safetensors, CorruptFilesGiveOneClearError) {
  EXPECT_EQ(errorOf("abc"), "t.safetensors: truncated safetensors file: no 8-byte header length");
  EXPECT_EQ(errorOf(header("{}").substr(0, 9)),
            "t.safetensors: truncated safetensors file: header of 2 bytes, file has 1 after the "
            "length");
  EXPECT_EQ(errorOf(header("[1, 2]")), "t.safetensors: safetensors header is not a JSON object");
  EXPECT_EQ(errorOf(header("{not json")), "t.safetensors: safetensors header is not a JSON object");
  EXPECT_EQ(errorOf(header(R"({"x":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})",
                           std::string(4, '\0'))),
            "t.safetensors: tensor 'x': dtype F16 is not supported (only F32)");
  EXPECT_EQ(errorOf(header(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                           std::string(4, '\0'))),
            "t.safetensors: tensor 'x': data_offsets [0, 8) outside the data section of 4 bytes "
            "(truncated file?)");
  EXPECT_EQ(errorOf(header(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                           std::string(8, '\0'))),
            "t.safetensors: tensor 'x': data_offsets cover 8 bytes, shape [3] needs 12");
  EXPECT_EQ(errorOf(header(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})",
                           std::string(8, '\0'))),
            "t.safetensors: tensor 'x': data_offsets [8, 0) outside the data section of 8 bytes "
            "(truncated file?)");
  EXPECT_EQ(errorOf(header(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})")),
            "t.safetensors: tensor 'x': shape holds a value that is not a dimension");
  EXPECT_EQ(errorOf(header(R"({"x":{"dtype":"F32","shape":[2]}})")),
            "t.safetensors: tensor 'x': data_offsets is not a pair of byte offsets");
  EXPECT_EQ(errorOf(header(R"({"__metadata__":{"k":1}})")),
            "t.safetensors: __metadata__ entry 'k' is not a string");
}
