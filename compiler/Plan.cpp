//===- compiler/Plan.cpp - buffers, launches and the per-group dispatch ------------===//
#include "compiler/Epilogue.h"
#include "compiler/PlanBuilder.h"

#include "ir/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

namespace sinter {

llvm::StringRef precisionName(Precision p) {
  switch (p) {
  case Precision::Auto:
    return "auto";
  case Precision::Fp32:
    return "fp32";
  case Precision::Tf32:
    return "tf32";
  }
  llvm_unreachable("unknown precision");
}

std::optional<Precision> parsePrecision(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Precision>>(name)
      .Case("auto", Precision::Auto)
      .Case("fp32", Precision::Fp32)
      .Case("tf32", Precision::Tf32)
      .Default(std::nullopt);
}

double referenceTolerance(const PlanResult &plan) {
  for (const PlannedKernel &k : plan.kernels)
    if (k.math == MathMode::Tf32)
      return 2e-3;
  return 1e-5;
}

PlanBuilder::PlanBuilder(const Graph &g, const FusionResult &f, const PlanOptions &o)
    : graph(g), fusion(f), options(o) {
  ExecutablePlan &plan = result_.plan;
  plan.graphName = g.name;
  plan.arch = o.arch;
  plan.precision = precisionName(o.precision).str();
  for (ValueId a : g.args) {
    const Value &v = g.values[a];
    BufferSpec b;
    b.name = v.name;
    b.kind = v.kind == ValueKind::Param ? BufferSpec::Kind::Param : BufferSpec::Kind::Input;
    b.type = v.type;
    b.bytes = v.type.bytes();
    buffers_[a] = int(plan.buffers.size());
    plan.buffers.push_back(std::move(b));
  }
  for (ValueId r : g.results) {
    if (buffers_.count(r))
      continue; // an argument returned as is, or a value returned twice: run() rejects it
    const Value &v = g.values[r];
    BufferSpec b;
    b.name = v.name;
    b.kind = BufferSpec::Kind::Output;
    b.type = v.type;
    b.bytes = v.type.bytes();
    buffers_[r] = int(plan.buffers.size());
    plan.buffers.push_back(std::move(b));
  }
  // A returned view of a computed value: the value is written straight into the result's
  // buffer (its own buffer is a view of it), so the returned view costs no copy. Not when
  // the value is returned itself, or another returned view took it first.
  for (ValueId r : g.results) {
    ValueId source = r;
    while (const Op *def = g.defOp(source)) {
      if (def->info().fusionClass != FusionClass::View)
        break;
      source = def->operands[0].value;
    }
    if (source == r || g.values[source].isArgument() || buffers_.count(source))
      continue;
    alias(source, buffers_[r]);
  }
}

int PlanBuilder::resolve(int buffer) const {
  while (result_.plan.buffers[buffer].aliasOf >= 0)
    buffer = result_.plan.buffers[buffer].aliasOf;
  return buffer;
}

int PlanBuilder::bufferOf(ValueId value) {
  auto it = buffers_.find(value);
  if (it != buffers_.end())
    return it->second;
  const Value &v = graph.values[value];
  int index = workspace(v.name, v.type.bytes());
  result_.plan.buffers[index].type = v.type;
  buffers_[value] = index;
  return index;
}

int PlanBuilder::alias(ValueId value, int target) {
  const Value &v = graph.values[value];
  BufferSpec b;
  b.name = v.name;
  b.kind = BufferSpec::Kind::Workspace;
  b.type = v.type;
  b.bytes = v.type.bytes();
  b.aliasOf = target;
  result_.plan.buffers.push_back(std::move(b));
  buffers_[value] = int(result_.plan.buffers.size()) - 1;
  return buffers_[value];
}

int PlanBuilder::workspace(const std::string &name, int64_t bytes) {
  BufferSpec b;
  b.name = name;
  b.kind = BufferSpec::Kind::Workspace;
  b.type = TensorType(DType::F32, {(bytes + 3) / 4});
  b.bytes = bytes;
  result_.plan.buffers.push_back(std::move(b));
  return int(result_.plan.buffers.size()) - 1;
}

void PlanBuilder::fill(int buffer, uint32_t word) {
  Step s;
  s.kind = Step::Kind::Fill;
  s.buffer = buffer;
  s.fillWord = word;
  result_.plan.steps.push_back(std::move(s));
}

double PlanBuilder::chainSideBytes(int group, const std::map<int, int> &slots) const {
  // The emitters count their anchor's operands and outputs; what the fused elementwise chains
  // read besides (a residual input, a gate, per-channel params) is bound at the chain slots
  // (kFirstChainSlot on) and read once per output element of the kernel, so its whole tensor
  // crosses DRAM once (a tensor the kernel also reads as its own operand, below them, is
  // counted there).
  const FusionGroup &grp = fusion.groups[group];
  llvm::SmallVector<int, 32> chains;
  for (const auto *chain : {&grp.epilogue, &grp.normEpilogue, &grp.reduceEpilogue,
                            &grp.softmaxEpilogue, &grp.poolEpilogue})
    chains.append(chain->begin(), chain->end());
  const llvm::SmallVector<int, 16> inside = grp.ops();
  llvm::SmallVector<ValueId, 8> counted;
  double bytes = 0;
  for (int op : chains)
    for (const Operand &o : graph.ops[op].operands) {
      if (o.isScalar() || llvm::is_contained(counted, o.value))
        continue;
      const int producer = graph.values[o.value].def;
      if (producer >= 0 && llvm::is_contained(inside, producer))
        continue; // computed in the group
      auto buf = buffers_.find(o.value);
      if (buf == buffers_.end())
        continue;
      bool side = false, own = false; // bound for the chain / as the kernel's own operand
      for (auto [slot, b] : slots)
        if (b == buf->second)
          (slot >= kFirstChainSlot ? side : own) = true;
      if (side && !own) {
        bytes += double(graph.type(o.value).bytes());
        counted.push_back(o.value);
      }
    }
  return bytes;
}

llvm::Error PlanBuilder::launch(llvm::Expected<KernelSource> source, int group,
                                llvm::StringRef role, MathMode math,
                                const std::map<int, int> &slotBuffers) {
  if (!source)
    return withContext(source.takeError(), where(group));
  std::map<int, int> slots = slotBuffers;
  for (const WorkspaceNeed &need : source->workspace) {
    if (slots.count(need.slot))
      continue;
    int buf = workspace(source->name + ".ws" + std::to_string(need.slot), need.bytes);
    switch (need.init) {
    case WorkspaceNeed::Init::None:
      break;
    case WorkspaceNeed::Init::Zero:
      fill(buf, kFillZero);
      break;
    case WorkspaceNeed::Init::PlusInf:
      fill(buf, kFillPlusInf);
      break;
    case WorkspaceNeed::Init::MinusInf:
      fill(buf, kFillMinusInf);
      break;
    }
    slots[need.slot] = buf;
  }
  KernelSpec k;
  k.name = source->name;
  k.templateName = source->templateName;
  k.launch = source->launch;
  k.group = fusion.groups[group].pattern;
  k.flops = source->flops;
  source->bytes += chainSideBytes(group, slots);
  k.bytes = source->bytes;
  Step s;
  s.kind = Step::Kind::Launch;
  s.kernel = int(result_.plan.kernels.size());
  s.slots.assign(16, -1);
  for (auto [slot, buf] : slots) {
    assert(slot >= 0 && slot < 16 && "slot out of range");
    s.slots[slot] = buf;
  }
  result_.plan.kernels.push_back(std::move(k));
  result_.plan.steps.push_back(std::move(s));
  result_.kernels.push_back({std::move(*source), group, role.str(), math});
  return llvm::Error::success();
}

std::string PlanBuilder::kernelName(int group, llvm::StringRef suffix) const {
  auto clean = [](llvm::StringRef s) {
    std::string out;
    for (char c : s)
      out += llvm::isAlnum(c) ? c : '_';
    return out;
  };
  std::string name = clean(graph.name) + "_k" + std::to_string(result_.kernels.size());
  std::string ops;
  for (int op : fusion.groups[group].ops()) {
    std::string n = clean(graph.ops[op].name());
    if (ops.size() + n.size() > 40)
      break;
    ops += "_" + n;
  }
  name += ops;
  if (!suffix.empty())
    name += "_" + suffix.str();
  return name;
}

std::string PlanBuilder::where(int group) const {
  const Op &root = graph.ops[fusion.groups[group].root];
  return graph.locStr(root) + ": " + root.name().str();
}

llvm::Expected<PlanResult> PlanBuilder::run() {
  // Every value must be f32: the templates are written for f32 in memory.
  for (const Value &v : graph.values)
    if (v.type.dtype != DType::F32)
      return makeError("%" + v.name + " is " + dtypeName(v.type.dtype) +
                       ": only f32 graphs can be compiled so far");
  llvm::SmallVector<ValueId, 4> seen;
  for (ValueId r : graph.results) {
    if (graph.values[r].isArgument())
      return makeError("graph returns its argument %" + graph.values[r].name +
                       " unchanged; return a computed value");
    if (llvm::is_contained(seen, r))
      return makeError("graph returns %" + graph.values[r].name + " twice");
    seen.push_back(r);
  }
  for (int g = 0; g < int(fusion.groups.size()); ++g) {
    llvm::Error err = fusion.groups[g].kind == GroupKind::Anchor ? planAnchorGroup(*this, g)
                                                                 : planStandaloneGroup(*this, g);
    if (err)
      return err;
  }
  return std::move(result_);
}

llvm::Expected<PlanResult> planGraph(const Graph &graph, const FusionResult &fusion,
                                     const PlanOptions &options) {
  PlanBuilder builder(graph, fusion, options);
  return builder.run();
}

} // namespace sinter
