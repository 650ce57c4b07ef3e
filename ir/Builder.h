//===- ir/Builder.h - the C++ API for building graphs ------------------------------===//
//
// GraphBuilder writes a Graph op by op with one typed method per op of the catalog
// (../shared/design/IR.md), and build() verifies it exactly as the parser does:
//
//   GraphBuilder b("convt3d_relu_gn");
//   Val x = b.input("x", {16, 64, 32, 32, 32});        // f32 unless a DType is given
//   Val w = b.param("w", {64, 128, 3, 3, 3});
//   Val gamma = b.param("gamma", {128}), beta = b.param("beta", {128});
//   Val y = b.conv_transpose(x, w, {.stride = {1}, .padding = {0}, .groups = 1});
//   Val o = b.group_norm(b.relu(y), gamma, beta, {.groups = 8, .eps = 1e-5}).name("o");
//   b.output(o);
//   llvm::Expected<Graph> g = b.build();
//
// Conventions:
//  - Method and option names are the op and attribute names of the text format, so a graph
//    reads the same in C++ and in .sir (hence snake_case: `b.log_softmax`, `.ceil_mode`).
//  - Options structs are meant for designated initializers (every field has a default member
//    initializer, which also keeps GCC's -Wmissing-field-initializers quiet about them). A
//    per-spatial-dim option takes one value for all dims (`.stride = 2` or `.stride = {2}`,
//    stored as an int) or one per dim (`.stride = {1, 2, 2}`, stored as a list). Options left
//    alone, or set to the op table's default, are not stored, so the printed graph shows only
//    what differs from the defaults (clamp's bounds, when given, are always stored).
//  - Binary ops take a Val or a number on either side; `+ - * /` and unary `-` on Vals
//    build add, sub, mul, div and neg.
//  - Op results are named `t0`, `t1`, ... (skipping names already taken) when build() runs,
//    unless named first with `Val::name("r")`; inputs and params are named when declared.
//  - Mistakes in the graph (bad shapes, attributes, names) are reported by build() as an
//    llvm::Error naming the op, e.g. "%t3: group_norm: groups=7 does not divide C=128".
//    Mixing Vals of different builders, or using a default-constructed Val, is a bug (assert).
//  - Val::type() gives a value's inferred type as soon as the op is added, when it and
//    everything it depends on is valid, so later code can depend on shapes.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace sinter {

class GraphBuilder;

/// A handle to a value of a GraphBuilder: an input, a param or an op result.
class Val {
public:
  Val() = default;

  ValueId id() const { return valueId; }
  /// Names the value (without '%') and returns the same handle.
  Val name(llvm::StringRef newName) const;
  /// The inferred type, when this value and everything it depends on are valid so far.
  std::optional<TensorType> type() const;
  GraphBuilder *builder() const { return owner; }

private:
  friend class GraphBuilder;
  Val(GraphBuilder *owner, ValueId id) : owner(owner), valueId(id) {}

  GraphBuilder *owner = nullptr;
  ValueId valueId = -1;
};

/// A per-spatial-dim option: not given (the table's default), one value for every spatial
/// dim, or one value per spatial dim.
struct Spatial {
  IntList values;
  Spatial() = default;
  Spatial(int64_t value) : values{value} {}
  Spatial(std::initializer_list<int64_t> list) : values(list) {}
  bool given() const { return !values.empty(); }
};

struct ConvOptions {
  Spatial stride{}, padding{}, dilation{};
  int64_t groups = 1;
};

struct ConvTransposeOptions {
  Spatial stride{}, padding{}, output_padding{}, dilation{};
  int64_t groups = 1;
};

enum class GeluApproximate { None, Tanh };

struct GeluOptions {
  GeluApproximate approximate = GeluApproximate::None;
};
struct HardtanhOptions {
  double min_val = -1.0, max_val = 1.0;
};
struct LeakyReluOptions {
  double negative_slope = 0.01;
};
struct SoftplusOptions {
  double beta = 1.0, threshold = 20.0;
};
struct EluOptions {
  double alpha = 1.0;
};
/// torch.clamp: at least one bound must be given.
struct ClampOptions {
  std::optional<double> min{}, max{};
};

/// sum, mean, max, min, logsumexp: dims is required (negative dims count from the end).
struct ReduceOptions {
  IntList dims{};
  bool keepdim = false;
};

struct GroupNormOptions {
  std::optional<int64_t> groups{}; ///< required
  double eps = 1e-5;
};
struct LayerNormOptions {
  IntList normalized_shape{}; ///< required
  double eps = 1e-5;
};
/// batch_norm and instance_norm.
struct NormOptions {
  double eps = 1e-5;
};

struct MaxPoolOptions {
  Spatial kernel_size{}; ///< required
  Spatial stride{};      ///< defaults to kernel_size
  Spatial padding{}, dilation{};
  bool ceil_mode = false;
};
struct AvgPoolOptions {
  Spatial kernel_size{}; ///< required
  Spatial stride{};      ///< defaults to kernel_size
  Spatial padding{};
  bool ceil_mode = false;
  bool count_include_pad = true;
};

struct FlattenOptions {
  int64_t start_dim = 0, end_dim = -1;
};

/// One operand of a binary op: a value or a number.
struct ValOrNumber {
  std::optional<Val> val;
  double number = 0;
  ValOrNumber(Val v) : val(v) {}
  ValOrNumber(double n) : number(n) {}
};

/// Builds one graph; see the file comment.
class GraphBuilder {
public:
  explicit GraphBuilder(llvm::StringRef graphName);
  GraphBuilder(const GraphBuilder &) = delete;
  GraphBuilder &operator=(const GraphBuilder &) = delete;

  // Graph arguments, in declaration order.
  Val input(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, DType dtype = DType::F32);
  Val param(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, DType dtype = DType::F32);

  // Anchors.
  Val conv(Val x, Val w, const ConvOptions &options = {});
  Val conv(Val x, Val w, Val bias, const ConvOptions &options = {});
  Val conv_transpose(Val x, Val w, const ConvTransposeOptions &options = {});
  Val conv_transpose(Val x, Val w, Val bias, const ConvTransposeOptions &options = {});
  Val linear(Val x, Val w);
  Val linear(Val x, Val w, Val bias);
  Val matmul(Val a, Val b);

  // Unary elementwise ops.
  Val relu(Val x);
  Val sigmoid(Val x);
  Val tanh(Val x);
  Val silu(Val x);
  Val hardswish(Val x);
  Val hardsigmoid(Val x);
  Val mish(Val x);
  Val exp(Val x);
  Val log(Val x);
  Val abs(Val x);
  Val neg(Val x);
  Val sqrt(Val x);
  Val rsqrt(Val x);
  Val erf(Val x);
  Val gelu(Val x, const GeluOptions &options = {});
  Val hardtanh(Val x, const HardtanhOptions &options = {});
  Val leaky_relu(Val x, const LeakyReluOptions &options = {});
  Val softplus(Val x, const SoftplusOptions &options = {});
  Val elu(Val x, const EluOptions &options = {});
  Val clamp(Val x, const ClampOptions &options);

  // Binary elementwise ops with numpy broadcasting; either side may be a number.
  Val add(ValOrNumber a, ValOrNumber b);
  Val sub(ValOrNumber a, ValOrNumber b);
  Val mul(ValOrNumber a, ValOrNumber b);
  Val div(ValOrNumber a, ValOrNumber b);
  Val maximum(ValOrNumber a, ValOrNumber b);
  Val minimum(ValOrNumber a, ValOrNumber b);

  // Reductions (max/min are torch.amax/amin).
  Val sum(Val x, const ReduceOptions &options);
  Val mean(Val x, const ReduceOptions &options);
  Val max(Val x, const ReduceOptions &options);
  Val min(Val x, const ReduceOptions &options);
  Val logsumexp(Val x, const ReduceOptions &options);

  Val softmax(Val x, int64_t dim);
  Val log_softmax(Val x, int64_t dim);

  // Norms; gamma and beta come together or not at all.
  Val group_norm(Val x, const GroupNormOptions &options);
  Val group_norm(Val x, Val gamma, Val beta, const GroupNormOptions &options);
  Val layer_norm(Val x, const LayerNormOptions &options);
  Val layer_norm(Val x, Val gamma, Val beta, const LayerNormOptions &options);
  Val batch_norm(Val x, Val mean, Val var, const NormOptions &options = {});
  Val batch_norm(Val x, Val mean, Val var, Val gamma, Val beta, const NormOptions &options = {});
  Val instance_norm(Val x, const NormOptions &options = {});
  Val instance_norm(Val x, Val gamma, Val beta, const NormOptions &options = {});

  Val max_pool(Val x, const MaxPoolOptions &options);
  Val avg_pool(Val x, const AvgPoolOptions &options);

  Val reshape(Val x, llvm::ArrayRef<int64_t> shape);
  Val flatten(Val x, const FlattenOptions &options = {});
  Val dropout(Val x, double p = 0.5);

  /// Any op of the table with operands and attributes as given (stored as written); the
  /// typed methods above are the usual way in.
  Val op(OpKind kind, llvm::ArrayRef<ValOrNumber> operands, llvm::ArrayRef<Attr> attrs = {});

  /// Adds a returned value; call once per result, in order.
  void output(Val v);

  /// The verified graph with every value typed (the builder stays usable).
  llvm::Expected<Graph> build() const;

private:
  friend class Val;
  Val addArgument(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, DType dtype, ValueKind kind);
  /// Appends an op of `kind` with `operands`; attributes are set on the returned op before
  /// finish() infers its type.
  Op &start(OpKind kind, llvm::ArrayRef<ValOrNumber> operands);
  Val finish();
  /// Sets `name` on `op` unless `value` equals the table's default for it.
  void setUnlessDefault(Op &op, llvm::StringRef name, AttrValue value);
  void setSpatial(Op &op, llvm::StringRef name, const Spatial &value);
  Val unary(OpKind kind, Val x);
  Val binary(OpKind kind, ValOrNumber a, ValOrNumber b);
  Val reduce(OpKind kind, Val x, const ReduceOptions &options);
  void check(Val v) const;

  Graph graph;
  std::vector<bool> named; ///< per value: named by the user (else named by build())
  std::vector<bool> typed; ///< per value: type inferred successfully
};

// Operators on Vals build add, sub, mul, div and neg in the Vals' builder.
Val operator+(Val a, Val b);
Val operator+(Val a, double b);
Val operator+(double a, Val b);
Val operator-(Val a, Val b);
Val operator-(Val a, double b);
Val operator-(double a, Val b);
Val operator*(Val a, Val b);
Val operator*(Val a, double b);
Val operator*(double a, Val b);
Val operator/(Val a, Val b);
Val operator/(Val a, double b);
Val operator/(double a, Val b);
Val operator-(Val x);

} // namespace sinter
