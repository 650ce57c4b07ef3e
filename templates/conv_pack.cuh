//===- templates/conv_pack.cuh - convolution weights in the rows conv_igemm reads ---===//
//
// conv_igemm.cuh's B tile is row n (an output channel of the group) by 32 consecutive
// reduction indices k = ci * taps + j. In PyTorch's layout those are contiguous only for a
// direct convolution; a transposed convolution keeps the output channel between ci and the
// taps ([Cin, Cout / groups, taps]), and an output phase uses every s-th tap, so each warp
// copy of a B row touched up to eight lines in 4-byte pieces. This kernel writes, once per
// run, every kernel's weights as rows of kKPad floats (k contiguous, zero past that kernel's
// reduction), so that the B loader copies 16 bytes at a time from whole lines.
//
// Output (slot kOutSlot): float[kKernels][kCout][kKPad], row (p, g * kCoutG + n) holding
// kernel p's k = 0 .. kCinG * taps_p - 1 (k = ci * taps_p + j), or with kChunk > 0 the order of
// conv_wgmma.cuh: chunks of kChunk channels, in each k8 steps s = j * (kChunk / 8) + sub of
// eight channels, steps padded with zeros to a multiple of 4. Kernel p's taps are kPTaps[p][d]
// per dim (d = D, H, W),
// the stored tap of its tap j being kPTap0[p][d] + kPTapStep[p][d] * j (the identity for the one
// kernel of a convolution without phases). A kernel p with kPZero[p] set (an output phase no
// tap reaches: ConvIgemm.cpp gives it one tap) gets rows of zeros.
//
// With kRound the weights are written rounded to TF32 (nearest, ties away), for kernels whose
// tensor cores read them through descriptors and would otherwise truncate them.
//
// Expects in namespace cfg: kCin, kCout, kGroups, kTransposed, kWKD, kWKH, kWKW (the stored
// kernel's extents), kKernels, kKPad, kChunk, kThreads, kOutSlot, kRound, and the __device__
// arrays kPTaps, kPTap0, kPTapStep of kKernels * 3 entries and kPZero of kKernels.
//
//===--------------------------------------------------------------------------------===//

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using sinter::i64;
  constexpr int kCinG = cfg::kCin / cfg::kGroups;
  constexpr int kCoutG = cfg::kCout / cfg::kGroups;
  constexpr int kWKVol = cfg::kWKD * cfg::kWKH * cfg::kWKW;
  constexpr i64 kTotal = (i64)cfg::kKernels * cfg::kCout * cfg::kKPad;
  const float *__restrict__ w = sinter::slot<const float>(b, 1);
  float *packed = sinter::slot<float>(b, cfg::kOutSlot);
  for (i64 i = (i64)blockIdx.x * cfg::kThreads + threadIdx.x; i < kTotal;
       i += (i64)gridDim.x * cfg::kThreads) {
    const int k = int(i % cfg::kKPad);
    const int c = int((i / cfg::kKPad) % cfg::kCout);
    const int p = int(i / ((i64)cfg::kKPad * cfg::kCout));
    const int t[3] = {int(cfg::kPTaps[p * 3]), int(cfg::kPTaps[p * 3 + 1]),
                      int(cfg::kPTaps[p * 3 + 2])};
    const int t0[3] = {int(cfg::kPTap0[p * 3]), int(cfg::kPTap0[p * 3 + 1]),
                       int(cfg::kPTap0[p * 3 + 2])};
    const int ts[3] = {int(cfg::kPTapStep[p * 3]), int(cfg::kPTapStep[p * 3 + 1]),
                       int(cfg::kPTapStep[p * 3 + 2])};
    const int taps = t[0] * t[1] * t[2];
    // The kernel's (ci, tap j) at k, or ci past Cin/groups where k holds padding.
    int ci, j;
    if constexpr (cfg::kChunk > 0) {
      constexpr int kSub = cfg::kChunk / 8 > 0 ? cfg::kChunk / 8 : 1; // (kChunk 0 compiles too)
      const int steps = kSub * taps, padded = (steps + 3) / 4 * 4;
      const int chunk = k / (padded * 8), s = (k / 8) % padded;
      j = s / kSub;
      ci = s < steps ? chunk * cfg::kChunk + (s % kSub) * 8 + k % 8 : kCinG;
    } else {
      ci = k / taps;
      j = k - ci * taps;
    }
    float v = 0.f;
    if (ci < kCinG && !cfg::kPZero[p]) {
      const int jd = j / (t[1] * t[2]), jh = (j / t[2]) % t[1], jw = j % t[2];
      const int tap = ((t0[0] + ts[0] * jd) * cfg::kWKH + (t0[1] + ts[1] * jh)) * cfg::kWKW +
                      (t0[2] + ts[2] * jw);
      const int g = c / kCoutG, n = c - g * kCoutG;
      const i64 src = cfg::kTransposed ? ((i64)(g * kCinG + ci) * kCoutG + n) * kWKVol + tap
                                       : ((i64)c * kCinG + ci) * kWKVol + tap;
      v = __ldg(w + src);
      if constexpr (cfg::kRound)
        v = __uint_as_float((__float_as_uint(v) + 0x1000u) & 0xffffe000u);
    }
    packed[i] = v;
  }
}
