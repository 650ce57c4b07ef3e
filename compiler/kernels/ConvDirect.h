//===- compiler/kernels/ConvDirect.h - direct FFMA convolution emitter -------------===//
//
// Turns a ConvSpec (compiler/kernels/Specs.h) into the source of a templates/conv_direct.cuh
// kernel: every shape baked in, a register-blocking choice made for the shape, and the anchor
// epilogue functor. Any conv or conv_transpose of the catalog is accepted (1-, 2-, 3-D,
// stride, padding, output_padding, dilation, groups, bias); the template is fastest with few
// channels per group, where the work is memory-bound. It can also run a softmax over the
// output channels and a pool whose windows tile the output, or a reduction over the output
// channels, in the same kernel (ConvSpec::softmax, ConvSpec::pool, ConvSpec::channelReduce).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"
#include "compiler/kernels/Specs.h"

#include "llvm/Support/Error.h"

namespace sinter {

/// Checks what every direct convolution template needs of `s` (ranks, sizes that follow from
/// the attributes, groups dividing the channels, grid limits); the error names the kernel.
llvm::Error checkDirectConvSpec(const ConvSpec &s);

/// Whether conv_direct runs `s` with its tails: a pool (s.pool: windows that tile the output,
/// storing the pooled tensor only, whole windows within one thread's accumulators) and a
/// softmax over the channels (s.softmax: one group, its channels within one thread's
/// accumulators), or a reduction over the channels (s.channelReduce: the same, without the
/// other two); `why` (when given) receives the reason it does not.
bool convDirectRunsTails(const ConvSpec &s, std::string *why);

/// The prologue constants of a direct convolution's shape that conv_direct.cuh and
/// conv_mma.cuh share (kTransposed, channel counts, per-dim sizes and attributes, kHasBias,
/// kStoreOutput, kAccStats).
void writeDirectConvShape(PrologueWriter &w, const ConvSpec &s);

/// Useful FLOPs, fewest bytes and the statistics workspace of a direct convolution kernel.
void setDirectConvCost(const ConvSpec &s, KernelSource &k);

/// The conv_direct kernel for `s` (s.math Ffma), or conv_mma's (s.math Tf32, ConvMma.h). Launch:
/// grid (spatial chunks, groups * channel blocks, N), block cfg::kThreads, no dynamic shared
/// memory. When s.accumulateStats, slot 4 must hold zeroed double[N * Cout * 2] (listed in the
/// result's workspace). Fails, naming the kernel, when the spec is inconsistent (sizes that do not
/// follow from the attributes, groups not dividing the channels) or when s.math is Tf32x3.
llvm::Expected<KernelSource> emitConvDirect(const ConvSpec &s);

/// Overrides of conv_direct's register blocking (conv_mma, s.math Tf32, ignores them), for
/// benchmarks that compare blockings (0: the
/// emitter's choice). vh is rounded up to a multiple of the H stride of a transposed conv;
/// colsPerThread is rounded up to a multiple of the W stride. prefetch: 0 when the blocking
/// has few FMAs per patch (the emitter's rule), 1 always, -1 never. minBlocks: the kernel's
/// __launch_bounds__ minimum of resident blocks, which caps registers (0: the emitter's).
struct ConvDirectTuning {
  int channelsPerThread = 0;
  int rowsPerThread = 0;
  int threads = 0;
  int colsPerThread = 0;
  int prefetch = 0;
  int minBlocks = 0;
};
llvm::Expected<KernelSource> emitConvDirect(const ConvSpec &s, const ConvDirectTuning &tuning);

} // namespace sinter
