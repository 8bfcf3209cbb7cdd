// Frozen global numpy arrays (cuda.const.array_like, or a global array read
// by a kernel): numba puts them in constant memory. The bytes become an
// `internal addrspace(4) constant` global of the module (shared by every use
// of the same array), and the value is the view struct as a constant
// expression: the data pointer cast to the generic address space, the shape
// and the C-order strides. A global device array captured by pointer is the
// view of its address, shape and strides, with no bytes of its own.
#include <functional>

#include "codegen/emitter.h"

namespace cj::codegen {
namespace {

constexpr size_t kConstantMemoryBytes = 64 * 1024;   // per module (PTX .const bank 0)

std::string bytesLiteral(const std::string& bytes) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out = "c\"";
  out.reserve(bytes.size() * 3 + 3);
  for (unsigned char b : bytes) {
    out += '\\';
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out + "\"";
}

std::string i64List(const std::vector<int64_t>& v) {
  std::string s = "[" + std::to_string(v.size()) + " x i64] [";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", i64 " : "i64 ") + std::to_string(v[k]);
  return s + "]";
}

// A global device array captured by pointer: its address, shape and strides
// are the view's constants (numba-cuda's capture of device arrays).
std::string deviceArrayView(const ir::Const& c, const Type* t) {
  std::vector<int64_t> shape;
  for (const ir::Const& d : c.elems) shape.push_back(d.i);
  std::string mt = llvmElemType(t);
  std::string data = "inttoptr (i64 " + std::to_string(c.address) + " to " + mt + "*)";
  return "{ " + mt + "* " + data + ", " + i64List(shape) + ", " + i64List(c.strides) + " }";
}

}  // namespace

std::string constArrayView(FunctionEmitter& fe, const ir::Const& c, const Type* t, const ir::Instr& at) {
  if (c.isDeviceArray()) return deviceArrayView(c, t);
  std::vector<int64_t> shape;
  int64_t count = 1;
  for (const ir::Const& d : c.elems) {
    shape.push_back(d.i);
    count *= d.i;
  }
  const int64_t item = arrayItemSize(t);
  if (static_cast<int64_t>(c.s.size()) != count * item)
    fe.fail(at, "constant array", "internal error: the array's bytes do not match its shape");
  if (c.s.size() > kConstantMemoryBytes)
    fe.fail(at, "constant array",
            "a global array of " + std::to_string(c.s.size()) + " bytes does not fit in constant memory (64 KiB)");
  std::string mt = llvmElemType(t);
  size_t n = c.s.empty() ? 1 : c.s.size();
  std::string bytes_type = "[" + std::to_string(n) + " x i8]";
  std::string init = c.s.empty() ? "zeroinitializer" : bytesLiteral(c.s);
  // One global per distinct array (dtype and bytes): a hash names it.
  size_t h = std::hash<std::string>{}(c.s) ^ (std::hash<int64_t>{}(c.i) << 1) ^
             (c.record ? std::hash<std::string>{}(typeToString(c.record)) << 2 : 0);
  char name[48];
  std::snprintf(name, sizeof name, "__cj_const_%016zx", h);
  std::string g = fe.mod().addGlobalOnce(name, "internal addrspace(4) constant " + bytes_type + " " + init + ", align 16");
  std::string data = "addrspacecast (" + mt + " addrspace(4)* bitcast (" + bytes_type + " addrspace(4)* " + g +
                     " to " + mt + " addrspace(4)*) to " + mt + "*)";
  std::vector<int64_t> strides = contiguousStrides(t, shape);
  return "{ " + mt + "* " + data + ", " + i64List(shape) + ", " + i64List(strides) + " }";
}

}  // namespace cj::codegen
