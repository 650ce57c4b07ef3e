//===- ir/RefPool.cpp - reference max and average pooling ----------------------------===//
//
// F.max_pool{1,2,3}d and F.avg_pool{1,2,3}d in float64, rank-generic by viewing the spatial
// dims as 3-D. Output sizes (with ceil_mode) come from the verifier's result type; the
// window rules are PyTorch's: max_pool skips padded positions and propagates NaN;
// avg_pool's divisor is the window clipped to the padded input (count_include_pad=true) or
// to the input itself (false), so a ceil_mode window that runs past the padded end is never
// counted in full.
//
//===--------------------------------------------------------------------------------===//
#include "ir/RefKernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace sinter::ref {

RefTensor evalPool(const Op &op, const RefTensor &x, const TensorType &out, unsigned threads) {
  unsigned spatial = x.type.rank() - 2;
  assert(spatial >= 1 && spatial <= 3 && "pools take 1-3 spatial dims (verified)");
  std::array<int64_t, 3> in{1, 1, 1}, os{1, 1, 1}, k{1, 1, 1}, st{1, 1, 1}, pad{0, 0, 0},
      dil{1, 1, 1};
  IntList kernel = op.getSpatial("kernel_size", spatial);
  IntList stride = op.getSpatial("stride", spatial);
  IntList padding = op.getSpatial("padding", spatial);
  bool isMax = op.kind == OpKind::MaxPool;
  IntList dilation = isMax ? op.getSpatial("dilation", spatial) : IntList(spatial, 1);
  bool includePad = !isMax && op.getBool("count_include_pad");
  unsigned lead = 3 - spatial;
  for (unsigned d = 0; d < spatial; ++d) {
    in[lead + d] = x.type.shape[2 + d];
    os[lead + d] = out.shape[2 + d];
    k[lead + d] = kernel[d];
    st[lead + d] = stride[d];
    pad[lead + d] = padding[d];
    dil[lead + d] = dilation[d];
  }
  int64_t inPlane = in[0] * in[1] * in[2], outPlane = os[0] * os[1] * os[2];
  int64_t planes = x.type.shape[0] * x.type.shape[1];
  RefTensor y = makeResult(out);

  parallelFor(planes, 1, threads, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const double *xp = x.data.data() + p * inPlane;
      double *yp = y.data.data() + p * outPlane;
      for (int64_t od = 0; od < os[0]; ++od)
        for (int64_t oh = 0; oh < os[1]; ++oh)
          for (int64_t ow = 0; ow < os[2]; ++ow) {
            std::array<int64_t, 3> o{od, oh, ow};
            double result;
            if (isMax) {
              result = -std::numeric_limits<double>::infinity();
              std::array<int64_t, 3> i;
              for (int64_t a = 0; a < k[0]; ++a)
                for (int64_t b = 0; b < k[1]; ++b)
                  for (int64_t c = 0; c < k[2]; ++c) {
                    std::array<int64_t, 3> t{a, b, c};
                    bool inside = true;
                    for (int d = 0; d < 3; ++d) {
                      i[d] = o[d] * st[d] - pad[d] + t[d] * dil[d];
                      inside = inside && i[d] >= 0 && i[d] < in[d];
                    }
                    if (!inside)
                      continue;
                    double v = xp[(i[0] * in[1] + i[1]) * in[2] + i[2]];
                    if (v > result || std::isnan(v))
                      result = v;
                  }
            } else {
              // PyTorch: the window [start, start + k) is first clipped to the padded input
              // [-pad, in + pad) (that size is the count_include_pad divisor), then to the
              // input [0, in) (that size is the other divisor and the summed region).
              std::array<int64_t, 3> lo, hi;
              int64_t padded = 1, valid = 1;
              for (int d = 0; d < 3; ++d) {
                int64_t start = o[d] * st[d] - pad[d];
                int64_t stop = std::min(start + k[d], in[d] + pad[d]);
                padded *= stop - start;
                lo[d] = std::max<int64_t>(start, 0);
                hi[d] = std::min(stop, in[d]);
                valid *= std::max<int64_t>(hi[d] - lo[d], 0);
              }
              double sum = 0;
              for (int64_t a = lo[0]; a < hi[0]; ++a)
                for (int64_t b = lo[1]; b < hi[1]; ++b)
                  for (int64_t c = lo[2]; c < hi[2]; ++c)
                    sum += xp[(a * in[1] + b) * in[2] + c];
              result = sum / double(includePad ? padded : valid);
            }
            yp[(od * os[1] + oh) * os[2] + ow] = result;
          }
    }
  });
  return y;
}

} // namespace sinter::ref
