//===- tests/kernels_tc/ConvPhasesTest.cpp - the output-phase split, checked on the CPU ===//
//
// conv_igemm runs a strided transposed convolution as one kernel per output phase
// (compiler/kernels/ConvPhases.h). No GPU is needed to check the index arithmetic: this
// test evaluates the transposed convolution through the phases, with the index formulas
// of templates/conv_igemm.cuh written out the same way (row -> sub-grid q -> y position,
// flat phase tap -> j -> stored weight tap, input = q + offset - j * dilation, masked to the
// input), and compares with the definition (o = i * stride - padding + t * dilation) on every
// 1-D shape of a small range and on mixed 2-D and 3-D shapes. Every output must be written by
// exactly one phase.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/ConvPhases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace sinter;

namespace {

/// One dim of a transposed convolution: input extent, kernel, stride, padding, dilation,
/// output_padding.
struct Dim {
  int64_t in, k, s, p, dil, op;
  int64_t out() const { return (in - 1) * s - 2 * p + dil * (k - 1) + op + 1; }
};

ConvSpec specOf(const Dim (&d)[3]) {
  ConvSpec s;
  s.transposed = true;
  for (int i = 0; i < 3; ++i) {
    s.in[i] = d[i].in;
    s.out[i] = d[i].out();
    s.kernel[i] = d[i].k;
    s.stride[i] = d[i].s;
    s.padding[i] = d[i].p;
    s.dilation[i] = d[i].dil;
  }
  return s;
}

std::string describe(const ConvSpec &s) {
  std::string r;
  for (int d = 0; d < 3; ++d)
    r += "[in " + std::to_string(s.in[d]) + " k " + std::to_string(s.kernel[d]) + " s " +
         std::to_string(s.stride[d]) + " p " + std::to_string(s.padding[d]) + " dil " +
         std::to_string(s.dilation[d]) + " out " + std::to_string(s.out[d]) + "]";
  return r;
}

/// y by the definition: every (input, tap) pair adds to output i * s - p + t * dil.
std::vector<double> byDefinition(const ConvSpec &s, const std::vector<double> &x,
                                 const std::vector<double> &w) {
  std::vector<double> y(s.out[0] * s.out[1] * s.out[2], 0.0);
  for (int64_t id = 0; id < s.in[0]; ++id)
    for (int64_t ih = 0; ih < s.in[1]; ++ih)
      for (int64_t iw = 0; iw < s.in[2]; ++iw)
        for (int64_t td = 0; td < s.kernel[0]; ++td)
          for (int64_t th = 0; th < s.kernel[1]; ++th)
            for (int64_t tw = 0; tw < s.kernel[2]; ++tw) {
              int64_t od = id * s.stride[0] - s.padding[0] + td * s.dilation[0];
              int64_t oh = ih * s.stride[1] - s.padding[1] + th * s.dilation[1];
              int64_t ow = iw * s.stride[2] - s.padding[2] + tw * s.dilation[2];
              if (od < 0 || od >= s.out[0] || oh < 0 || oh >= s.out[1] || ow < 0 || ow >= s.out[2])
                continue;
              y[(od * s.out[1] + oh) * s.out[2] + ow] +=
                  x[(id * s.in[1] + ih) * s.in[2] + iw] *
                  w[(td * s.kernel[1] + th) * s.kernel[2] + tw];
            }
  return y;
}

/// y through the phases, with conv_igemm.cuh's index formulas (kOut* = outExtent, kK* = taps,
/// kP* = offset, kD* = dilation, kYStep/kYPhase/kWTap0/kWTapStep from the phase). `writes`
/// counts how often each output is written.
std::vector<double> byPhases(const ConvSpec &s, const std::vector<double> &x,
                             const std::vector<double> &w, std::vector<int> &writes) {
  const int64_t yVol = s.out[0] * s.out[1] * s.out[2];
  std::vector<double> y(yVol, std::nan(""));
  writes.assign(yVol, 0);
  for (const ConvPhase &p : transposedConvPhases(s)) {
    const int64_t outHW = p.outExtent[1] * p.outExtent[2], kHW = p.taps[1] * p.taps[2];
    for (int64_t sp = 0; sp < p.outVolume(); ++sp) {
      // A loader: row -> sub-grid position -> input base (transposed: q + kP).
      const int64_t q[3] = {sp / outHW, (sp / p.outExtent[2]) % p.outExtent[1],
                            sp % p.outExtent[2]};
      double acc = 0;
      for (int64_t tap = 0; tap < p.tapVolume(); ++tap) {
        const int64_t j[3] = {tap / kHW, (tap / p.taps[2]) % p.taps[1], tap % p.taps[2]};
        // tapMask: input position base - j * dilation, inside the input.
        int64_t pos[3];
        bool in = true;
        for (int d = 0; d < 3; ++d) {
          pos[d] = q[d] + p.offset[d] - j[d] * p.dilation[d];
          in &= pos[d] >= 0 && pos[d] < s.in[d];
        }
        if (!in)
          continue;
        // weightTap.
        const int64_t wt = ((p.firstTap[0] + p.tapStep[0] * j[0]) * s.kernel[1] +
                            (p.firstTap[1] + p.tapStep[1] * j[1])) *
                               s.kernel[2] +
                           (p.firstTap[2] + p.tapStep[2] * j[2]);
        acc += x[(pos[0] * s.in[1] + pos[1]) * s.in[2] + pos[2]] * w[wt];
      }
      // yPosition.
      const int64_t ys =
          ((p.phase[0] + p.step[0] * q[0]) * s.out[1] + (p.phase[1] + p.step[1] * q[1])) *
              s.out[2] +
          (p.phase[2] + p.step[2] * q[2]);
      EXPECT_TRUE(ys >= 0 && ys < yVol) << describe(s);
      if (ys < 0 || ys >= yVol)
        continue;
      y[ys] = acc;
      ++writes[ys];
    }
  }
  return y;
}

/// Checks the phases of the convolution with dims `d` against the definition; returns
/// whether some phase had no taps (its outputs then hold nothing but the bias).
bool checkShape(const Dim (&d)[3], std::mt19937 &rng) {
  ConvSpec s = specOf(d);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(s.in[0] * s.in[1] * s.in[2]), w(s.kernel[0] * s.kernel[1] * s.kernel[2]);
  for (double &v : x)
    v = u(rng);
  for (double &v : w)
    v = u(rng);
  std::vector<int> writes;
  std::vector<double> want = byDefinition(s, x, w), got = byPhases(s, x, w, writes);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(writes[i], 1) << describe(s) << " output " << i;
    EXPECT_NEAR(got[i], want[i], 1e-12) << describe(s) << " output " << i;
    if (writes[i] != 1 || !(std::abs(got[i] - want[i]) <= 1e-12))
      return false;
  }
  bool empty = false;
  for (const ConvPhase &p : transposedConvPhases(s)) {
    empty |= p.tapVolume() == 0;
    for (int i = 0; i < 3; ++i) {
      // The per-dim invariants the template's static_asserts state.
      EXPECT_LT(p.phase[i], p.step[i]);
      EXPECT_LT(p.phase[i] + p.step[i] * (p.outExtent[i] - 1), s.out[i]);
      if (p.taps[i] > 0) {
        EXPECT_LT(p.firstTap[i] + p.tapStep[i] * (p.taps[i] - 1), s.kernel[i]);
      }
    }
  }
  return empty;
}

TEST(ConvPhases, StrideOneIsOnePhaseOfEveryTap) {
  const Dim d[3] = {{4, 3, 1, 1, 2, 0}, {5, 2, 1, 0, 1, 0}, {6, 3, 1, 2, 1, 0}};
  auto phases = transposedConvPhases(specOf(d));
  ASSERT_EQ(phases.size(), 1u);
  const ConvPhase &p = phases[0];
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(p.outExtent[i], d[i].out());
    EXPECT_EQ(p.taps[i], d[i].k);
    EXPECT_EQ(p.offset[i], d[i].p);
    EXPECT_EQ(p.dilation[i], d[i].dil);
    EXPECT_EQ(p.firstTap[i], 0);
    EXPECT_EQ(p.tapStep[i], 1);
  }
}

TEST(ConvPhases, KernelThreeStrideTwo) {
  // k 3, stride 2, padding 1, output_padding 1, input 5: output 10. Even outputs take tap 1
  // from input q; odd outputs taps 0 and 2 from inputs q + 1 and q.
  const Dim d[3] = {{1, 1, 1, 0, 1, 0}, {1, 1, 1, 0, 1, 0}, {5, 3, 2, 1, 1, 1}};
  auto phases = transposedConvPhases(specOf(d));
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].outExtent[2], 5);
  EXPECT_EQ(phases[0].taps[2], 1);
  EXPECT_EQ(phases[0].firstTap[2], 1);
  EXPECT_EQ(phases[0].offset[2], 0);
  EXPECT_EQ(phases[1].phase[2], 1);
  EXPECT_EQ(phases[1].outExtent[2], 5);
  EXPECT_EQ(phases[1].taps[2], 2);
  EXPECT_EQ(phases[1].firstTap[2], 0);
  EXPECT_EQ(phases[1].tapStep[2], 2);
  EXPECT_EQ(phases[1].offset[2], 1);
  EXPECT_EQ(phases[1].dilation[2], 1);
}

TEST(ConvPhases, EveryOneDimensionalShapeMatchesTheDefinition) {
  std::mt19937 rng(7);
  int shapes = 0, withEmptyPhases = 0;
  for (int64_t in : {1, 2, 3, 5, 8})
    for (int64_t k = 1; k <= 5; ++k)
      for (int64_t s = 1; s <= 4; ++s)
        for (int64_t dil = 1; dil <= 3; ++dil)
          for (int64_t p = 0; p <= dil * (k - 1); ++p)
            for (int64_t op = 0; op < std::max(s, dil); ++op) {
              const Dim d[3] = {{1, 1, 1, 0, 1, 0}, {1, 1, 1, 0, 1, 0}, {in, k, s, p, dil, op}};
              if (d[2].out() < 1)
                continue;
              ++shapes;
              withEmptyPhases += checkShape(d, rng);
              if (testing::Test::HasFailure())
                return;
            }
  // The range covers both kinds (and is not silently empty).
  EXPECT_GT(shapes, 1000);
  EXPECT_GT(withEmptyPhases, 100);
}

TEST(ConvPhases, MixedTwoAndThreeDimensionalShapesMatchTheDefinition) {
  // Per-dim settings: k 3 / 4, stride 1 / 2 / 3, padding 0 up to >= k/2, output_padding,
  // dilation coprime with the stride, fewer outputs than the stride.
  const Dim dims[] = {{3, 3, 2, 1, 1, 1}, {4, 4, 2, 1, 1, 0}, {5, 3, 2, 2, 1, 0},
                      {3, 3, 1, 1, 1, 0}, {4, 3, 3, 1, 1, 2}, {3, 3, 2, 1, 3, 1},
                      {1, 3, 2, 1, 1, 0}, {2, 4, 3, 0, 2, 1}, {1, 1, 1, 0, 1, 0}};
  std::mt19937 rng(11);
  for (const Dim &a : dims)
    for (const Dim &b : dims)
      for (const Dim &c : {dims[0], dims[4], dims[6], dims[8]}) {
        const Dim d[3] = {c, a, b};
        checkShape(d, rng);
        if (testing::Test::HasFailure())
          return;
      }
}

} // namespace
