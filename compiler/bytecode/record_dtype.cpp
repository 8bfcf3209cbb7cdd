#include "bytecode/record_dtype.h"

#include <algorithm>
#include <cctype>

#include "bytecode/pyref.h"

namespace cj::bytecode {
namespace {

bool isIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

long long intAttr(PyObject* o, const char* name) {
  PyRef v = getAttr(o, name);
  if (!v) return -1;
  long long x = PyLong_AsLongLong(v.get());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return -1;
  }
  return x;
}

bool truthAttr(PyObject* o, const char* name) {
  PyRef v = getAttr(o, name);
  int t = v ? PyObject_IsTrue(v.get()) : 0;
  if (t < 0) PyErr_Clear();
  return t == 1;
}

const Type* recordOf(PyObject* dtype, const std::string& path, std::string* error);

// The type of one field's dtype: a scalar, a record, or a subarray of those.
const Type* fieldType(PyObject* dtype, const std::string& where, std::string* error) {
  PyRef sub = getAttr(dtype, "subdtype");
  if (sub && sub.get() != Py_None) {   // ('v', np.float32, (3,)): (base dtype, shape)
    if (!PyTuple_Check(sub.get()) || PyTuple_GET_SIZE(sub.get()) != 2) {
      *error = "field '" + where + "' has an unreadable subarray dtype";
      return nullptr;
    }
    PyObject* base = PyTuple_GET_ITEM(sub.get(), 0);
    PyObject* shape = PyTuple_GET_ITEM(sub.get(), 1);
    std::vector<int64_t> dims;
    for (Py_ssize_t k = 0; PyTuple_Check(shape) && k < PyTuple_GET_SIZE(shape); ++k)
      dims.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(shape, k)));
    if (PyErr_Occurred()) PyErr_Clear();
    const Type* elem = fieldType(base, where, error);
    if (!elem) return nullptr;
    const Type* t = nestedArrayTy(elem, dims);
    if (!t) *error = "field '" + where + "' is a subarray of shape " + strOf(shape) + " (cudajit needs 1 or more "
                     "dimensions of positive length)";
    return t;
  }
  if (isStructuredDtype(dtype)) return recordOf(dtype, where + ".", error);
  Scalar s;
  if (numericDtypeScalar(dtype, &s)) {
    if (!truthAttr(dtype, "isnative")) {
      *error = "field '" + where + "' is byte-swapped (" + strOf(dtype) + "); records hold native-endian numbers";
      return nullptr;
    }
    return scalarTy(s);
  }
  // Strings: bytes kernels cannot touch, carried by the record (numba types them CharSeq).
  if (const std::string kind = attrString(dtype, "kind"); kind == "U" || kind == "S") {
    if (const Type* t = opaqueFieldTy(attrString(dtype, "str"), intAttr(dtype, "itemsize"))) return t;
  }
  *error = "field '" + where + "' has dtype " + strOf(dtype) +
           ", which a record in a kernel cannot hold (record fields are bool, int, uint, float and complex "
           "numbers, strings (carried, not readable), nested records and fixed-shape arrays of those)";
  return nullptr;
}

const Type* recordOf(PyObject* dtype, const std::string& path, std::string* error) {
  PyRef names = getAttr(dtype, "names");
  PyRef fields = getAttr(dtype, "fields");
  if (!names || !fields || !PyTuple_Check(names.get()) || !PyMapping_Check(fields.get())) {
    *error = "dtype " + strOf(dtype) + " is not a structured dtype";
    return nullptr;
  }
  std::vector<RecordField> out;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(names.get()); ++k) {
    RecordField f;
    if (!toString(PyTuple_GET_ITEM(names.get(), k), &f.name)) {
      *error = "a field name of " + strOf(dtype) + " is not a string";
      return nullptr;
    }
    const std::string where = path + f.name;
    if (!isIdentifier(f.name)) {
      *error = "field '" + where + "' is not a Python identifier; cudajit records need identifier field names";
      return nullptr;
    }
    // fields is a mappingproxy: name -> (dtype, offset[, title])
    PyRef entry_ref = PyRef::steal(PyObject_GetItem(fields.get(), PyTuple_GET_ITEM(names.get(), k)));
    if (!entry_ref) PyErr_Clear();
    PyObject* entry = entry_ref.get();
    if (!entry || !PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 2) {
      *error = "field '" + where + "' has no (dtype, offset) entry";
      return nullptr;
    }
    f.offset = PyLong_AsLongLong(PyTuple_GET_ITEM(entry, 1));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      *error = "field '" + where + "' has an unreadable offset";
      return nullptr;
    }
    if (!(f.type = fieldType(PyTuple_GET_ITEM(entry, 0), where, error))) return nullptr;
    out.push_back(std::move(f));
  }
  const Type* t = recordTy(out, intAttr(dtype, "itemsize"), intAttr(dtype, "alignment"), truthAttr(dtype, "isalignedstruct"));
  if (!t) *error = "dtype " + strOf(dtype) + " has fields outside its itemsize or no fields";
  return t;
}

// ---- Where the bytes really are aligned ------------------------------------
// numpy's flags describe a dtype alone: a record made with align=True keeps
// its flag when it is a field of a packed record, and a packed record's
// subarray field can start anywhere. Code generation accesses the fields of
// an aligned record, and the elements of any array view, at their natural
// alignment, so the types must promise only what holds where the bytes are:
// an array's items start at multiples of the itemsize (its data at 16 bytes
// or more), a field `offset` bytes into them.

int64_t lowBit(int64_t v) { return v > 0 ? (v & -v) : int64_t(1) << 20; }

// `t` with every record in it marked unaligned (fields accessed bytewise).
const Type* loosened(const Type* t) {
  if (isRecord(t)) {
    std::vector<RecordField> fields;
    for (size_t k = 0; k < t->fields.size(); ++k) {
      RecordField f = recordField(t, static_cast<int>(k));
      f.type = loosened(f.type);
      fields.push_back(std::move(f));
    }
    return recordTy(fields, t->size, t->align, /*aligned=*/false, t->space);
  }
  if (isNestedArray(t) && t->record) return nestedArrayTy(loosened(t->record), t->shape);
  return t;
}

// `rec` for bytes that start at a multiple of `start` (a power of two): its
// records loosened where that does not reach their alignment; nullptr and
// *error for a subarray of numbers whose elements would be misaligned (an
// array view cannot load them bytewise).
const Type* placed(const Type* rec, int64_t start, const std::string& path, std::string* error) {
  if (rec->aligned && start < rec->align) return loosened(rec);
  std::vector<RecordField> fields;
  bool changed = false;
  for (size_t k = 0; k < rec->fields.size(); ++k) {
    RecordField f = recordField(rec, static_cast<int>(k));
    const int64_t at = std::min(start, lowBit(f.offset));
    const Type* ft = f.type;
    if (isRecord(ft)) {
      ft = placed(ft, at, path + f.name + ".", error);
    } else if (isNestedArray(ft) && ft->record) {
      ft = placed(ft->record, std::min(at, lowBit(ft->record->size)), path + f.name + ".", error);
      if (ft) ft = nestedArrayTy(ft, f.type->shape);
    } else if (isNestedArray(ft)) {
      const int64_t need = memAlign(scalarTy(ft->scalar));
      if (std::min(at, lowBit(scalarByteSize(ft->scalar))) < need) {
        *error = "field '" + path + f.name + "' is an array of " + std::string(scalarShortName(ft->scalar)) +
                 " at offset " + std::to_string(f.offset) + " of a packed record whose items are " +
                 std::to_string(rec->size) + " bytes apart: its elements are not " + std::to_string(need) +
                 "-byte aligned (numba refuses unaligned fields too); make the dtype with align=True";
        return nullptr;
      }
    }
    if (!ft) return nullptr;
    changed |= ft != f.type;
    f.type = ft;
    fields.push_back(std::move(f));
  }
  return changed ? recordTy(fields, rec->size, rec->align, rec->aligned, rec->space) : rec;
}

}  // namespace

bool numericDtypeScalar(PyObject* dtype, Scalar* out) {
  const std::string kind = attrString(dtype, "kind");
  return (kind == "b" || kind == "i" || kind == "u" || kind == "f" || kind == "c") &&
         parseScalar(attrString(dtype, "name"), out) && scalarByteSize(*out) == intAttr(dtype, "itemsize");
}

bool isStructuredDtype(PyObject* dtype) {
  PyRef names = getAttr(dtype, "names");
  return names && names.get() != Py_None && PyTuple_Check(names.get()) && PyObject_HasAttrString(dtype, "fields");
}

const Type* recordFromDtype(PyObject* dtype, std::string* error) {
  if (!isStructuredDtype(dtype)) {
    *error = "dtype " + strOf(dtype) + " has no fields";
    return nullptr;
  }
  PyRef names = getAttr(dtype, "names");
  if (PyTuple_GET_SIZE(names.get()) == 0) {
    *error = "dtype " + strOf(dtype) + " has no fields";
    return nullptr;
  }
  const Type* t = recordOf(dtype, "", error);
  // An array's items (kernel arguments, local and shared arrays: 16 bytes
  // or more at their start) are itemsize bytes apart.
  return t ? placed(t, std::min<int64_t>(16, lowBit(t->size)), "", error) : nullptr;
}

PyObject* recordDtypeObject(PyObject* obj) {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(obj));
  const std::string module = attrString(type, "__module__");
  const std::string name = attrString(type, "__name__");
  // numpy.dtype (numpy 1) or numpy.dtypes.VoidDType (numpy 2)
  if ((module == "numpy" || module == "numpy.dtypes") && isStructuredDtype(obj)) {
    Py_INCREF(obj);
    return obj;
  }
  if (module.rfind("numba", 0) == 0 && name == "Record") {   // numba.from_dtype(dtype)
    PyObject* dt = PyObject_GetAttrString(obj, "dtype");
    if (!dt) PyErr_Clear();
    if (dt && isStructuredDtype(dt)) return dt;
    Py_XDECREF(dt);
  }
  return nullptr;
}

}  // namespace cj::bytecode
