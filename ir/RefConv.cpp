//===- ir/RefConv.cpp - reference convolution and transposed convolution -------------===//
//
// F.conv{1,2,3}d and F.conv_transpose{1,2,3}d in float64, rank-generic by viewing every
// input as 3-D spatial (missing leading spatial dims have size 1, stride 1, no padding).
// Work is split over (n, output channel) pairs, so each thread owns whole output planes and
// accumulates without synchronisation. The innermost loop runs along the width, over a range
// of output (conv) or input (transposed conv) positions computed up front so it holds no
// bounds checks and the compiler can vectorise it.
//
//===--------------------------------------------------------------------------------===//
#include "ir/RefKernels.h"

#include <algorithm>
#include <array>

namespace sinter::ref {
namespace {

/// Shapes and attributes of one convolution, spatial dims padded to 3.
struct ConvGeometry {
  int64_t n = 0, cin = 0, cout = 0, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, outSize{1, 1, 1}, k{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};

  int64_t inPlane() const { return in[0] * in[1] * in[2]; }
  int64_t outPlane() const { return outSize[0] * outSize[1] * outSize[2]; }
  int64_t kernelVolume() const { return k[0] * k[1] * k[2]; }
};

ConvGeometry geometry(const Op &op, const RefTensor &x, const RefTensor &w, const TensorType &out) {
  ConvGeometry g;
  unsigned spatial = x.type.rank() - 2;
  assert(spatial >= 1 && spatial <= 3 && "conv takes 1-3 spatial dims (verified)");
  g.n = x.type.shape[0];
  g.cin = x.type.shape[1];
  g.cout = out.shape[1];
  g.groups = op.getInt("groups");
  IntList stride = op.getSpatial("stride", spatial);
  IntList pad = op.getSpatial("padding", spatial);
  IntList dil = op.getSpatial("dilation", spatial);
  unsigned lead = 3 - spatial;
  for (unsigned d = 0; d < spatial; ++d) {
    g.in[lead + d] = x.type.shape[2 + d];
    g.outSize[lead + d] = out.shape[2 + d];
    g.k[lead + d] = w.type.shape[2 + d];
    g.stride[lead + d] = stride[d];
    g.pad[lead + d] = pad[d];
    g.dil[lead + d] = dil[d];
  }
  return g;
}

/// The positions i in [0, count) whose image `i * stride + offset` lies in [0, limit).
std::pair<int64_t, int64_t> validRange(int64_t count, int64_t stride, int64_t offset,
                                       int64_t limit) {
  int64_t lo = std::max<int64_t>(0, ceilDiv(-offset, stride));
  int64_t hi = std::min<int64_t>(count, floorDiv(limit - 1 - offset, stride) + 1);
  return {lo, std::max(lo, hi)};
}

void initPlane(double *acc, int64_t size, const RefTensor *bias, int64_t co) {
  std::fill(acc, acc + size, bias ? bias->data[co] : 0.0);
}

} // namespace

RefTensor evalConv(const Op &op, const RefTensor &x, const RefTensor &w, const RefTensor *bias,
                   const TensorType &out, unsigned threads) {
  ConvGeometry g = geometry(op, x, w, out);
  RefTensor y = makeResult(out);
  int64_t cinG = g.cin / g.groups, coutG = g.cout / g.groups;
  int64_t inPlane = g.inPlane(), outPlane = g.outPlane(), kVol = g.kernelVolume();
  parallelFor(g.n * g.cout, 1, threads, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      int64_t n = item / g.cout, co = item % g.cout, grp = co / coutG;
      double *acc = y.data.data() + item * outPlane;
      initPlane(acc, outPlane, bias, co);
      for (int64_t cl = 0; cl < cinG; ++cl) {
        const double *xp = x.data.data() + (n * g.cin + grp * cinG + cl) * inPlane;
        const double *wp = w.data.data() + (co * cinG + cl) * kVol;
        for (int64_t kd = 0; kd < g.k[0]; ++kd)
          for (int64_t kh = 0; kh < g.k[1]; ++kh)
            for (int64_t kw = 0; kw < g.k[2]; ++kw) {
              double wv = wp[(kd * g.k[1] + kh) * g.k[2] + kw];
              int64_t offD = kd * g.dil[0] - g.pad[0], offH = kh * g.dil[1] - g.pad[1],
                      offW = kw * g.dil[2] - g.pad[2];
              auto [d0, d1] = validRange(g.outSize[0], g.stride[0], offD, g.in[0]);
              auto [h0, h1] = validRange(g.outSize[1], g.stride[1], offH, g.in[1]);
              auto [w0, w1] = validRange(g.outSize[2], g.stride[2], offW, g.in[2]);
              int64_t sw = g.stride[2];
              for (int64_t od = d0; od < d1; ++od)
                for (int64_t oh = h0; oh < h1; ++oh) {
                  int64_t id = od * g.stride[0] + offD, ih = oh * g.stride[1] + offH;
                  double *orow = acc + (od * g.outSize[1] + oh) * g.outSize[2];
                  const double *irow = xp + (id * g.in[1] + ih) * g.in[2];
                  if (sw == 1) {
                    for (int64_t ow = w0; ow < w1; ++ow)
                      orow[ow] += wv * irow[ow + offW];
                  } else {
                    for (int64_t ow = w0; ow < w1; ++ow)
                      orow[ow] += wv * irow[ow * sw + offW];
                  }
                }
            }
      }
    }
  });
  return y;
}

RefTensor evalConvTranspose(const Op &op, const RefTensor &x, const RefTensor &w,
                            const RefTensor *bias, const TensorType &out, unsigned threads) {
  // y[n, co, i*s - p + k*d] += x[n, ci, i] * w[ci, co % coutG, k]: scattered from the input
  // positions, so every input element is read in order and no structural zero is touched.
  ConvGeometry g = geometry(op, x, w, out);
  RefTensor y = makeResult(out);
  int64_t cinG = g.cin / g.groups, coutG = g.cout / g.groups;
  int64_t inPlane = g.inPlane(), outPlane = g.outPlane(), kVol = g.kernelVolume();
  parallelFor(g.n * g.cout, 1, threads, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      int64_t n = item / g.cout, co = item % g.cout, grp = co / coutG, col = co % coutG;
      double *acc = y.data.data() + item * outPlane;
      initPlane(acc, outPlane, bias, co);
      for (int64_t cl = 0; cl < cinG; ++cl) {
        int64_t ci = grp * cinG + cl;
        const double *xp = x.data.data() + (n * g.cin + ci) * inPlane;
        const double *wp = w.data.data() + (ci * coutG + col) * kVol;
        for (int64_t kd = 0; kd < g.k[0]; ++kd)
          for (int64_t kh = 0; kh < g.k[1]; ++kh)
            for (int64_t kw = 0; kw < g.k[2]; ++kw) {
              double wv = wp[(kd * g.k[1] + kh) * g.k[2] + kw];
              int64_t offD = kd * g.dil[0] - g.pad[0], offH = kh * g.dil[1] - g.pad[1],
                      offW = kw * g.dil[2] - g.pad[2];
              auto [d0, d1] = validRange(g.in[0], g.stride[0], offD, g.outSize[0]);
              auto [h0, h1] = validRange(g.in[1], g.stride[1], offH, g.outSize[1]);
              auto [w0, w1] = validRange(g.in[2], g.stride[2], offW, g.outSize[2]);
              int64_t sw = g.stride[2];
              for (int64_t id = d0; id < d1; ++id)
                for (int64_t ih = h0; ih < h1; ++ih) {
                  int64_t od = id * g.stride[0] + offD, oh = ih * g.stride[1] + offH;
                  double *orow = acc + (od * g.outSize[1] + oh) * g.outSize[2];
                  const double *irow = xp + (id * g.in[1] + ih) * g.in[2];
                  if (sw == 1) {
                    for (int64_t iw = w0; iw < w1; ++iw)
                      orow[iw + offW] += wv * irow[iw];
                  } else {
                    for (int64_t iw = w0; iw < w1; ++iw)
                      orow[iw * sw + offW] += wv * irow[iw];
                  }
                }
            }
      }
    }
  });
  return y;
}

} // namespace sinter::ref
