#include "mathdx/tensor.h"

#include "mathdx/code.h"
#include "mathdx/enums.h"
#include "mathdx/library.h"
#include "mathdx/matmul.h"
#include "mathdx/status.h"
#include "support/error.h"

namespace cj::mathdx {
namespace {

// cublasdxTensorType, by the name nvmath's layouts give it.
const struct {
  const char* name;
  int value;
} kTensorTypes[] = {
    {"smem_a", 0}, {"smem_b", 1}, {"smem_c", 2}, {"suggested_smem_a", 3}, {"suggested_smem_b", 4},
    {"suggested_smem_c", 5}, {"suggested_rmem_c", 6}, {"gmem_a", 7}, {"gmem_b", 8}, {"gmem_c", 9},
    {"suggested_accumulator_c", 10}, {"rmem_c", 11}, {"accumulator_c", 12},
};

// cublasdxDeviceFunctionType.
const struct {
  const char* name;
  int value;
} kFunctions[] = {
    {"execute", 0}, {"copy", 1}, {"copy_wait", 2}, {"clear", 3}, {"axpby", 4},
    {"map_idx2crd_partitioner", 6}, {"is_thread_active", 8}, {"is_predicated", 9}, {"is_index_in_bounds", 10},
    {"create", 11},
};

// cublasdxTensorTrait, cublasdxDeviceFunctionTrait, cublasdxDeviceFunctionOption.
enum : int { kTraitStorageBytes = 0, kTraitAlignmentBytes = 1, kTraitUid = 2, kTraitLogicalSize = 5 };
constexpr int kFunctionTraitSymbol = 1;
constexpr int kOptionCopyAlignment = 1;

template <class Table>
int lookup(const Table& table, const std::string& name, const char* what) {
  std::string names;
  for (const auto& row : table) {
    if (name == row.name) return row.value;
    names += std::string(names.empty() ? "" : ", ") + row.name;
  }
  throw CompileError("", 0, 0, "mathdx.tensor", std::string("unknown ") + what + " '" + name + "' (one of " + names + ")");
}

struct TensorHandle {
  const Api& a;
  long long h = 0;
  ~TensorHandle() {
    if (h) a.cublasdxDestroyTensor(h);
  }
};

}  // namespace

const std::vector<std::string>& tensorTypeNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& row : kTensorTypes) out.push_back(row.name);
    return out;
  }();
  return names;
}

TensorFunctionResult compileTensorFunction(const TensorFunctionSpec& in) {
  const Api& a = api();
  TensorFunctionSpec spec = in;
  spec.matmul.api = "tensors";
  const std::string key = spec.toString();
  std::vector<Operator> ops = matmulOperators(spec.matmul);
  const bool code = spec.function != "traits";
  const int function = code ? lookup(kFunctions, spec.function, "device function") : -1;

  Handle desc{a.cublasdxDestroyDescriptor};
  check(a, a.cublasdxCreateDescriptor(&desc.h), "cublasdxCreateDescriptor", key);
  setOperators(a, desc.h, ops, {"cublasdx", a.cublasdxSetOperatorInt64, a.cublasdxSetOperatorInt64s}, key);

  // The tensors (a "like" tensor from its source), finalized together.
  std::vector<std::unique_ptr<TensorHandle>> owned;
  std::vector<long long> tensors;
  for (const TensorRef& t : spec.tensors) {
    auto made = std::make_unique<TensorHandle>(TensorHandle{a});
    check(a, a.cublasdxCreateTensor(desc.h, lookup(kTensorTypes, t.type, "tensor type"), &made->h),
          "cublasdxCreateTensor(" + t.type + ")", key);
    if (!t.like.empty()) {
      const ValueType* vt = findValueType(t.like);
      if (!vt) throw CompileError("", 0, 0, "mathdx.tensor", "unknown value type '" + t.like + "'");
      auto like = std::make_unique<TensorHandle>(TensorHandle{a});
      check(a, a.cublasdxMakeTensorLike(made->h, vt->value, &like->h), "cublasdxMakeTensorLike(" + t.like + ")", key);
      owned.push_back(std::move(made));
      made = std::move(like);
    }
    tensors.push_back(made->h);
    owned.push_back(std::move(made));
  }
  if (!tensors.empty())
    check(a, a.cublasdxFinalizeTensors(tensors.size(), tensors.data()), "cublasdxFinalizeTensors", key);

  TensorFunctionResult r;
  r.spec = key;
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    TensorTraits t;
    const struct {
      int trait;
      const char* name;
      int64_t* field;
    } traits[] = {{kTraitUid, "UID", &t.uid},
                  {kTraitStorageBytes, "STORAGE_BYTES", &t.storage_bytes},
                  {kTraitAlignmentBytes, "ALIGNMENT_BYTES", &t.alignment},
                  {kTraitLogicalSize, "LOGICAL_SIZE", &t.logical_size}};
    for (const auto& q : traits) {
      long long v = 0;
      check(a, a.cublasdxGetTensorTraitInt64(tensors[i], q.trait, &v),
            std::string("cublasdxGetTensorTraitInt64(") + spec.tensors[i].type + ", " + q.name + ")", key);
      *q.field = v;
    }
    r.tensors.push_back(t);
  }
  if (!code) return r;

  Handle fn{a.cublasdxDestroyDeviceFunction};
  check(a, a.cublasdxCreateDeviceFunction(desc.h, function, tensors.size(), tensors.data(), &fn.h),
        "cublasdxCreateDeviceFunction(" + spec.function + ")", key);
  if (spec.alignment > 0)
    check(a, a.cublasdxSetDeviceFunctionOptionInt64(fn.h, kOptionCopyAlignment, spec.alignment),
          "cublasdxSetDeviceFunctionOptionInt64(COPY_ALIGNMENT)", key);
  r.symbol = traitString(a, fn.h, kFunctionTraitSymbol, a.cublasdxGetDeviceFunctionTraitStrSize,
                         a.cublasdxGetDeviceFunctionTraitStr, "cublasdxGetDeviceFunctionTraitStr(SYMBOL)", key);
  const long long functions[1] = {fn.h};
  r.ltoir = finalizeLtoir(a, spec.matmul.sm,
                          [&](long long c) { return a.cublasdxFinalizeDeviceFunctions(c, 1, functions); },
                          "cublasdxFinalizeDeviceFunctions", key);
  return r;
}

}  // namespace cj::mathdx
