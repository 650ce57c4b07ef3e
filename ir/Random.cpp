//===- ir/Random.cpp - deterministic random bindings for a graph ---------------------===//
//
// The generator is splitmix64, written out here so the numbers do not depend on the C++
// library's distributions (which differ between implementations); normals come from
// Box-Muller.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Random.h"

#include <cmath>

namespace sinter {
namespace {

class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t state;
};

/// FNV-1a of the name, mixed with the seed: one independent stream per argument.
uint64_t streamSeed(uint64_t seed, llvm::StringRef name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name)
    h = (h ^ uint8_t(c)) * 0x100000001b3ULL;
  return h ^ (seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
}

/// How an argument's values are drawn.
struct Distribution {
  bool normal = false; ///< N(0, 1) when true, else U(lo, hi)
  double lo = -1, hi = 1;
};

Distribution uniform(double lo, double hi) { return {false, lo, hi}; }

/// 1/sqrt(fan_in) for the weight of a conv, conv_transpose, linear or matmul, computed as
/// PyTorch's init does (from dims 1.. of the weight for convolutions).
double weightBound(const Graph &g, const Op &op) {
  const TensorType &w = g.type(op.operands[1].value);
  int64_t fanIn = 1;
  if (op.kind == OpKind::Matmul)
    fanIn = w.rank() >= 2 ? w.shape[w.rank() - 2] : w.shape[0];
  else
    for (unsigned d = 1; d < w.rank(); ++d)
      fanIn *= w.shape[d];
  return 1.0 / std::sqrt(double(std::max<int64_t>(fanIn, 1)));
}

/// The distribution for argument `id`, from the first op that reads it.
Distribution distributionFor(const Graph &g, ValueId id) {
  bool isParam = g.value(id).kind == ValueKind::Param;
  for (const Op &op : g.ops) {
    for (unsigned i = 0; i < op.operands.size(); ++i) {
      if (op.operands[i].isScalar() || op.operands[i].value != id)
        continue;
      OpKind k = op.kind;
      bool anchor = k == OpKind::Conv || k == OpKind::ConvTranspose || k == OpKind::Linear ||
                    k == OpKind::Matmul;
      if (anchor && i >= 1) {
        double b = weightBound(g, op);
        return uniform(-b, b);
      }
      bool affineNorm =
          k == OpKind::GroupNorm || k == OpKind::LayerNorm || k == OpKind::InstanceNorm;
      if ((affineNorm && i == 1) || (k == OpKind::BatchNorm && (i == 2 || i == 3)))
        return uniform(0.5, 1.5); // gamma, running var
      if ((affineNorm && i == 2) || (k == OpKind::BatchNorm && (i == 1 || i == 4)))
        return uniform(-0.5, 0.5); // beta, running mean
      if (k == OpKind::Log || k == OpKind::Sqrt || k == OpKind::Rsqrt)
        return uniform(0.5, 2.0);
      return isParam ? uniform(-1, 1) : Distribution{true, 0, 1};
    }
  }
  return isParam ? uniform(-1, 1) : Distribution{true, 0, 1};
}

HostTensor draw(const TensorType &type, Distribution dist, uint64_t seed) {
  HostTensor t(type.shape);
  SplitMix64 rng(seed);
  size_t n = t.data.size();
  if (!dist.normal) {
    for (size_t i = 0; i < n; ++i)
      t.data[i] = float(dist.lo + (dist.hi - dist.lo) * rng.uniform());
    return t;
  }
  for (size_t i = 0; i < n; i += 2) {
    double u1 = 1.0 - rng.uniform(), u2 = rng.uniform(); // u1 in (0, 1]
    double r = std::sqrt(-2.0 * std::log(u1)), phi = 2 * M_PI * u2;
    t.data[i] = float(r * std::cos(phi));
    if (i + 1 < n)
      t.data[i + 1] = float(r * std::sin(phi));
  }
  return t;
}

TensorMap bindings(const Graph &g, uint64_t seed, int which) {
  TensorMap out;
  for (ValueId id : g.args) {
    const Value &v = g.value(id);
    bool isParam = v.kind == ValueKind::Param;
    if (which >= 0 && isParam != bool(which))
      continue;
    out.emplace(v.name, draw(v.type, distributionFor(g, id), streamSeed(seed, v.name)));
  }
  return out;
}

} // namespace

TensorMap randomBindings(const Graph &g, uint64_t seed) { return bindings(g, seed, -1); }

TensorMap randomBindings(const Graph &g, uint64_t seed, bool params) {
  return bindings(g, seed, params ? 1 : 0);
}

} // namespace sinter
