//===- compiler/kernels/RowNorm.cpp - emitters of the standalone normalisations ------===//
//
// Layer, group and instance norms of a tensor in memory are all normalisations of contiguous
// rows (Generic.h, RowNormSpec). The parallel decomposition follows the geometry alone: a row
// of up to 32 Ki floats fits in the registers of a team of 1 to 1024 threads, so the whole
// norm is one read and one write (row_norm.cuh); teams narrower than a warp share it, so short
// rows (a 2-D group norm with 8-wide groups, a layer norm over 64 features) still give every
// thread whole vectors of work. Rows too long for that, or too few to fill the GPU one team
// each, split each row's statistics over blocks (channel_stats.cuh with one plane per row) and
// normalise in a second pass (row_apply.cuh).
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/GenericCommon.h"
#include "ir/Graph.h"
#include "ir/Ops.h"

namespace sinter {

using namespace generic;

namespace {

/// The register budget of one thread for the row it holds, in vectors.
int64_t maxVectorsPerThread(int64_t vec) { return vec == 4 ? 8 : 16; }

struct ResidentShape {
  int64_t vec, team, per, threads;
};

/// Two vectors a thread where the team can be that wide: enough loads in flight, few
/// registers, and the team as narrow as that allows so short rows share warps.
ResidentShape residentShape(const RowNormSpec &s) {
  ResidentShape r;
  r.vec = s.width % 4 == 0 ? 4 : 1;
  const int64_t vecs = s.width / r.vec;
  r.team = std::clamp<int64_t>(nextPow2(ceilDiv(vecs, 2)), 1, 1024);
  r.per = ceilDiv(vecs, r.team);
  r.threads = r.team > 32 ? r.team : 256; // a team wider than a warp owns its block
  return r;
}

llvm::Error check(const RowNormSpec &s) {
  if (llvm::Error err = checkKernelName(s.kernelName))
    return err;
  const std::string &name = s.kernelName;
  if (llvm::Error err = checkOutSlot(name, s.outSlot))
    return err;
  if (s.outSlot == 4 || s.outSlot == 6 || s.outSlot == 7)
    return makeError(name + ": norm output slot " + llvm::Twine(s.outSlot) +
                     " holds statistics, gamma or beta");
  if (s.rows < 1 || s.width < 1)
    return makeError(name + ": norm over an empty tensor");
  if (s.affineGroups < 1 || s.affineDiv < 1 || (s.affineGroups * s.width) % s.affineDiv)
    return makeError(name + ": affine groups " + llvm::Twine(s.affineGroups) + " and divisor " +
                     llvm::Twine(s.affineDiv) + " do not index whole parameters of rows of " +
                     llvm::Twine(s.width));
  if (!(s.eps >= 0))
    return makeError(name + ": norm eps must be non-negative");
  return llvm::Error::success();
}

void affineConstants(PrologueWriter &w, const RowNormSpec &s) {
  w.constant("kRows", s.rows);
  w.constant("kWidth", s.width);
  w.constantBool("kAffine", s.affine);
  w.constant("kAffineGroups", s.affineGroups);
  w.constant("kAffineDiv", s.affineDiv);
  w.constant("kOutSlot", s.outSlot);
}

double affineBytes(const RowNormSpec &s) {
  return s.affine ? 8.0 * double(s.affineGroups * s.width / s.affineDiv) : 0;
}

} // namespace

RowNormSpec rowNormGeometry(const Op &norm, const TensorType &input) {
  RowNormSpec spec;
  spec.eps = norm.getFloat("eps");
  spec.affine = norm.operands.size() > 1;
  if (norm.kind == OpKind::LayerNorm) {
    int64_t width = 1;
    for (int64_t d : norm.getInts("normalized_shape"))
      width *= d;
    spec.width = width;
    spec.rows = input.numel() / width;
    return spec;
  }
  assert((norm.kind == OpKind::GroupNorm || norm.kind == OpKind::InstanceNorm) &&
         "batch_norm is elementwise");
  int64_t N = input.shape[0], C = input.shape[1], L = input.numel() / (N * C);
  int64_t groups = norm.kind == OpKind::GroupNorm ? norm.getInt("groups") : C;
  spec.rows = N * groups;
  spec.width = C / groups * L;
  spec.affineGroups = groups;
  spec.affineDiv = L;
  return spec;
}

RowNormMode chooseRowNorm(const RowNormSpec &s) {
  const ResidentShape r = residentShape(s);
  if (r.per > maxVectorsPerThread(r.vec))
    return RowNormMode::Split;
  // Long rows, few of them: one team each would leave most of the GPU idle.
  const bool fills = s.rows * r.team >= kTargetThreads / 4;
  return fills || s.width <= 4096 ? RowNormMode::Resident : RowNormMode::Split;
}

llvm::Expected<KernelSource> emitRowNorm(const RowNormSpec &s) {
  if (llvm::Error err = check(s))
    return err;
  const std::string &name = s.kernelName;
  const ResidentShape r = residentShape(s);
  if (r.per > maxVectorsPerThread(r.vec))
    return makeError(name + ": rows of " + llvm::Twine(s.width) +
                     " do not fit in the registers of one block; split the statistics");
  const int64_t teams = r.threads / r.team;
  const int64_t blocks = ceilDiv(s.rows, teams);
  if (blocks > kMaxGridX)
    return makeError(name + ": norm over " + llvm::Twine(s.rows) +
                     " rows needs too many blocks for one grid");

  PoolExtent pool;
  if (s.pooled) {
    auto ext = checkPool(*s.pooled, name);
    if (!ext)
      return ext.takeError();
    pool = *ext;
    const int64_t pooled = s.pooled->N * s.pooled->C * pool.outPlane;
    if (pooled != s.rows * s.width)
      return makeError(name + ": norm over " + llvm::Twine(s.rows) + " rows of " +
                       llvm::Twine(s.width) + " reads a pool of " + llvm::Twine(pooled) +
                       " elements");
  }

  PrologueWriter w(name, "row_norm.cuh");
  affineConstants(w, s);
  w.constant("kTeam", r.team);
  w.constant("kThreads", r.threads);
  w.constant("kVec", r.vec);
  w.constant("kPer", r.per);
  w.constantFloat("kEps", s.eps);
  w.constantBool("kPooled", s.pooled.has_value());
  writeElement(w, s.pooled);
  w.flatFunctor("Load", s.load);
  w.flatFunctor("Post", s.post);

  KernelSource ks;
  ks.name = name;
  ks.templateName = "row_norm.cuh";
  ks.source = w.finish();
  ks.launch.grid = {unsigned(blocks), 1, 1};
  ks.launch.block = {unsigned(r.threads), 1, 1};
  ks.tileConfig = std::to_string(r.team) + "-thread team per row of " + std::to_string(s.width) +
                  (s.pooled ? pooledNote(*s.pooled, pool) : std::string()) + ", " +
                  std::to_string(r.per) + (r.vec == 4 ? " float4" : " floats") +
                  " a thread in registers";
  const double numel = double(s.rows) * double(s.width);
  ks.flops = numel * 8;
  ks.bytes = numel * 8 + affineBytes(s);
  if (s.pooled) {
    // The pool's input is read instead of its result.
    ks.flops += numel * double(pool.window);
    ks.bytes = numel * 4 + double(s.pooled->N * s.pooled->C * pool.inPlane) * 4 + affineBytes(s);
  }
  return ks;
}

llvm::Expected<KernelSource> emitRowApply(const RowNormSpec &s) {
  if (llvm::Error err = check(s))
    return err;
  const std::string &name = s.kernelName;
  if (s.pooled)
    return makeError(name + ": a norm that computes its pooled input must hold its rows in "
                            "registers (row_norm.cuh)");
  constexpr int64_t threads = 256, vectorsPerThread = 4;
  const int64_t vec = s.width % 4 == 0 ? 4 : 1;
  const int64_t chunk = threads * vec * vectorsPerThread;
  const int64_t chunks = ceilDiv(s.width, chunk);
  if (s.rows * chunks > kMaxGridX)
    return makeError(name + ": norm over " + llvm::Twine(s.rows) + " rows of " +
                     llvm::Twine(s.width) + " needs too many blocks for one grid");

  PrologueWriter w(name, "row_apply.cuh");
  affineConstants(w, s);
  w.constant("kChunks", chunks);
  w.constant("kChunk", chunk);
  w.constant("kThreads", threads);
  w.constant("kVec", vec);
  // eps stays a double: the moments are finished in double.
  w.code("namespace cfg { constexpr double kEps = " + formatDouble(s.eps) + "; }");
  w.flatFunctor("Load", s.load);
  w.flatFunctor("Post", s.post);

  KernelSource ks;
  ks.name = name;
  ks.templateName = "row_apply.cuh";
  ks.source = w.finish();
  ks.launch.grid = {unsigned(s.rows * chunks), 1, 1};
  ks.launch.block = {unsigned(threads), 1, 1};
  ks.tileConfig = "rows of " + std::to_string(s.width) + " in " + std::to_string(chunks) +
                  " blocks of " + std::to_string(chunk) + (vec == 4 ? ", 16-byte accesses" : "");
  const double numel = double(s.rows) * double(s.width);
  ks.flops = numel * 4;
  ks.bytes = numel * 8 + 16.0 * double(s.rows) + affineBytes(s);
  ks.workspace.push_back({kChannelStatsSlot, 16 * s.rows, WorkspaceNeed::Init::Zero,
                          "per-row sum and sum of squares (double), from channel_stats"});
  return ks;
}

} // namespace sinter
