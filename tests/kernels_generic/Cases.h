//===- tests/kernels_generic/Cases.h - the generic kernels' test cases --------------===//
//
// One list of specs covering every kernel shape of the generic emitters (each mode, team
// width, split and vector path, odd sizes), shared by the CPU test (every case compiles with
// NVRTC for sm_90a and sm_80) and by generic_device_cases, which writes the cubins and a JSON
// description for the GPU harness gpu_check.py. Each case names its buffers and a PyTorch
// float64 reference expression over them (`in<slot>`; `F` is torch.nn.functional).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace sinter::testing {

struct CaseBuffer {
  int slot = 0;
  llvm::SmallVector<int64_t, 6> shape;
  std::string dtype = "f32"; ///< f32, f64, or u8 (raw workspace bytes)
  /// randn, rand (uniform [0, 1)), randn_nan (randn with a few NaN), out (NaN-poisoned before
  /// every run, compared with the reference), zero_once (zeroed before the first run only),
  /// zero_each (zeroed before every run, compared with the reference).
  std::string init = "randn";
  double scale = 1.0; ///< random inputs are multiplied by this
};

struct GenericCase {
  std::string name;
  KernelSource kernel;
  std::vector<CaseBuffer> buffers;
  std::string reference;   ///< Python expression, float64
  double tolerance = 1e-5; ///< relative L2 error allowed
  std::string bench;       ///< optional PyTorch fp32 expression over `t<slot>` to time against
};

/// Every case, emitted. Fails on the first spec an emitter rejects.
llvm::Expected<std::vector<GenericCase>> genericCases();

} // namespace sinter::testing
