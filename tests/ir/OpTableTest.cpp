//===- tests/ir/OpTableTest.cpp - the op table parses and answers lookups ----------===//
#include "ir/Graph.h"
#include "ir/Ops.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace sinter;

TEST(OpTable, EveryOpHasAUniqueNameThatLooksItselfUp) {
  for (unsigned i = 0; i < kNumOps; ++i) {
    const OpInfo &row = opInfo(OpKind(i));
    EXPECT_EQ(unsigned(row.kind), i);
    auto found = lookupOp(row.name);
    ASSERT_TRUE(found.has_value()) << row.name.str();
    EXPECT_EQ(*found, row.kind);
  }
  EXPECT_FALSE(lookupOp("convolution").has_value());
}

TEST(OpTable, SchemasCarryRequiredAndDefaults) {
  const OpInfo &gn = opInfo(OpKind::GroupNorm);
  ASSERT_EQ(gn.attrs.size(), 2u);
  EXPECT_EQ(gn.attrs[0].name, "groups");
  EXPECT_TRUE(gn.attrs[0].required);
  EXPECT_EQ(gn.attrs[1].name, "eps");
  EXPECT_DOUBLE_EQ(std::get<double>(gn.attrs[1].defaultValue), 1e-5);

  const OpInfo &pool = opInfo(OpKind::MaxPool);
  const AttrSpec *stride = pool.findAttr("stride");
  ASSERT_NE(stride, nullptr);
  EXPECT_EQ(stride->defaultFrom, "kernel_size");

  const AttrSpec *approx = opInfo(OpKind::Gelu).findAttr("approximate");
  ASSERT_NE(approx, nullptr);
  EXPECT_EQ(approx->kind, AttrKind::Enum);
  ASSERT_EQ(approx->choices.size(), 2u);
  EXPECT_EQ(approx->choices[1], "tanh");
}

TEST(OpTable, UnaryFormulasFollowPyTorch) {
  EXPECT_DOUBLE_EQ(evalUnary(OpKind::Relu, -2, 0, 0), 0);
  EXPECT_DOUBLE_EQ(evalUnary(OpKind::LeakyRelu, -2, 0.01, 0), -0.02);
  // softplus above the threshold is the identity.
  EXPECT_DOUBLE_EQ(evalUnary(OpKind::Softplus, 30, 1, 20), 30);
  EXPECT_NEAR(evalUnary(OpKind::Softplus, 1, 1, 20), std::log1p(std::exp(1.0)), 1e-15);
  EXPECT_NEAR(evalUnary(OpKind::Gelu, 1, 0, 0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(evalUnary(OpKind::Gelu, 1, 1, 0), 0.8411919906082768, 1e-15);
  EXPECT_DOUBLE_EQ(evalUnary(OpKind::Hardswish, 1, 0, 0), 1.0 * 4 / 6);
  EXPECT_TRUE(isUnary(OpKind::Clamp));
  EXPECT_FALSE(isUnary(OpKind::Add));
  EXPECT_TRUE(isBinary(OpKind::Minimum));
}

TEST(OpTable, AttributeDefaultsAndSpatialExpansion) {
  Op op{OpKind::MaxPool, {}, {}, 0, {}};
  op.setAttr("kernel_size", IntList{2, 3});
  EXPECT_EQ(op.getSpatial("stride", 2), (IntList{2, 3}));
  op.setAttr("padding", int64_t(1));
  EXPECT_EQ(op.getSpatial("padding", 2), (IntList{1, 1}));
  EXPECT_FALSE(op.getBool("ceil_mode"));
  // Attributes stay in schema order whatever order they are set in.
  ASSERT_EQ(op.attrs.size(), 2u);
  EXPECT_EQ(op.attrs[0].name, "kernel_size");
  EXPECT_EQ(op.attrs[1].name, "padding");

  Op gelu{OpKind::Gelu, {}, {}, 0, {}};
  gelu.setAttr("approximate", std::string("tanh"));
  EXPECT_EQ(gelu.unaryParams()[0], 1.0);
}
