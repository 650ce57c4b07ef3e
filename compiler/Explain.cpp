//===- compiler/Explain.cpp - rendering the fusion plan ------------------------------===//
//
// Text and Graphviz renderings of a PipelineResult (see Explain.h). The text is meant for a
// person reading a terminal: fixed-width columns, sizes in MB / GFLOP and floors in
// microseconds, and the baked shapes of each kernel spelled out once below the table.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/Explain.h"

#include "compiler/Roofline.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>

namespace sinter {
namespace {

llvm::StringRef groupKindName(GroupKind k) {
  switch (k) {
  case GroupKind::Anchor:
    return "anchor";
  case GroupKind::Elementwise:
    return "elementwise";
  case GroupKind::Reduction:
    return "reduction";
  case GroupKind::Softmax:
    return "softmax";
  case GroupKind::Pool:
    return "pool";
  case GroupKind::Norm:
    return "norm";
  case GroupKind::View:
    return "view";
  }
  llvm_unreachable("unknown group kind");
}

llvm::StringRef tailName(TailKind t) {
  switch (t) {
  case TailKind::None:
    return "";
  case TailKind::Norm:
    return "norm tail";
  case TailKind::NormReduce:
    return "norm + reduce tail";
  case TailKind::RowNormReduce:
    return "row norm + reduce tail";
  case TailKind::Reduce:
    return "reduce tail";
  case TailKind::Pool:
    return "pool tail";
  case TailKind::Softmax:
    return "softmax tail";
  case TailKind::ChannelReduce:
    return "channel reduction tail";
  case TailKind::PlaneReduce:
    return "plane reduction tail";
  }
  llvm_unreachable("unknown tail kind");
}

/// A scalar operand as the .sir text would write it: 2, 0.5, 1e-05.
std::string scalarText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// "%y = linear(%x, %w, %b)".
std::string opText(const Graph &g, const Op &op) {
  std::string s = "%" + g.value(op.result).name + " = " + op.name().str() + "(";
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (i)
      s += ", ";
    const Operand &o = op.operands[i];
    s += o.isScalar() ? scalarText(o.scalar) : "%" + g.value(o.value).name;
  }
  return s + ")";
}

std::string dotEscape(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

} // namespace

std::string opShapeSummary(const Graph &graph, const Op &op) {
  std::string s = op.name().str() + " ";
  bool first = true;
  for (const Operand &o : op.operands) {
    if (o.isScalar())
      continue;
    // Only the data operands make the shape; a bias or gamma adds nothing a reader needs.
    if (!first && graph.type(o.value).rank() <= 1)
      continue;
    s += first ? "" : " x ";
    s += graph.type(o.value).str();
    first = false;
  }
  return s + " -> " + graph.type(op.result).str();
}

std::string renderExplain(const PipelineResult &result, const ExplainOptions &options) {
  const Graph &g = result.graph;
  const auto &groups = result.fusion.groups;
  const auto &kernels = result.plan.kernels;
  std::optional<ArchPeaks> peaks = archPeaks(options.arch);
  std::string out;
  llvm::raw_string_ostream os(out);

  os << "graph " << g.name << ": " << g.ops.size() << " ops -> " << groups.size()
     << " fusion groups -> " << kernels.size() << " kernels (arch " << options.arch
     << ", precision " << options.precision << ")\n";
  if (peaks)
    os << llvm::format("roofline: %s, %.0f GB/s DRAM, %.1f TFLOP/s fp32, %.0f TFLOP/s tf32\n",
                       peaks->part.c_str(), peaks->dramBytesPerSecond / 1e9,
                       peaks->fp32FlopsPerSecond / 1e12, peaks->tf32FlopsPerSecond / 1e12);
  else
    os << "roofline: no peak numbers for " << options.arch << " (floors not shown)\n";

  os << "\nfusion groups\n";
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const FusionGroup &grp = groups[gi];
    os << "  group " << gi << ": " << grp.pattern << " (" << groupKindName(grp.kind);
    if (grp.tail != TailKind::None)
      os << ", " << tailName(grp.tail);
    os << ")\n";
    for (int op : grp.ops()) {
      os << "    " << opText(g, g.ops[op]);
      // An imported graph's ops name the model's nodes they came from.
      if (!g.ops[op].origin.empty())
        os << "   # " << g.ops[op].origin;
      os << "\n";
    }
  }

  os << "\nkernels (launch order)\n";
  // Column widths follow the longest entry, so long kernel names and tiles stay aligned.
  size_t wName = 6, wTemplate = 8, wTile = 4;
  for (const PlannedKernel &k : kernels) {
    wName = std::max(wName, k.source.name.size());
    wTemplate = std::max(wTemplate, k.source.templateName.size());
    wTile = std::max(wTile, k.source.tileConfig.size());
  }
  auto row = [&](llvm::StringRef idx, llvm::StringRef group, llvm::StringRef name,
                 llvm::StringRef tmpl, llvm::StringRef tile, llvm::StringRef math,
                 llvm::StringRef mb, llvm::StringRef gflop, llvm::StringRef floorUs,
                 llvm::StringRef bound) {
    os << "  " << llvm::left_justify(idx, 3) << llvm::right_justify(group, 5) << "  "
       << llvm::left_justify(name, wName) << "  " << llvm::left_justify(tmpl, wTemplate) << "  "
       << llvm::left_justify(tile, wTile) << "  " << llvm::left_justify(math, 6)
       << llvm::right_justify(mb, 10) << llvm::right_justify(gflop, 10)
       << llvm::right_justify(floorUs, 10) << "  " << bound;
    os << "\n";
  };
  row("#", "group", "kernel", "template", "tile", "math", "MB moved", "GFLOP", "floor us", "bound");
  double totalBytes = 0, totalFlops = 0, totalFloor = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const PlannedKernel &k = kernels[i];
    totalBytes += k.source.bytes;
    totalFlops += k.source.flops;
    std::string floorText = "-", bound = "";
    if (peaks) {
      RooflineFloor f = rooflineFloor(*peaks, k.math, k.source.flops, k.source.bytes);
      totalFloor += f.seconds;
      floorText = llvm::formatv("{0:f1}", f.seconds * 1e6).str();
      bound = f.memoryBound ? "memory" : "compute";
    }
    row(std::to_string(i), std::to_string(k.group), k.source.name, k.source.templateName,
        k.source.tileConfig, mathModeName(k.math),
        llvm::formatv("{0:f1}", k.source.bytes / 1e6).str(),
        llvm::formatv("{0:f2}", k.source.flops / 1e9).str(), floorText, bound);
  }
  os << llvm::format("  total: %zu kernels, %.1f MB moved, %.2f GFLOP", kernels.size(),
                     totalBytes / 1e6, totalFlops / 1e9);
  if (peaks)
    os << llvm::format(", floor %.1f us on %s", totalFloor * 1e6, peaks->part.c_str());
  os << "\n";

  os << "\nbaked shapes and launches\n";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const PlannedKernel &k = kernels[i];
    const FusionGroup &grp = groups[k.group];
    os << "  " << i << " " << k.source.name << " [" << k.role
       << "]: " << opShapeSummary(g, g.ops[grp.root]);
    if (grp.norm >= 0)
      os << "; " << opShapeSummary(g, g.ops[grp.norm]);
    if (grp.reduce >= 0)
      os << "; " << opShapeSummary(g, g.ops[grp.reduce]);
    os << "\n      " << launchText(k.source.launch) << "\n";
    for (const TensorMapSpec &t : k.source.launch.tensorMaps)
      os << "      TMA tensor map " << tensorMapText(t) << "\n";
  }

  if (options.why && !result.plan.engines.empty()) {
    os << "\nengines (--why)\n";
    for (const EngineChoice &e : result.plan.engines) {
      const Op &op = g.ops[result.fusion.groups[e.group].root];
      os << "  group " << e.group << ", %" << g.value(op.result).name << " = " << op.name() << ": "
         << e.why << "\n";
    }
  }
  if (options.why) {
    os << "\npatterns tried and rejected (--why)\n";
    if (result.fusion.rejections.empty())
      os << "  none: the first pattern tried at every anchor applied\n";
    for (const FusionRejection &r : result.fusion.rejections) {
      const Op &op = g.ops[r.op];
      os << "  at %" << g.value(op.result).name << " = " << op.name() << ": " << r.pattern
         << " did not apply: " << r.reason << "\n";
    }
  }
  return out;
}

std::string renderDot(const PipelineResult &result) {
  const Graph &g = result.graph;
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "digraph \"" << dotEscape(g.name) << "\" {\n  rankdir=TB;\n  node [shape=box];\n";
  for (ValueId a : g.args) {
    const Value &v = g.value(a);
    os << "  \"v" << a << "\" [label=\"%" << dotEscape(v.name) << "\\n"
       << v.type.str() << "\", shape=ellipse"
       << (v.kind == ValueKind::Param ? ", style=dashed" : "") << "];\n";
  }
  for (size_t gi = 0; gi < result.fusion.groups.size(); ++gi) {
    const FusionGroup &grp = result.fusion.groups[gi];
    os << "  subgraph cluster_" << gi << " {\n    label=\"group " << gi << ": "
       << dotEscape(grp.pattern) << "\";\n    style=rounded;\n";
    for (int op : grp.ops()) {
      const Op &o = g.ops[op];
      os << "    \"op" << op << "\" [label=\"%" << dotEscape(g.value(o.result).name) << " = "
         << o.name() << "\\n"
         << g.type(o.result).str() << "\"];\n";
    }
    os << "  }\n";
  }
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (const Operand &o : g.ops[i].operands) {
      if (o.isScalar())
        continue;
      const Value &v = g.value(o.value);
      if (v.isArgument())
        os << "  \"v" << o.value << "\" -> \"op" << i << "\";\n";
      else
        os << "  \"op" << v.def << "\" -> \"op" << i << "\";\n";
    }
  for (ValueId r : g.results) {
    os << "  \"out" << r << "\" [label=\"return %" << dotEscape(g.value(r).name)
       << "\", shape=ellipse];\n";
    const Value &v = g.value(r);
    os << "  \"" << (v.isArgument() ? "v" + std::to_string(r) : "op" + std::to_string(v.def))
       << "\" -> \"out" << r << "\";\n";
  }
  os << "}\n";
  return out;
}

} // namespace sinter
