//===- templates/conv_shift_rows.cuh - weight rows of conv_shift's phase and small-group modes ===//
//
// conv_shift.cuh multiplies W X^T where W's rows are "product rows": with output phases
// (a transposed convolution of stride S > 1 walked on a grid of input-rate positions) a
// product row is one (output channel, phase) pair, and with small groups (8 or 16 input
// channels each) one k group holds the rows of 32 / (Cin / groups) channel groups, whose
// 32 input channels are one k tile. This kernel writes, once per run, those rows:
// float[kKGroups * kRowsK][kKPad], row (kg, r) and k = (chunk * kTaps + tap) * 32 + ch
// holding the weight that k group kg's product row r gives to input channel
// kg * kCinK + chunk * 32 + ch at tap `tap` (flat over kKD x kKH x kKW), zero where that
// channel belongs to another group, lies past the k group's channels, or where the tap and
// the row's phase never meet. Rounded to TF32 (nearest, ties away), which the tensor cores
// would otherwise truncate.
//
// Product row r of a k group: group gi = r / kRowsG of the k group, then within it
// r % kRowsG = co * kPhases + phi, phi flat over (kSD, kSH, kSW) (conv_shift.cuh reads the
// same order). Along a dim of stride S > 1, tap j of phase phi is stored kernel tap k where
// k * dil = j * S + phi (none when that has no solution below the kernel's extent); along a
// dim without phases (kS 1, kDil 1 given) tap j is stored tap j.
//
// Expects in namespace cfg: kCin, kCout, kGroups, kTransposed, kWKD/H/W (the stored kernel),
// kKD/H/W (conv_shift's taps per dim), kSD/H/W (phases per dim), kDilD/H/W (the dilation of
// dims with phases, 1 elsewhere), kKGroups, kRowsK, kCinK, kKPad, kThreads, kOutSlot.
//
//===--------------------------------------------------------------------------------===//

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using sinter::i64;
  constexpr int kCinG = cfg::kCin / cfg::kGroups;
  constexpr int kCoutG = cfg::kCout / cfg::kGroups;
  constexpr int kPhases = cfg::kSD * cfg::kSH * cfg::kSW;
  constexpr int kRowsG = kCoutG * kPhases;
  constexpr int kGroupsPerK = cfg::kRowsK / kRowsG;
  constexpr int kTaps = cfg::kKD * cfg::kKH * cfg::kKW;
  constexpr int kWKVol = cfg::kWKD * cfg::kWKH * cfg::kWKW;
  constexpr i64 kTotal = (i64)cfg::kKGroups * cfg::kRowsK * cfg::kKPad;
  static_assert(kGroupsPerK * kRowsG == cfg::kRowsK && cfg::kKGroups * kGroupsPerK == cfg::kGroups,
                "a k group holds whole channel groups");
  const float *__restrict__ w = sinter::slot<const float>(b, 1);
  float *rows = sinter::slot<float>(b, cfg::kOutSlot);
  // Stored tap of tap j and phase phi along a dim, or -1 where they never meet.
  auto storedTap = [](int j, int phi, int S, int dil, int K) {
    const int at = j * S + phi;
    return at % dil == 0 && at / dil < K ? at / dil : -1;
  };
  for (i64 i = (i64)blockIdx.x * cfg::kThreads + threadIdx.x; i < kTotal;
       i += (i64)gridDim.x * cfg::kThreads) {
    const int k = int(i % cfg::kKPad);
    const int row = int(i / cfg::kKPad);
    const int kg = row / cfg::kRowsK, r = row % cfg::kRowsK;
    const int gi = r / kRowsG, co = r % kRowsG / kPhases, phi = r % kPhases;
    const int tap = (k / 32) % kTaps, ch = k / (32 * kTaps) * 32 + k % 32;
    float v = 0.f;
    if (ch < cfg::kCinK && ch / kCinG == gi) {
      const int td = tap / (cfg::kKH * cfg::kKW), th = tap / cfg::kKW % cfg::kKH,
                tw = tap % cfg::kKW;
      const int pd = phi / (cfg::kSH * cfg::kSW), ph = phi / cfg::kSW % cfg::kSH,
                pw = phi % cfg::kSW;
      const int kd = storedTap(td, pd, cfg::kSD, cfg::kDilD, cfg::kWKD);
      const int kh = storedTap(th, ph, cfg::kSH, cfg::kDilH, cfg::kWKH);
      const int kw = storedTap(tw, pw, cfg::kSW, cfg::kDilW, cfg::kWKW);
      if (kd >= 0 && kh >= 0 && kw >= 0) {
        const int g = kg * kGroupsPerK + gi, ci = ch % kCinG;
        const int wt = (kd * cfg::kWKH + kh) * cfg::kWKW + kw;
        const i64 src = cfg::kTransposed ? ((i64)(g * kCinG + ci) * kCoutG + co) * kWKVol + wt
                                         : ((i64)(g * kCoutG + co) * kCinG + ci) * kWKVol + wt;
        v = __ldg(w + src);
        v = __uint_as_float((__float_as_uint(v) + 0x1000u) & 0xffffe000u);
      }
    }
    rows[i] = v;
  }
}
