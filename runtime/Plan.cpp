//===- runtime/Plan.cpp - checking a plan before it is run ---------------------------===//
//
// A plan from the compiler is well formed by construction, but one read back from a bundle's
// manifest is input like any other file: every index is checked here once, so that run() can
// index freely.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/Plan.h"

#include "ir/Error.h"

namespace sinter {

llvm::Error validatePlan(const ExecutablePlan &plan) {
  int nb = int(plan.buffers.size()), nk = int(plan.kernels.size());
  for (const KernelSpec &k : plan.kernels) {
    if (k.launch.tensorMaps.size() > size_t(kMaxTensorMaps))
      return makeError("plan: kernel '" + k.name + "' has " +
                       std::to_string(k.launch.tensorMaps.size()) + " tensor maps, at most " +
                       std::to_string(kMaxTensorMaps));
    // An SM holds at most 32 blocks (sm_90); the runtime multiplies the SM count by this.
    if (k.launch.persistentPerSm < 1 || k.launch.persistentPerSm > 32)
      return makeError("plan: kernel '" + k.name + "' asks for " +
                       std::to_string(k.launch.persistentPerSm) +
                       " persistent blocks per SM (1 to 32)");
    for (const TensorMapSpec &t : k.launch.tensorMaps)
      if (t.rank < 1 || t.rank > 5)
        return makeError("plan: kernel '" + k.name + "' has a tensor map of rank " +
                         std::to_string(t.rank) + " (1 to 5)");
  }
  for (int i = 0; i < nb; ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (b.bytes < 0)
      return makeError("plan: buffer '" + b.name + "' has a negative size");
    // Follow the alias chain; more steps than buffers means a cycle.
    int at = i;
    for (int hops = 0; plan.buffers[at].aliasOf >= 0; ++hops) {
      int next = plan.buffers[at].aliasOf;
      if (next >= nb)
        return makeError("plan: buffer '" + b.name + "' aliases buffer " + std::to_string(next) +
                         " of " + std::to_string(nb));
      if (hops > nb)
        return makeError("plan: buffer '" + b.name + "' is part of an alias cycle");
      at = next;
    }
    if (plan.buffers[at].bytes < b.bytes)
      return makeError("plan: buffer '" + b.name + "' (" + std::to_string(b.bytes) +
                       " bytes) is a view of the smaller buffer '" + plan.buffers[at].name + "'");
  }
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step &st = plan.steps[s];
    std::string where = "plan: step " + std::to_string(s);
    switch (st.kind) {
    case Step::Kind::Launch:
      if (st.kernel < 0 || st.kernel >= nk)
        return makeError(where + " launches kernel " + std::to_string(st.kernel) + " of " +
                         std::to_string(nk));
      if (st.slots.size() > 16)
        return makeError(where + " ('" + plan.kernels[st.kernel].name + "') has " +
                         std::to_string(st.slots.size()) + " slots, at most 16");
      for (int b : st.slots)
        if (b < -1 || b >= nb)
          return makeError(where + " ('" + plan.kernels[st.kernel].name + "') binds buffer " +
                           std::to_string(b) + " of " + std::to_string(nb));
      for (const TensorMapSpec &t : plan.kernels[st.kernel].launch.tensorMaps)
        if (t.slot < 0 || size_t(t.slot) >= st.slots.size() || st.slots[t.slot] < 0)
          return makeError(where + " ('" + plan.kernels[st.kernel].name +
                           "') has a tensor map over slot " + std::to_string(t.slot) +
                           ", which it does not bind");
      break;
    case Step::Kind::Fill:
      if (st.buffer < 0 || st.buffer >= nb)
        return makeError(where + " fills buffer " + std::to_string(st.buffer) + " of " +
                         std::to_string(nb));
      if (plan.buffers[st.buffer].bytes % 4 != 0)
        return makeError(where + " fills buffer '" + plan.buffers[st.buffer].name + "' of " +
                         std::to_string(plan.buffers[st.buffer].bytes) +
                         " bytes, not a whole number of 32-bit words");
      break;
    }
  }
  return llvm::Error::success();
}

} // namespace sinter
