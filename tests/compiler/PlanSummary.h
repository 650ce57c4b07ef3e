//===- tests/compiler/PlanSummary.h - a compact text form of a fusion plan ---------===//
//
// Golden tests compare this text: one line per fusion group (pattern and ops), then one
// line per launch step (kernel, template, role, and what each used slot is bound to) and per
// fill. It changes exactly when the fusion or the plan changes.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/Pipeline.h"

#include <string>

namespace sinter::test {

inline std::string planSummary(const PipelineResult &r) {
  std::string s;
  for (const FusionGroup &g : r.fusion.groups) {
    s += "group " + g.pattern + ":";
    for (int op : g.ops())
      s += " " + r.graph.ops[op].name().str();
    s += "\n";
  }
  const ExecutablePlan &plan = r.plan.plan;
  for (const Step &step : plan.steps) {
    if (step.kind == Step::Kind::Fill) {
      s += "  fill " + plan.buffers[step.buffer].name + "\n";
      continue;
    }
    const PlannedKernel &k = r.plan.kernels[step.kernel];
    s += "  launch " + k.source.templateName + " (" + k.role + ")";
    for (size_t slot = 0; slot < step.slots.size(); ++slot)
      if (step.slots[slot] >= 0)
        s += " " + std::to_string(slot) + "=" + plan.buffers[step.slots[slot]].name;
    s += "\n";
  }
  return s;
}

} // namespace sinter::test
