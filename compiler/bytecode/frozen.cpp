#include "bytecode/frozen.h"

#include <cstring>
#include <unordered_set>

#include "bytecode/record_dtype.h"

namespace cj::bytecode {
namespace {

// Modules whose objects kernels may name (and their submodules).
// torch: for its dtypes (torch.float16 in a tile kernel, as cuTile allows).
constexpr const char* kAllowedModules[] = {"math", "cmath", "numpy", "operator", "builtins",
                                           "cudajit", "torch"};

// numba scalar type names (str(numba.float32)) -> numpy scalar type symbols.
constexpr const char* kNumbaScalars[][2] = {
    {"bool", "numpy.bool_"},         {"int8", "numpy.int8"},     {"int16", "numpy.int16"},
    {"int32", "numpy.int32"},        {"int64", "numpy.int64"},   {"uint8", "numpy.uint8"},
    {"uint16", "numpy.uint16"},      {"uint32", "numpy.uint32"}, {"uint64", "numpy.uint64"},
    {"float16", "numpy.float16"},    {"float32", "numpy.float32"},
    {"float64", "numpy.float64"},    {"complex64", "numpy.complex64"},
    {"complex128", "numpy.complex128"},
};

std::string rootOf(const std::string& module) { return module.substr(0, module.find('.')); }

// C-implemented modules answer __module__ with their private name.
std::string normaliseModule(std::string m) {
  if (m == "_operator") return "operator";
  if (m == "numpy.core.multiarray" || m == "numpy._core.multiarray" || m == "numpy._core.umath" ||
      m == "numpy.core.umath")
    return "numpy";
  return m;
}

bool allowedModule(const std::string& module) {
  const std::string root = rootOf(module);
  for (const char* m : kAllowedModules)
    if (root == m) return true;
  return false;
}

// numpy's bool scalar type is `bool` in numpy 2 and `bool_` in numpy 1: one symbol.
std::string symbolName(const std::string& module, const std::string& name) {
  if (module == "numpy" && (name == "bool" || name == "bool_")) return "numpy.bool_";
  return module + "." + name;
}

Frozen constant(ir::Const c) {
  Frozen f;
  f.kind = Frozen::Kind::Const;
  f.value = std::move(c);
  return f;
}

Frozen unsupported(std::string why, std::string hint = {}) {
  Frozen f;
  f.why = std::move(why);
  f.hint = std::move(hint);
  return f;
}

// An enum class (its metaclass is enum's EnumType, EnumMeta before 3.11, or
// derives from it).
bool isEnumClass(PyObject* obj) {
  if (!PyType_Check(obj)) return false;
  for (PyTypeObject* meta = Py_TYPE(obj); meta; meta = meta->tp_base) {
    PyObject* m = reinterpret_cast<PyObject*>(meta);
    std::string name = attrString(m, "__name__");
    if (attrString(m, "__module__") == "enum" && (name == "EnumType" || name == "EnumMeta")) return true;
  }
  return false;
}

bool isSubclassOf(PyObject* obj, PyObject* base) {
  if (!PyType_Check(obj)) return false;
  int r = PyObject_IsSubclass(obj, base);
  if (r < 0) { PyErr_Clear(); return false; }
  return r == 1;
}

// A numpy scalar instance (np.float32(1.5)): its value and its type's symbol.
bool numpyScalar(PyObject* obj, Frozen* out) {
  PyRef name = PyRef::steal(PyUnicode_FromString("numpy"));
  PyRef numpy = PyRef::steal(name ? PyImport_GetModule(name.get()) : nullptr);
  if (!numpy) { PyErr_Clear(); return false; }
  PyRef generic = getAttr(numpy.get(), "generic");
  if (!generic || PyObject_IsInstance(obj, generic.get()) != 1) { PyErr_Clear(); return false; }
  PyRef dtype = getAttr(obj, "dtype");
  std::string kind = dtype ? attrString(dtype.get(), "kind") : "";
  const std::string type_symbol =
      symbolName("numpy", attrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)), "__name__"));
  out->numpy_type = type_symbol;
  if (kind == "b") {
    int t = PyObject_IsTrue(obj);
    if (t < 0) { PyErr_Clear(); return false; }
    out->kind = Frozen::Kind::Const;
    out->value = ir::Const::boolean(t == 1);
    return true;
  }
  if (kind == "i" || kind == "u") {
    PyRef i = PyRef::steal(PyNumber_Index(obj));
    if (!i) { PyErr_Clear(); return false; }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(i.get(), &overflow);
    if (overflow > 0) v = static_cast<long long>(PyLong_AsUnsignedLongLong(i.get()));
    if (PyErr_Occurred()) { PyErr_Clear(); return false; }
    out->kind = Frozen::Kind::Const;
    out->value = ir::Const::integer(v);
    return true;
  }
  if (kind == "f") {
    double v = PyFloat_AsDouble(obj);
    if (PyErr_Occurred()) { PyErr_Clear(); return false; }
    out->kind = Frozen::Kind::Const;
    out->value = ir::Const::real(v);
    return true;
  }
  if (kind == "c") {
    Py_complex v = PyComplex_AsCComplex(obj);
    if (PyErr_Occurred()) { PyErr_Clear(); return false; }
    out->kind = Frozen::Kind::Const;
    out->value = ir::Const::complex(v.real, v.imag);
    return true;
  }
  return false;
}

// A numpy array (a global the kernel reads): numba freezes it as a constant
// array. Its bytes are copied now, in C order; later changes to the global
// do not reach compiled kernels (as numba).
bool numpyArray(PyObject* obj, Frozen* out) {
  PyRef name = PyRef::steal(PyUnicode_FromString("numpy"));
  PyRef numpy = PyRef::steal(name ? PyImport_GetModule(name.get()) : nullptr);
  if (!numpy) { PyErr_Clear(); return false; }
  PyRef ndarray = getAttr(numpy.get(), "ndarray");
  if (!ndarray || PyObject_IsInstance(obj, ndarray.get()) != 1) { PyErr_Clear(); return false; }
  auto fail = [&](std::string why) {
    *out = unsupported("a numpy array " + why,
                       "constant arrays hold bool, int, uint, float and complex numbers or records, 1 or more dimensions");
    return true;
  };
  PyRef dtype = getAttr(obj, "dtype");
  // A structured dtype: an array of records (numba: constant memory too).
  const Type* record = nullptr;
  if (dtype && isStructuredDtype(dtype.get())) {
    std::string why;
    if (!(record = recordFromDtype(dtype.get(), &why))) return fail("of a structured dtype: " + why);
  }
  PyRef native = dtype ? getAttr(dtype.get(), "isnative") : PyRef();
  Scalar dt = Scalar::UInt8;
  if (!record && (!dtype || !numericDtypeScalar(dtype.get(), &dt)))
    return fail("of dtype " + (dtype ? strOf(dtype.get()) : std::string("?")));
  if (!native || PyObject_IsTrue(native.get()) != 1) { PyErr_Clear(); return fail("that is not native-endian"); }
  PyRef shape = getAttr(obj, "shape");
  std::vector<int64_t> dims;
  for (Py_ssize_t k = 0; shape && PyTuple_Check(shape.get()) && k < PyTuple_GET_SIZE(shape.get()); ++k)
    dims.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(shape.get(), k)));
  if (PyErr_Occurred()) { PyErr_Clear(); return fail("with an unreadable shape"); }
  if (dims.empty()) return fail("of 0 dimensions");
  PyRef contiguous = PyRef::steal(PyObject_CallMethod(numpy.get(), "ascontiguousarray", "O", obj));
  PyRef raw = contiguous ? PyRef::steal(PyObject_CallMethod(contiguous.get(), "tobytes", nullptr)) : PyRef();
  if (!raw || !PyBytes_Check(raw.get())) { PyErr_Clear(); return fail("whose bytes cannot be read"); }
  std::string bytes(PyBytes_AS_STRING(raw.get()), static_cast<size_t>(PyBytes_GET_SIZE(raw.get())));
  out->kind = Frozen::Kind::Const;
  out->value = record ? ir::Const::recordArray(record, dims, std::move(bytes)) : ir::Const::array(dt, dims, std::move(bytes));
  return true;
}

// A global device array (anything with __cuda_array_interface__: cudajit's
// DeviceNDArray, CuPy, PyTorch): numba-cuda captures it by pointer, so a
// kernel sees later writes to its memory. The object is kept alive for the
// process (the kernel holds its address; numba keeps it with the kernel's
// code library).
bool deviceArray(PyObject* obj, Frozen* out) {
  if (PyType_Check(obj)) return false;
  PyRef cai = getAttr(obj, "__cuda_array_interface__");
  if (!cai) { PyErr_Clear(); return false; }
  auto fail = [&](std::string why) {
    *out = unsupported("the device array " + why, "global device arrays are captured by pointer (numba-cuda's rule)");
    return true;
  };
  if (!PyDict_Check(cai.get())) return fail("whose __cuda_array_interface__ is not a dict");
  PyObject* data = PyDict_GetItemString(cai.get(), "data");
  PyObject* shape = PyDict_GetItemString(cai.get(), "shape");
  PyObject* typestr = PyDict_GetItemString(cai.get(), "typestr");
  PyObject* strides = PyDict_GetItemString(cai.get(), "strides");
  PyObject* descr = PyDict_GetItemString(cai.get(), "descr");
  PyObject* mask = PyDict_GetItemString(cai.get(), "mask");
  if (!data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2 || !shape || !PyTuple_Check(shape) || !typestr)
    return fail("with an incomplete __cuda_array_interface__ (data, shape, typestr)");
  if (mask && mask != Py_None) return fail("with a mask");
  const unsigned long long address = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
  const bool readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == 1;
  if (PyErr_Occurred()) { PyErr_Clear(); return fail("with an unreadable data pointer"); }
  std::vector<int64_t> dims;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(shape); ++k) dims.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(shape, k)));
  if (PyErr_Occurred()) { PyErr_Clear(); return fail("with an unreadable shape"); }
  if (dims.empty()) return fail("of 0 dimensions");
  // The dtype: the object's own numpy dtype where it has one (cudajit's and
  // CuPy's arrays), else from the typestr, or the descr for records (its
  // unnamed entries are padding: the named fields keep their offsets).
  PyRef name = PyRef::steal(PyUnicode_FromString("numpy"));
  PyRef numpy = PyRef::steal(name ? PyImport_Import(name.get()) : nullptr);
  PyRef dtype;
  if (numpy) {
    PyRef own = getAttr(obj, "dtype");
    PyRef dtype_class = getAttr(numpy.get(), "dtype");
    if (own && dtype_class && PyObject_IsInstance(own.get(), dtype_class.get()) == 1) dtype = own;
    PyErr_Clear();
  }
  const bool records = PyUnicode_Check(typestr) && PyUnicode_GET_LENGTH(typestr) > 1 &&
                       PyUnicode_ReadChar(typestr, 1) == 'V' && descr && PyList_Check(descr);
  if (!dtype && numpy && records) {
    PyRef names = PyRef::steal(PyList_New(0)), formats = PyRef::steal(PyList_New(0)),
          offsets = PyRef::steal(PyList_New(0));
    long long offset = 0;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(descr); ++k) {
      PyObject* entry = PyList_GET_ITEM(descr, k);
      if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 2) break;
      PyRef field = PyRef::steal(PyObject_CallMethod(numpy.get(), "dtype", "O", PyTuple_GET_ITEM(entry, 1)));
      if (!field) break;
      if (PyTuple_GET_SIZE(entry) == 3) field = PyRef::steal(PyObject_CallMethod(numpy.get(), "dtype", "((OO))",
                                                                                PyTuple_GET_ITEM(entry, 1),
                                                                                PyTuple_GET_ITEM(entry, 2)));
      if (!field) break;
      PyObject* fname = PyTuple_GET_ITEM(entry, 0);
      if (PyUnicode_Check(fname) && PyUnicode_GET_LENGTH(fname) > 0) {
        PyList_Append(names.get(), fname);
        PyList_Append(formats.get(), field.get());
        PyRef off = PyRef::steal(PyLong_FromLongLong(offset));
        PyList_Append(offsets.get(), off.get());
      }
      PyRef size = getAttr(field.get(), "itemsize");
      offset += size ? PyLong_AsLongLong(size.get()) : 0;
    }
    PyRef spec = PyRef::steal(Py_BuildValue("{s:O,s:O,s:O,s:L}", "names", names.get(), "formats", formats.get(),
                                            "offsets", offsets.get(), "itemsize", offset));
    // aligned where its offsets allow (word loads), else packed
    if (!PyErr_Occurred() && spec) dtype = PyRef::steal(PyObject_CallMethod(numpy.get(), "dtype", "OO", spec.get(), Py_True));
    if (!dtype && spec) {
      PyErr_Clear();
      dtype = PyRef::steal(PyObject_CallMethod(numpy.get(), "dtype", "O", spec.get()));
    }
  }
  if (!dtype && numpy && !PyErr_Occurred()) dtype = PyRef::steal(PyObject_CallMethod(numpy.get(), "dtype", "O", typestr));
  if (!dtype) { PyErr_Clear(); return fail("of an unknown dtype " + strOf(typestr)); }
  const Type* record = nullptr;
  Scalar dt = Scalar::UInt8;
  int64_t itemsize = 0;
  if (isStructuredDtype(dtype.get())) {
    std::string why;
    if (!(record = recordFromDtype(dtype.get(), &why))) return fail("of a structured dtype: " + why);
    itemsize = record->size;
  } else {
    if (!numericDtypeScalar(dtype.get(), &dt)) return fail("of dtype " + strOf(dtype.get()));
    PyRef native = getAttr(dtype.get(), "isnative");
    if (!native || PyObject_IsTrue(native.get()) != 1) { PyErr_Clear(); return fail("that is not native-endian"); }
    itemsize = scalarByteSize(dt);
  }
  std::vector<int64_t> steps(dims.size());
  if (strides && strides != Py_None) {
    if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != static_cast<Py_ssize_t>(dims.size()))
      return fail("whose strides do not match its shape");
    for (size_t k = 0; k < dims.size(); ++k) steps[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, static_cast<Py_ssize_t>(k)));
    if (PyErr_Occurred()) { PyErr_Clear(); return fail("with unreadable strides"); }
  } else {
    int64_t step = itemsize;
    for (size_t k = dims.size(); k-- > 0;) {
      steps[k] = step;
      step *= dims[k];
    }
  }
  for (int64_t d : dims)
    if (d < 0) return fail("with a negative dimension");
  if (address == 0) return fail("with a null data pointer (an empty array)");
  static auto* kept = new std::unordered_set<PyObject*>;   // never freed: kernels hold the addresses
  if (kept->insert(obj).second) Py_INCREF(obj);
  out->kind = Frozen::Kind::Const;
  out->value = ir::Const::deviceArray(dt, record, dims, steps, address, !readonly);
  return true;
}

}  // namespace

bool isCudajitSymbol(const ir::Const& c) {
  return c.kind == ir::Const::Kind::Symbol &&
         (c.s == "cudajit" || c.s.rfind("cudajit.", 0) == 0);
}

Frozen classifyConstant(PyObject* obj) {
  if (obj == Py_None) return constant(ir::Const::none());
  if (PyBool_Check(obj)) return constant(ir::Const::boolean(obj == Py_True));
  if (PyLong_Check(obj)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow > 0) {
      // uint64 values above INT64_MAX are kept bit-cast (the Const contract).
      unsigned long long u = PyLong_AsUnsignedLongLong(obj);
      if (PyErr_Occurred()) {
        PyErr_Clear();
        return unsupported("an integer that does not fit in 64 bits");
      }
      // numba types ints above INT64_MAX as uint64: the decoder emits
      // `call sym(numpy.uint64), const <bit pattern>` for them.
      Frozen f = constant(ir::Const::integer(static_cast<long long>(u)));
      f.numpy_type = "numpy.uint64";
      return f;
    } else if (overflow < 0) {
      return unsupported("an integer that does not fit in 64 bits");
    }
    return constant(ir::Const::integer(v));
  }
  if (PyFloat_Check(obj)) return constant(ir::Const::real(PyFloat_AS_DOUBLE(obj)));
  if (PyComplex_Check(obj))
    return constant(ir::Const::complex(PyComplex_RealAsDouble(obj), PyComplex_ImagAsDouble(obj)));
  if (PyUnicode_Check(obj)) {
    std::string s;
    if (!toString(obj, &s)) return unsupported("a string that is not valid UTF-8");
    return constant(ir::Const::str(std::move(s)));
  }
  if (PyTuple_Check(obj)) {
    std::vector<ir::Const> elems;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); ++i) {
      Frozen e = classifyObject(PyTuple_GET_ITEM(obj, i));
      if (e.kind != Frozen::Kind::Const)
        return unsupported("a tuple whose element " + std::to_string(i) + " is " +
                           (e.why.empty() ? "a device function" : e.why));
      elems.push_back(std::move(e.value));
    }
    return constant(ir::Const::tuple(std::move(elems)));
  }
  if (PyCode_Check(obj)) return unsupported("a code object (a nested function or lambda)");
  return unsupported("a constant of type '" + typeNameOf(obj) + "'");
}

// A device function's declared signatures (its `signatures` list of strings); false
// when one is not a string.
static bool deviceSignatures(PyObject* device_function, std::vector<std::string>* out) {
  PyRef sigs = getAttr(device_function, "signatures");
  if (!sigs || !PyList_Check(sigs.get())) return true;
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(sigs.get()); ++k) {
    std::string text;
    if (!PyUnicode_Check(PyList_GET_ITEM(sigs.get(), k)) || !toString(PyList_GET_ITEM(sigs.get(), k), &text))
      return false;
    out->push_back(std::move(text));
  }
  return true;
}

Frozen classifyObject(PyObject* obj) {
  if (obj == Py_None || PyBool_Check(obj) || PyLong_Check(obj) || PyFloat_Check(obj) ||
      PyComplex_Check(obj) || PyUnicode_Check(obj) || PyTuple_Check(obj))
    return classifyConstant(obj);

  // Objects the cudajit package marks as compiler symbols.
  if (PyRef sym = getAttr(obj, "_cudajit_symbol_")) {
    std::string s;
    if (toString(sym.get(), &s) && !s.empty()) return constant(ir::Const::symbol(s));
  }
  // A device-function dispatcher: decode its Python function too.
  if (PyRef py = getAttr(obj, "_cudajit_device_py_func_")) {
    if (PyFunction_Check(py.get())) {
      Frozen f;
      f.kind = Frozen::Kind::DeviceFunction;
      f.device_py_func = py;
      if (!deviceSignatures(obj, &f.device_signatures))
        return unsupported("a device function whose signatures are not strings",
                           "declare signatures as strings: @cudajit.jit(\"float32(float32)\", device=True)");
      return f;
    }
    return unsupported("a device function whose _cudajit_device_py_func_ is not a Python function");
  }

  if (PyModule_Check(obj)) {
    std::string name = normaliseModule(attrString(obj, "__name__"));
    if (allowedModule(name)) return constant(ir::Const::symbol(name));
    return unsupported("module '" + name + "'",
                       "kernels may use the modules math, cmath, numpy, operator, cudajit and torch's dtypes");
  }

  {
    Frozen f;
    if (numpyScalar(obj, &f)) return f;
    if (numpyArray(obj, &f)) return f;
    if (deviceArray(obj, &f)) return f;
  }

  // A structured dtype (or numba.from_dtype of one): the record type, as the
  // symbol numpy.dtype:<record text> (cuda.local.array(n, rec_dtype)).
  if (PyObject* dt = recordDtypeObject(obj)) {
    PyRef owned = PyRef::steal(dt);
    std::string why;
    const Type* rec = recordFromDtype(dt, &why);
    if (!rec) return unsupported("the structured dtype " + strOf(dt) + ": " + why);
    return constant(ir::Const::symbol(std::string(kRecordDtypeSymbol) + typeToString(rec)));
  }

  // numba type objects (from numba import float32): str() is the scalar name.
  {
    std::string mod = attrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)), "__module__");
    if (mod == "numba" || mod.rfind("numba.", 0) == 0) {
      std::string s = strOf(obj);
      for (const auto& row : kNumbaScalars)
        if (s == row[0]) return constant(ir::Const::symbol(row[1]));
      return unsupported("the numba object '" + s + "'",
                         "only numba scalar types (float32, int64, ...) can be used in kernels");
    }
  }

  // Enum classes stand for their members (Color.RED folds to the member);
  // a member of a plain Enum is its value, as a constant (IntEnum and IntFlag
  // members are ints and are constants above). numba types them as enum
  // members; what kernels do with them (==, !=, .value, .name) is the same.
  if (isEnumClass(obj)) {
    std::string mod = normaliseModule(attrString(obj, "__module__"));
    return constant(ir::Const::symbol("enum " + mod + "." + attrString(obj, "__qualname__")));
  }
  if (isEnumClass(reinterpret_cast<PyObject*>(Py_TYPE(obj)))) {
    PyRef value = getAttr(obj, "value");
    Frozen f = value ? classifyConstant(value.get()) : unsupported("an enum member without a value");
    if (f.kind == Frozen::Kind::Const) return f;
    return unsupported("the enum member " + strOf(obj) + ", whose value is not a number, string or tuple");
  }

  // A namedtuple class (collections.namedtuple, typing.NamedTuple): kernels
  // may construct its instances; the symbol carries the field names.
  if (isSubclassOf(obj, reinterpret_cast<PyObject*>(&PyTuple_Type))) {
    if (PyRef fields = getAttr(obj, "_fields"); fields && PyTuple_Check(fields.get())) {
      std::string list;
      for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(fields.get()); ++k) {
        std::string field;
        if (!toString(PyTuple_GET_ITEM(fields.get(), k), &field)) return unsupported("a namedtuple with a field that is not a string");
        list += (k ? "," : "") + field;
      }
      return constant(ir::Const::symbol("namedtuple " + attrString(obj, "__qualname__") + "(" + list + ")"));
    }
  }
  if (PyType_Check(obj)) {
    std::string mod = normaliseModule(attrString(obj, "__module__"));
    std::string name = attrString(obj, "__qualname__");
    if (mod == "builtins" || rootOf(mod) == "numpy") return constant(ir::Const::symbol(symbolName(rootOf(mod), name)));
    // User exception classes (raise MyError(...)) trap like builtin ones.
    if (isSubclassOf(obj, PyExc_BaseException)) return constant(ir::Const::symbol(mod + "." + name));
    return unsupported("the class '" + mod + "." + name + "'");
  }

  if (PyCFunction_Check(obj)) {
    std::string mod = normaliseModule(attrString(obj, "__module__"));
    std::string name = attrString(obj, "__name__");
    if (!mod.empty() && allowedModule(mod)) return constant(ir::Const::symbol(symbolName(rootOf(mod), name)));
    return unsupported("the builtin function '" + (mod.empty() ? name : mod + "." + name) + "'");
  }

  if (PyFunction_Check(obj)) {
    std::string mod = attrString(obj, "__module__");
    std::string name = attrString(obj, "__qualname__");
    if (rootOf(mod) == "numpy") return constant(ir::Const::symbol("numpy." + attrString(obj, "__name__")));
    // from numba import literal_unroll: the same as cudajit.literal_unroll
    if (rootOf(mod) == "numba" && name == "literal_unroll") return constant(ir::Const::symbol("cudajit.literal_unroll"));
    return unsupported("the plain Python function '" + name + "'",
                       "decorate it with @cudajit.jit(device=True) to call it from a kernel");
  }

  // PyTorch dtypes (torch.float16 as a global or a default) stand for their scalar type.
  {
    PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(obj));
    std::string text = strOf(obj);
    Scalar s;
    if (attrString(type, "__module__") == "torch" && attrString(type, "__name__") == "dtype" &&
        text.rfind("torch.", 0) == 0) {
      if (torchDtypeScalar(std::string_view(text).substr(6), &s)) return constant(ir::Const::symbol(dtypeSymbolName(s)));
      return unsupported("the PyTorch dtype '" + text + "'", "cudajit has no type for it");
    }
  }
  // numpy dtype instances (np.dtype("float32")) stand for their scalar type.
  {
    std::string tmod = attrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)), "__module__");
    PyRef type = rootOf(tmod) == "numpy" ? getAttr(obj, "type") : PyRef();
    if (type && PyType_Check(type.get()) && getAttr(obj, "itemsize")) return classifyObject(type.get());
  }

  // numpy ufuncs (np.sqrt) and numpy's C-level function objects (np.empty).
  {
    std::string tmod = attrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)), "__module__");
    std::string mod = normaliseModule(attrString(obj, "__module__"));
    if ((rootOf(tmod) == "numpy" || rootOf(mod) == "numpy") && PyCallable_Check(obj)) {
      std::string name = attrString(obj, "__name__");
      if (!name.empty()) return constant(ir::Const::symbol("numpy." + name));
    }
  }

  return unsupported("an object of type '" + typeNameOf(obj) + "'");
}

}  // namespace cj::bytecode
