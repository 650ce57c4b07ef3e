//===- compiler/kernels/Norm.cpp - kernels that finish a fused normalisation -------===//
//
// Checks a NormSpec and writes the prologues of norm_apply.cuh, norm_scale_shift.cuh and
// norm_reduce.cuh. The constants shared through norm_common.cuh are written by one helper so
// the three kernels agree on what the statistics mean.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/Norm.h"

#include "ir/Error.h"
#include "ir/Ops.h"

#include <algorithm>

namespace sinter {
namespace {

llvm::Error check(const NormSpec &s) {
  if (s.kernelName.empty())
    return makeError("norm: empty kernel name");
  if (s.N < 1 || s.C < 1 || s.L < 1 || s.groups < 1)
    return makeError(s.kernelName + ": norm sizes must be positive");
  if (s.C % s.groups)
    return makeError(s.kernelName + ": groups=" + llvm::Twine(s.groups) +
                     " does not divide C=" + llvm::Twine(s.C));
  if (!(s.eps >= 0))
    return makeError(s.kernelName + ": eps must be non-negative");
  if (s.N > 65535 || s.C > 65535)
    return makeError(s.kernelName + ": N and C must each be at most 65535");
  return llvm::Error::success();
}

void commonConstants(PrologueWriter &w, const NormSpec &s, int64_t threads) {
  w.constant("kN", s.N);
  w.constant("kC", s.C);
  w.constant("kL", s.L);
  w.constant("kGroups", s.groups);
  w.constant("kCG", s.C / s.groups);
  w.constantBool("kAffine", s.affine);
  w.constant("kThreads", threads);
  // eps stays a double: the moments are finished in double.
  w.code("namespace cfg { constexpr double kEps = " + formatDouble(s.eps) + "; }");
}

WorkspaceNeed statsInput(const NormSpec &s) {
  return {4, 16 * s.N * s.C, WorkspaceNeed::Init::Zero,
          "per-(n,c) sum and sum of squares (double), filled by the anchor"};
}

} // namespace

llvm::Expected<KernelSource> emitNormApply(const NormSpec &s) {
  if (llvm::Error err = check(s))
    return err;
  constexpr int64_t threads = 256, unroll = 4;
  // A block of the plane mode covers threads * unroll vectors of one plane; planes smaller
  // than that share blocks instead (kMode 1), about as many elements a block.
  constexpr int64_t blockElements = threads * unroll * 4;
  const bool planeMode = s.L >= blockElements / 4;
  int64_t vec = s.L % 4 == 0 ? 4 : 1;
  const int64_t planes = s.N * s.C;
  int64_t planesPerBlock = 1;
  unsigned grid[3];
  if (planeMode) {
    int64_t chunks = (s.L / vec + threads * unroll - 1) / (threads * unroll);
    if (chunks > 0x7fffffff)
      return makeError(s.kernelName + ": plane too large");
    grid[0] = unsigned(chunks), grid[1] = unsigned(s.C), grid[2] = unsigned(s.N);
  } else {
    planesPerBlock = std::min(std::max<int64_t>(1, blockElements / s.L), planes);
    grid[0] = unsigned((planes + planesPerBlock - 1) / planesPerBlock), grid[1] = 1, grid[2] = 1;
  }
  PrologueWriter w(s.kernelName, "norm_apply.cuh");
  commonConstants(w, s, threads);
  w.constant("kMode", planeMode ? 0 : 1);
  w.constant("kUnroll", unroll);
  w.constant("kVec", vec);
  w.constant("kPlanes", planesPerBlock);
  w.code("namespace cfg {");
  w.anchorEpilogue("Post", s.post);
  w.code("} // namespace cfg");
  KernelSource k;
  k.name = s.kernelName;
  k.templateName = "norm_apply.cuh";
  k.source = w.finish();
  k.launch.grid = {grid[0], grid[1], grid[2]};
  k.launch.block = {unsigned(threads), 1, 1};
  k.tileConfig = planeMode ? std::to_string(threads) + " threads x " + std::to_string(unroll) +
                                 (vec == 4 ? " float4" : " floats") + " per thread"
                           : std::to_string(planesPerBlock) + " planes of " + std::to_string(s.L) +
                                 " a block" + (vec == 4 ? ", float4" : "");
  double elems = double(s.N) * s.C * s.L;
  k.flops = 2 * elems;
  k.bytes = 8 * elems + 16.0 * s.N * s.C + (s.affine ? 8.0 * s.C : 0);
  k.workspace.push_back(statsInput(s));
  return k;
}

llvm::Expected<KernelSource> emitNormScaleShift(const NormSpec &s) {
  if (llvm::Error err = check(s))
    return err;
  if (!s.post.isIdentity())
    return makeError(s.kernelName + ": norm scale/shift takes no post-norm ops");
  int64_t planes = s.N * s.C;
  int64_t threads = std::min<int64_t>(256, (planes + 31) / 32 * 32);
  PrologueWriter w(s.kernelName, "norm_scale_shift.cuh");
  commonConstants(w, s, threads);
  KernelSource k;
  k.name = s.kernelName;
  k.templateName = "norm_scale_shift.cuh";
  k.source = w.finish();
  k.launch.grid = {unsigned((planes + threads - 1) / threads), 1, 1};
  k.launch.block = {unsigned(threads), 1, 1};
  k.tileConfig = "one thread per (n, c)";
  k.flops = 4.0 * planes;
  k.bytes = 16.0 * planes + 8.0 * planes + (s.affine ? 8.0 * s.C : 0);
  k.workspace.push_back(statsInput(s));
  k.workspace.push_back({5, 8 * planes, WorkspaceNeed::Init::None,
                         "per-(n,c) float2 {scale, shift} of the group norm"});
  return k;
}

llvm::Expected<KernelSource> emitNormReduce(const NormSpec &s, bool overChannels, bool mean,
                                            bool normalised) {
  if (llvm::Error err = check(s))
    return err;
  int64_t threads = std::min<int64_t>(256, (s.C + 31) / 32 * 32);
  PrologueWriter w(s.kernelName, "norm_reduce.cuh");
  commonConstants(w, s, threads);
  w.constantBool("kOverChannels", overChannels);
  w.constantBool("kMean", mean);
  w.constantBool("kNormalised", normalised);
  w.code("namespace cfg {");
  w.flatFunctor("Post", s.post);
  w.code("} // namespace cfg");
  KernelSource k;
  k.name = s.kernelName;
  k.templateName = "norm_reduce.cuh";
  k.source = w.finish();
  k.launch.grid = {unsigned(s.N), 1, 1};
  k.launch.block = {unsigned(threads), 1, 1};
  k.tileConfig = std::string("one block per n, ") + (overChannels ? "over C and L" : "over L") +
                 (normalised ? ", normalised" : "");
  k.flops = 6.0 * s.N * s.C;
  k.bytes = 16.0 * s.N * s.C + (normalised && s.affine ? 8.0 * s.C : 0) +
            4.0 * (overChannels ? s.N : s.N * s.C);
  k.workspace.push_back(statsInput(s));
  return k;
}

} // namespace sinter
