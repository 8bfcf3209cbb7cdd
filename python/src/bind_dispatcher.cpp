// cudajit._core.Dispatcher: `kernel[grid, block](*args)` and the inspect_*
// methods, plus compile_ptx / compile_cubin and signature parsing. The work
// is in runtime/dispatcher.cpp; this file converts Python objects at the
// edges.
//
// The launch path bypasses pybind11's call machinery: _core.Dispatcher is a
// class of our own (native_class.h: the C++ dispatcher inline in the Python
// object, reached with one load), kernel[...] is its mp_subscript slot (a C
// function that cudajit.Dispatcher inherits), which returns a Launcher, a
// small CPython object whose call is vectorcall. So kernel[grid, block](x, y,
// n) builds no args tuple or kwargs dict and looks no attribute up; the
// configuration of a repeated subscript is found by identity
// (launch_config.h). The methods are pybind11 functions.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <structmember.h>

#include <cstddef>
#include <cstdlib>
#include <memory>

#include "python/src/errors_py.h"
#include "python/src/native_class.h"
#include "runtime/args.h"
#include "bytecode/record_dtype.h"
#include "runtime/dispatcher.h"
#include "runtime/errors.h"
#include "runtime/launch_config.h"
#include "support/error.h"
#include "types/signature.h"

namespace py = pybind11;
using cj::rt::Dispatcher;
using cj::rt::LaunchConfig;
using cj::rt::Overload;
using DispatcherClass = cj::py_native::NativeClass<std::shared_ptr<Dispatcher>>;

namespace {

// One argument type: a string in numba's spelling, or a numba type object
// (arrays by their dtype/ndim/layout, the rest by their str()).
// A numba Record type or a structured numpy dtype in a signature: its record.
const cj::Type* recordFrom(const py::handle& t) {
  PyObject* dt = cj::bytecode::recordDtypeObject(t.ptr());
  if (!dt) return nullptr;
  py::object owned = py::reinterpret_steal<py::object>(dt);
  std::string why;
  const cj::Type* rec = cj::bytecode::recordFromDtype(dt, &why);
  if (!rec) throw cj::rt::ArgumentTypeError("unsupported record type in a signature: " + why);
  return rec;
}

const cj::Type* typeFrom(const py::handle& t) {
  if (const cj::Type* rec = recordFrom(t)) return rec;
  if (!PyUnicode_Check(t.ptr()) && py::hasattr(py::type::handle_of(t), "_cudajit_arg_"))
    return cj::rt::opaqueArg(t.ptr()).type;   // a DevicePipeline (its _numba_type_ is itself)
  if (!PyUnicode_Check(t.ptr()) && py::hasattr(t, "dtype") && py::hasattr(t, "ndim") &&
      py::hasattr(t, "layout")) {
    if (const cj::Type* rec = recordFrom(t.attr("dtype"))) {   // numba.from_dtype(d)[:]
      const std::string layout = py::str(t.attr("layout")).cast<std::string>();
      return cj::recordArrayTy(rec, t.attr("ndim").cast<int>(),
                               layout == "C" ? cj::Layout::C : layout == "F" ? cj::Layout::F : cj::Layout::A);
    }
    const cj::Type* dtype = cj::parseNumbaType(py::str(t.attr("dtype")).cast<std::string>());
    const std::string layout = py::str(t.attr("layout")).cast<std::string>();
    if (!dtype->isScalar() || (layout != "C" && layout != "F" && layout != "A"))
      throw cj::rt::ArgumentTypeError("unsupported array type in a signature: " +
                                      py::str(t).cast<std::string>());
    return cj::arrayTy(dtype->scalar, t.attr("ndim").cast<int>(),
                       layout == "C" ? cj::Layout::C : layout == "F" ? cj::Layout::F : cj::Layout::A);
  }
  return cj::parseNumbaType(py::str(t).cast<std::string>());
}

// A signature as Python spells it: "void(float32, float32[:])", a tuple or
// list of type names ("float32[::1]", numba type objects: their str() is
// parsed), or a numba Signature (anything with .args and .return_type).
cj::ParsedSignature signatureFrom(const py::handle& sig) {
  if (PyUnicode_Check(sig.ptr())) return cj::parseSignature(sig.cast<std::string>());
  cj::ParsedSignature out;
  py::object args_obj;
  if (py::hasattr(sig, "args") && py::hasattr(sig, "return_type")) {
    args_obj = sig.attr("args");
    py::object ret = sig.attr("return_type");
    const std::string r = py::str(ret).cast<std::string>();
    out.return_type = r == "none" || r == "void" ? cj::noneTy() : typeFrom(ret);
  } else if (PyTuple_Check(sig.ptr()) || PyList_Check(sig.ptr())) {
    args_obj = py::reinterpret_borrow<py::object>(sig);
  } else {
    throw cj::rt::ArgumentTypeError("a signature must be a string such as "
                                    "\"void(float32, float32[:])\", a tuple of argument types "
                                    "or a numba Signature, not '" +
                                    std::string(Py_TYPE(sig.ptr())->tp_name) + "'");
  }
  for (py::handle t : py::reinterpret_borrow<py::iterable>(args_obj))
    out.args.push_back(typeFrom(t));
  return out;
}

py::tuple keyOf(const std::vector<const cj::Type*>& args) {
  py::tuple t(args.size());
  for (size_t k = 0; k < args.size(); ++k) t[k] = py::str(cj::typeToNumbaString(args[k]));
  return t;
}

// The key of an overload in signatures/overloads/stats/inspect_*: numba's
// tuple of argument types; a kernel specialised on its launch block shape
// (block algorithms) has one overload per shape, keyed (types, (x, y, z)).
py::tuple keyOf(const cj::rt::SignatureKey& key) {
  py::tuple args = keyOf(key.args);
  if (key.block == cj::rt::Block{{0, 0, 0}}) return args;
  return py::make_tuple(args, py::make_tuple(key.block[0], key.block[1], key.block[2]));
}

void checkKernelReturn(const cj::ParsedSignature& s) {
  if (s.return_type && s.return_type != cj::noneTy())
    throw cj::CompileError("", 0, 0, "signature",
                           "a kernel's signature must return void, not " +
                               cj::typeToNumbaString(s.return_type));
}

PyTypeObject* g_launcher_type = nullptr;

// ---- Launcher: a kernel bound to a launch configuration ---------------------

struct LauncherObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* owner;        // the kernel object (strong): keeps the Dispatcher alive
  Dispatcher* dispatcher; // inside owner
  PyObject* stream;       // an explicit stream object (strong), kept alive for the launch
  // numba's pre_launch_callbacks: a list made on first access (null: none).
  // Not GC-tracked (the hot path allocates launchers): a callback holding its
  // own launcher makes a cycle that lives until the process ends.
  PyObject* callbacks;
  PyObject* args;         // numba's launch_config.args: the arguments while a hooked launch runs
  LaunchConfig config;
};

// ---- the hooked launch: extensions, pre-launch callbacks, config capture -----
//
// Taken only when one of them is there (kernel.extensions not empty, this
// launcher's pre_launch_callbacks not empty, a capture_compile_config active);
// the plain launch pays three tests of a word.

// The stream numba's prepare_args receives: the object given, else its handle (0: none).
py::object launchStream(const LauncherObject* l) {
  if (l->stream) return py::reinterpret_borrow<py::object>(l->stream);
  return py::int_(l->config.stream_given ? reinterpret_cast<uintptr_t>(l->config.stream) : 0);
}

// The type a launch gives `value` on its own, in numba's spelling
// ("float64[::1]"), or None for an object a launch cannot take (an extension
// is there to convert it).
py::object argTypeName(PyObject* value) {
  try {
    cj::rt::LaunchArgs la;
    cj::rt::classifyArgs(&value, 1, false, &la);
    return py::str(cj::typeToNumbaString(la.types.at(0)));
  } catch (...) {
    PyErr_Clear();
    return py::none();
  }
}

// Sets the launcher's .args for the launch and restores the previous value
// (a callback may launch the same configuration again).
class LaunchArgsScope {
 public:
  LaunchArgsScope(LauncherObject* l, PyObject* args) : l_(l), previous_(l->args) {
    Py_INCREF(args);
    l_->args = args;
  }
  ~LaunchArgsScope() {
    PyObject* mine = l_->args;
    l_->args = previous_;
    Py_XDECREF(mine);
  }
  LaunchArgsScope(const LaunchArgsScope&) = delete;
  LaunchArgsScope& operator=(const LaunchArgsScope&) = delete;

 private:
  LauncherObject* l_;
  PyObject* previous_;
};

void hookedLaunch(LauncherObject* l, PyObject* const* args, size_t nargs) {
  Dispatcher* d = l->dispatcher;
  py::object self = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(l));
  py::list retr;   // numba's write-back functions, called after the launch
  std::vector<py::object> prepared;
  prepared.reserve(nargs);
  for (size_t k = 0; k < nargs; ++k) prepared.push_back(py::reinterpret_borrow<py::object>(args[k]));
  const py::tuple extensions(d->extensions());   // a snapshot: prepare_args may change the list
  if (!extensions.empty()) {
    const py::object stream = launchStream(l);
    for (size_t k = 0; k < nargs; ++k) {
      py::object ty = argTypeName(args[k]);
      py::object val = prepared[k];
      for (size_t i = extensions.size(); i-- > 0;) {   // the last extension first, as numba
        py::object r = extensions[i].attr("prepare_args")(ty, val, py::arg("stream") = stream,
                                                         py::arg("retr") = retr);
        if (!PyTuple_Check(r.ptr()) || PyTuple_GET_SIZE(r.ptr()) != 2)
          throw cj::rt::ArgumentTypeError(
              py::repr(extensions[i]).cast<std::string>() + ".prepare_args() must return a tuple (ty, val), got " +
              std::string(Py_TYPE(r.ptr())->tp_name));
        ty = r[py::int_(0)];
        val = r[py::int_(1)];
      }
      prepared[k] = std::move(val);
    }
  }
  std::vector<PyObject*> raw(nargs);
  py::tuple given(nargs);
  for (size_t k = 0; k < nargs; ++k) {
    raw[k] = prepared[k].ptr();
    given[k] = py::reinterpret_borrow<py::object>(args[k]);
  }
  LaunchArgsScope scope(l, given.ptr());
  const py::object capture = d->launchCapture();
  const uint64_t compiles = d->compiles();
  const bool callbacks = l->callbacks && PyList_GET_SIZE(l->callbacks) != 0;
  std::function<void(Overload&)> before = [&](Overload& ov) {
    if (!capture.is_none() && d->compiles() != compiles) capture["config"] = self;   // this launch compiled
    if (!callbacks) return;
    py::object kernel = py::cast(ov.shared_from_this());
    py::detail::keep_alive_impl(kernel, py::handle(l->owner));
    const py::list snapshot(py::reinterpret_borrow<py::object>(l->callbacks));
    for (py::handle cb : snapshot) cb(kernel, self);
  };
  d->launch(l->config, raw.data(), nargs, &before);
  for (py::handle wb : retr) wb();
}

PyObject* launcherCall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* l = reinterpret_cast<LauncherObject*>(self);
  if (kwnames && PyTuple_GET_SIZE(kwnames) > 0) {
    PyErr_SetString(PyExc_TypeError, "kernels take positional arguments only");
    return nullptr;
  }
  try {
    Dispatcher* d = l->dispatcher;
    const size_t nargs = static_cast<size_t>(PyVectorcall_NARGS(nargsf));
    if ((l->callbacks && PyList_GET_SIZE(l->callbacks) != 0) || PyList_GET_SIZE(d->extensions().ptr()) != 0 ||
        !d->launchCapture().is_none())
      hookedLaunch(l, args, nargs);
    else
      d->launch(l->config, args, nargs);
  } catch (...) {
    cj::py_errors::setPythonError(std::current_exception());
    return nullptr;
  }
  Py_RETURN_NONE;
}

void launcherDealloc(PyObject* self) {
  auto* l = reinterpret_cast<LauncherObject*>(self);
  Py_XDECREF(l->owner);
  Py_XDECREF(l->stream);
  Py_XDECREF(l->callbacks);
  Py_XDECREF(l->args);
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* dim3(const unsigned d[3]) { return Py_BuildValue("(III)", d[0], d[1], d[2]); }

PyObject* launcherGrid(PyObject* self, void*) {
  return dim3(reinterpret_cast<LauncherObject*>(self)->config.grid);
}
PyObject* launcherBlock(PyObject* self, void*) {
  return dim3(reinterpret_cast<LauncherObject*>(self)->config.block);
}
PyObject* launcherShared(PyObject* self, void*) {
  return PyLong_FromUnsignedLong(reinterpret_cast<LauncherObject*>(self)->config.shared_bytes);
}
PyObject* launcherStream(PyObject* self, void*) {
  const LaunchConfig& c = reinterpret_cast<LauncherObject*>(self)->config;
  if (!c.stream_given) Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong(reinterpret_cast<uintptr_t>(c.stream));
}

PyObject* launcherCallbacks(PyObject* self, void*) {
  auto* l = reinterpret_cast<LauncherObject*>(self);
  if (!l->callbacks && !(l->callbacks = PyList_New(0))) return nullptr;
  Py_INCREF(l->callbacks);
  return l->callbacks;
}
int launcherSetCallbacks(PyObject* self, PyObject* value, void*) {
  auto* l = reinterpret_cast<LauncherObject*>(self);
  if (!value || !PyList_Check(value)) {
    PyErr_SetString(PyExc_TypeError, "pre_launch_callbacks must be a list of callables");
    return -1;
  }
  Py_INCREF(value);
  Py_XSETREF(l->callbacks, value);
  return 0;
}
PyObject* launcherDispatcher(PyObject* self, void*) {
  PyObject* owner = reinterpret_cast<LauncherObject*>(self)->owner;
  Py_INCREF(owner);
  return owner;
}
PyObject* launcherArgs(PyObject* self, void*) {
  PyObject* args = reinterpret_cast<LauncherObject*>(self)->args;
  if (!args) Py_RETURN_NONE;
  Py_INCREF(args);
  return args;
}

PyGetSetDef kLauncherGetSet[] = {
    {"pre_launch_callbacks", launcherCallbacks, launcherSetCallbacks,
     "numba's: callables called as callback(kernel, launch_config) before each launch through this "
     "object, once the kernel (its overload) is compiled and loaded and before any argument is copied.",
     nullptr},
    {"dispatcher", launcherDispatcher, nullptr, "The kernel this configuration launches.", nullptr},
    {"args", launcherArgs, nullptr,
     "The arguments of the launch in progress through this object (in its pre-launch callbacks), "
     "else None.", nullptr},
    {"griddim", launcherGrid, nullptr, "The grid shape (x, y, z).", nullptr},
    {"blockdim", launcherBlock, nullptr, "The block shape (x, y, z).", nullptr},
    {"sharedmem", launcherShared, nullptr, "Dynamic shared memory bytes.", nullptr},
    {"stream", launcherStream, nullptr,
     "The stream handle given, or None (the launch picks: PyTorch's or CuPy's current stream "
     "for their arrays, else the default stream).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMemberDef kLauncherMembers[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(LauncherObject, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyTypeObject* makeLauncherType() {
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(launcherDealloc)},
      {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
      {Py_tp_getset, kLauncherGetSet},
      {Py_tp_members, kLauncherMembers},
      {Py_tp_doc, const_cast<char*>("A kernel bound to a launch configuration: call it with the "
                                    "kernel's arguments.")},
      {0, nullptr},
  };
  static PyType_Spec spec = {"cudajit._core.Launcher", sizeof(LauncherObject), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL, slots};
  PyObject* t = PyType_FromSpec(&spec);
  if (!t) throw py::error_already_set();
  return reinterpret_cast<PyTypeObject*>(t);
}

// kernel[key]: the mp_subscript slot of _core.Dispatcher (and of its
// subclasses, which inherit it), so `self` is one of its instances.
PyObject* dispatcherSubscript(PyObject* self, PyObject* key) {
  try {
    Dispatcher* d = cj::py_native::valueOf<std::shared_ptr<Dispatcher>>(self).get();
    if (!d) throw cj::rt::ArgumentTypeError("the kernel object was not initialised");
    cj::rt::LaunchConfigCache& cache = d->launchConfigs();
    const LaunchConfig* config = cache.find(key);
    LaunchConfig parsed;
    PyObject* stream = nullptr;
    if (!config) {
      parsed = cj::rt::parseLaunchConfig(key);
      cache.insert(key, parsed);
      config = &parsed;
      PyObject* s = PyTuple_GET_SIZE(key) >= 3 ? PyTuple_GET_ITEM(key, 2) : nullptr;
      if (s && s != Py_None && !PyLong_Check(s)) stream = s;
    }
    auto* l = PyObject_New(LauncherObject, g_launcher_type);
    if (!l) return nullptr;
    l->vectorcall = launcherCall;
    Py_INCREF(self);
    l->owner = self;
    l->dispatcher = d;
    Py_XINCREF(stream);
    l->stream = stream;
    l->callbacks = nullptr;
    l->args = nullptr;
    l->config = *config;
    return reinterpret_cast<PyObject*>(l);
  } catch (...) {
    cj::py_errors::setPythonError(std::current_exception());
    return nullptr;
  }
}

// ---- inspection and statistics ----------------------------------------------

// Held: what the caller does with it may run Python code, and another
// thread's launch may then drop it from the kernel's table (the in-memory bound).
std::shared_ptr<Overload> overloadFor(Dispatcher& d, const py::object& signature) {
  if (signature.is_none()) {
    if (d.overloads().size() == 1) return d.overloads().front()->shared_from_this();
    throw cj::rt::ArgumentValueError("pass a signature: the kernel has " +
                                     std::to_string(d.overloads().size()) + " compiled signatures");
  }
  cj::ParsedSignature sig = signatureFrom(signature);
  Overload* ov = d.find(sig.args);
  if (!ov)
    throw py::key_error("no compiled signature " + cj::numbaArgsString(sig.args) +
                        " (see .signatures)");
  return ov->shared_from_this();
}

py::object signatureDict(const py::dict& entries) {
  return py::module_::import("cudajit.dispatcher").attr("SignatureDict")(entries);
}

// inspect_*(signature=None): a str for one signature; with none given, a
// dict {signature: str} over all compiled ones (numba's convention), whose
// str() shows each text under a header line (cudajit.dispatcher.SignatureDict).
template <typename Get>
py::object inspect(Dispatcher& d, const py::object& signature, Get get) {
  if (!signature.is_none()) return py::str(get(*overloadFor(d, signature)));
  py::dict out;
  for (const auto& ov : d.heldOverloads()) out[keyOf(ov->key)] = py::str(get(*ov));
  return signatureDict(out);
}

// numba's get_regs_per_thread(signature=None) & co: the value for one
// signature, or {signature: value} over the compiled ones.
py::object resourceQuery(Dispatcher& d, const py::object& signature, Dispatcher::FunctionAttribute attribute) {
  if (!signature.is_none()) return py::int_(d.functionAttribute(*overloadFor(d, signature), attribute));
  py::dict out;
  for (const auto& ov : d.heldOverloads()) out[keyOf(ov->key)] = py::int_(d.functionAttribute(*ov, attribute));
  return signatureDict(out);
}

// inspect_ir(after=...): the text after the one pass named, or {pass: text}
// for a list or "all"; per signature as inspect() does.
py::object inspectAfter(Dispatcher& d, const py::object& signature, const std::string& after) {
  std::vector<std::string> names = cj::passes::splitPassList(after);
  const bool one = names.size() == 1 && names[0] != "all";
  auto get = [&](Overload& ov) -> py::object {
    std::vector<cj::passes::IrSnapshot> snaps = d.irAfter(ov, names);
    if (one) return py::str(snaps.at(0).text);
    py::dict out;
    for (const auto& s : snaps) out[py::str(s.pass)] = py::str(s.text);
    return std::move(out);
  };
  if (!signature.is_none()) return get(*overloadFor(d, signature));
  py::dict out;
  for (const auto& ov : d.heldOverloads()) out[keyOf(ov->key)] = get(*ov);
  return signatureDict(out);
}

// backend="" takes $CUDAJIT_BACKEND, then "nvvm".
cj::link::BackendKind backendFrom(const std::string& backend) {
  std::string name = backend;
  const char* from = "backend";
  if (name.empty()) {
    const char* env = std::getenv("CUDAJIT_BACKEND");
    name = env && *env ? env : "nvvm";
    from = "$CUDAJIT_BACKEND";
  }
  cj::link::BackendKind kind;
  if (!cj::link::parseBackendName(name, &kind))
    throw py::value_error(std::string(from) + " must be 'nvvm' (libNVVM) or 'llvm' (LLVM's NVPTX back end), got '" +
                          name + "'");
  return kind;
}

cj::rt::DispatcherOptions optionsFrom(bool fastmath, bool debug, bool lineinfo, int opt, bool cache,
                                     const std::string& fast_compile, const std::string& backend) {
  if (!fast_compile.empty() && fast_compile != "min" && fast_compile != "mid" && fast_compile != "max")
    throw py::value_error("fast_compile must be 'min', 'mid', 'max', True or False, got '" + fast_compile + "'");
  cj::rt::DispatcherOptions o;
  o.backend = backendFrom(backend);
  o.fastmath = fastmath;
  o.debug = debug;
  o.lineinfo = lineinfo;
  o.opt = opt;
  o.cache = cache;
  o.fast_compile = fast_compile;
  return o;
}

// jit(launch_bounds=...) as numba-cuda takes it: an int (max threads a block)
// or a tuple of 1 to 3 (max threads, min blocks per SM, max blocks per
// cluster); None: no bounds.
void launchBoundsFrom(const py::object& bounds, cj::rt::DispatcherOptions& o) {
  if (bounds.is_none()) return;
  std::vector<int> v;
  if (py::isinstance<py::tuple>(bounds) || py::isinstance<py::list>(bounds)) {
    for (auto item : bounds) v.push_back(py::cast<int>(item));
  } else {
    v.push_back(py::cast<int>(bounds));
  }
  if (v.empty() || v.size() > 3)
    throw py::value_error("launch_bounds is an int or a tuple of 1 to 3 ints (max threads per block, "
                          "min blocks per SM, max blocks per cluster)");
  const int limits[3] = {1024, 32, 16};
  const char* names[3] = {"max threads per block", "min blocks per SM", "max blocks per cluster"};
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 1 || v[i] > limits[i])
      throw py::value_error(std::string("launch_bounds: ") + names[i] + " must be 1 to " + std::to_string(limits[i]) +
                            ", got " + std::to_string(v[i]));
    o.launch_bounds[i] = v[i];
  }
}

// cudajit.tile kernels: the tile model, num_warps (None: the compiler's), and
// the Constant parameters' values as {index: value} (int, float or bool).
void tileOptionsFrom(const py::object& tile, cj::rt::DispatcherOptions& o) {
  if (tile.is_none()) return;
  py::dict t = tile.cast<py::dict>();
  o.tile = true;
  if (t.contains("num_warps") && !t["num_warps"].is_none()) o.num_warps = t["num_warps"].cast<int>();
  if (t.contains("occupancy") && !t["occupancy"].is_none()) o.occupancy = t["occupancy"].cast<int>();
  if (!t.contains("constants")) return;
  for (auto item : t["constants"].cast<py::dict>()) {
    int index = item.first.cast<int>();
    py::handle v = item.second;
    cj::ir::Const c;
    if (PyBool_Check(v.ptr())) c = cj::ir::Const::boolean(v.ptr() == Py_True);
    else if (PyLong_Check(v.ptr())) c = cj::ir::Const::integer(v.cast<int64_t>());
    else if (PyFloat_Check(v.ptr())) c = cj::ir::Const::real(v.cast<double>());
    else throw cj::rt::ArgumentTypeError("a Constant parameter must be an int, float or bool, got " +
                                         std::string(Py_TYPE(v.ptr())->tp_name));
    o.constants.emplace_back(index, std::move(c));
  }
}

py::dict statsDict(const cj::rt::CompileStats& s) {
  const cj::driver::StageTimes& t = s.stages;
  py::dict d;
  d["decode"] = t.decode;
  d["infer"] = t.infer;
  d["passes"] = t.passes;
  d["emit"] = t.emit;
  d["nvvm"] = t.nvvm;
  d["link"] = t.link;
  d["cache"] = s.cache;
  d["load"] = s.load;
  d["total"] = s.total();
  d["cache_result"] = cj::rt::cacheOutcomeName(s.outcome);
  if (s.miss) d["cache_miss_reason"] = s.miss->reason();   // worked out when first asked for
  d["assembler"] = s.assembler;
  return d;
}

py::dict stageTimes(const cj::driver::StageTimes& t) {
  py::dict d;
  d["decode"] = t.decode;
  d["infer"] = t.infer;
  d["passes"] = t.passes;
  d["emit"] = t.emit;
  d["nvvm"] = t.nvvm;
  d["link"] = t.link;
  if (t.cub > 0) d["cub"] = t.cub;   // kernels with block algorithms: their CUB instantiations
  return d;
}

// block=None | 256 | (256,) | (16, 16) | (8, 8, 4): the launch block shape
// kernels with block algorithms are compiled for ahead of a launch.
cj::rt::Block blockFrom(const py::object& v) {
  cj::rt::Block b{{0, 0, 0}};
  if (v.is_none()) return b;
  std::vector<py::object> items;
  if (PyTuple_Check(v.ptr()) || PyList_Check(v.ptr())) {
    for (py::handle h : v) items.push_back(py::reinterpret_borrow<py::object>(h));
  } else {
    items.push_back(v);
  }
  if (items.empty() || items.size() > 3)
    throw cj::rt::ArgumentValueError("block must have 1 to 3 dimensions");
  b = {{1, 1, 1}};
  for (size_t k = 0; k < items.size(); ++k) {
    if (!PyIndex_Check(items[k].ptr()))
      throw cj::rt::ArgumentTypeError("block dimensions must be ints");
    const long long n = items[k].cast<long long>();
    if (n < 1 || n > 1024)
      throw cj::rt::ArgumentValueError("block dimension " + std::to_string(n) + " is out of range");
    b[k] = static_cast<int>(n);
  }
  return b;
}

int archNumber(const py::handle& arch) {
  if (PyLong_Check(arch.ptr())) return arch.cast<int>();
  std::string text = py::str(arch).cast<std::string>();
  for (const char* prefix : {"sm_", "compute_"})
    if (text.rfind(prefix, 0) == 0) text = text.substr(std::string(prefix).size());
  while (!text.empty() && (text.back() == 'a' || text.back() == 'f')) text.pop_back();
  try {
    size_t used = 0;
    const int n = std::stoi(text, &used);
    if (used == text.size() && n > 0) return n;
  } catch (const std::exception&) {
  }
  throw cj::rt::ArgumentValueError("cannot read the architecture '" + py::str(arch).cast<std::string>() +
                                   "' (write sm_90, compute_90 or 90)");
}

// ---- the bindings, one family at a time ---------------------------------------

void bindOverload(py::module_& m) {
  py::class_<Overload, std::shared_ptr<Overload>>(m, "Overload", "One compiled signature of a kernel.")
      .def_property_readonly("signature", [](const Overload& o) { return keyOf(o.key); })
      .def_property_readonly("symbol", [](const Overload& o) { return o.compiled.symbol; })
      .def_property_readonly("arch", [](const Overload& o) { return o.arch; })
      .def_property_readonly("typed_ir", [](const Overload& o) { return o.compiled.typed_ir; })
      .def_property_readonly("nvvm_ir", [](const Overload& o) { return o.compiled.nvvm_ir; })
      .def_property_readonly("ptx", [](const Overload& o) { return o.compiled.ptx; })
      .def_property_readonly("cubin", [](const Overload& o) {
        return py::bytes(o.compiled.cubin.data(), o.compiled.cubin.size());
      })
      .def_property_readonly("stage_times", [](const Overload& o) { return stageTimes(o.stats.stages); })
      .def_property_readonly("stats", [](const Overload& o) { return statsDict(o.stats); },
                             "Seconds per stage (decode, infer, passes, emit, nvvm, link, cache, "
                             "load), their total, and cache_result (off/miss/hit/corrupt).")
      .def_property_readonly("param_count", [](const Overload& o) { return o.slots.size(); })
      .def_property_readonly("block", [](const Overload& o) {
        // The launch block shape it is specialised on (block algorithms), or None.
        if (o.key.block == cj::rt::Block{{0, 0, 0}}) return py::object(py::none());
        return py::object(py::make_tuple(o.key.block[0], o.key.block[1], o.key.block[2]));
      })
      .def_property_readonly("cub_specs", [](const Overload& o) { return o.compiled.cub_specs; })
      .def_property_readonly("cooperative", [](const Overload& o) { return o.compiled.cooperative; },
                             "Whether it synchronises its grid (cuda.cg.this_grid().sync()): launched "
                             "cooperatively, every block resident at once.")
      .def("_function_handle", [](Overload& o) {
        return reinterpret_cast<uintptr_t>(o.owner->functionOnCurrentDevice(o));
      }, py::doc("The CUfunction (an address) of this overload on the current device, loaded there "
                 "if need be: what numba's _Kernel.library.get_cufunc().handle holds."))
      .def("_active_blocks_per_multiprocessor", [](Overload& o, unsigned threads, unsigned shared_bytes) {
        return o.owner->activeBlocksPerMultiprocessor(o, threads, shared_bytes);
      }, py::arg("threads"), py::arg("shared_bytes") = 0)
      .def("max_cooperative_grid_blocks", [](Overload& o, const py::object& blockdim, unsigned dynsmemsize) {
        return o.owner->maxCooperativeGridBlocks(o, blockFrom(blockdim), dynsmemsize);
      }, py::arg("blockdim"), py::arg("dynsmemsize") = 0,
         py::doc("numba's _Kernel.max_cooperative_grid_blocks: the most blocks of this shape (and "
                 "dynamic shared memory) a cooperative launch of this kernel may have on the "
                 "current device."));
}

// Construction, explicit compiles, the launch-adjacent helpers.
void defineCompiling(DispatcherClass& cls) {
  cls.defInit([](py::handle self, py::object py_func, bool fastmath, bool debug, bool lineinfo,
                 int opt, bool cache, const std::string& fast_compile, const py::object& tile,
                 const std::string& backend, const std::vector<std::string>& link,
                 const py::object& launch_bounds, int carveout) {
           auto& held = cj::py_native::checkedValue<std::shared_ptr<Dispatcher>>(self);
           if (held) return;   // a second __init__ changes nothing (as pybind11's classes)
           cj::rt::DispatcherOptions o = optionsFrom(fastmath, debug, lineinfo, opt, cache, fast_compile, backend);
           tileOptionsFrom(tile, o);
           launchBoundsFrom(launch_bounds, o);
           // cudajit.decorators checks the value numba's way (names, -1..100)
           if (carveout != cj::rt::DispatcherOptions::kNoCarveout && (carveout < -1 || carveout > 100))
             throw py::value_error("Carveout must be between -1 and 100");
           o.carveout = carveout;
           o.link = link;
           held = std::make_shared<Dispatcher>(std::move(py_func), std::move(o));
         },
         py::arg("self"), py::arg("py_func"), py::arg("fastmath") = false, py::arg("debug") = false,
         py::arg("lineinfo") = false, py::arg("opt") = 3, py::arg("cache") = false,
         py::arg("fast_compile") = "", py::arg("tile") = py::none(), py::arg("backend") = "",
         py::arg("link") = std::vector<std::string>{}, py::arg("launch_bounds") = py::none(),
         py::arg("shared_memory_carveout") = cj::rt::DispatcherOptions::kNoCarveout);
  cls.def("__call__", [](Dispatcher&, py::args, py::kwargs) {
        throw cj::rt::ArgumentValueError(
            "kernel launch configuration was not specified: launch it as "
            "kernel[blocks, threads](...)");
      })
      .def("compile", [](Dispatcher& d, const py::object& sig, const py::object& block, bool until_launch) {
        cj::ParsedSignature s = signatureFrom(sig);
        checkKernelReturn(s);
        const cj::rt::Block b = blockFrom(block);
        d.compileExplicit(s.args, b, until_launch);
        Overload* ov = d.find(s.args, d.usesBlockAlgorithms() ? b : cj::rt::Block{{0, 0, 0}});
        return keyOf(ov ? ov->key.args : s.args);
      }, py::arg("signature"), py::arg("block") = py::none(), py::arg("until_launch") = false,
         py::doc("Compiles one signature now (no GPU needed); block=(256,) for kernels that use "
                 "block algorithms (they are specialised on the launch block shape). "
                 "until_launch: @jit's own signatures, which such a kernel given no block "
                 "compiles at its first launch."))
      .def("_warm", [](Dispatcher& d, const py::object& sig, const py::object& arch,
                       const py::object& block) {
        cj::ParsedSignature s = signatureFrom(sig);
        checkKernelReturn(s);
        return d.warm(s.args, archNumber(arch), blockFrom(block));
      }, py::arg("signature"), py::arg("arch"), py::arg("block") = py::none(),
         py::doc("Puts the kernel for one signature and architecture into the disk cache; True "
                 "when it was compiled, False when it was there already."))
      .def("_launch_loop", [](Dispatcher& d, const py::handle& key, long iterations, py::args args) {
        const LaunchConfig config = cj::rt::parseLaunchConfig(key.ptr());
        std::vector<PyObject*> raw;
        for (py::handle a : args) raw.push_back(a.ptr());
        return d.launchLoop(config, raw.data(), raw.size(), iterations);
      }, py::doc("Benchmarks only: cuLaunchKernel `iterations` times in a C++ loop with the "
                 "parameters of one launch (the floor launches are measured against); returns "
                 "seconds."))
      .def("_arg_signature", [](Dispatcher&, py::args args) {
        std::vector<PyObject*> raw;
        for (py::handle a : args) raw.push_back(a.ptr());
        cj::rt::LaunchArgs la;
        cj::rt::classifyArgs(raw.data(), raw.size(), false, &la);
        return cj::numbaArgsString(la.types);
      }, py::doc("The signature a launch with these arguments compiles, in numba's spelling "
                 "(kernel.specialize)."))
      .def("_swap_launch_capture", [](Dispatcher& d, const py::object& record) {
        py::object previous = d.launchCapture();
        if (!record.is_none() && !py::isinstance<py::dict>(record))
          throw cj::rt::ArgumentTypeError("a launch capture is a dict");
        d.launchCapture() = record;
        return previous;
      }, py::arg("record"),
         py::doc("cudajit.launchconfig.capture_compile_config: the dict a launch that compiles puts "
                 "its configuration in (as 'config'); None: off. Returns the previous one."))
      .def("_suggest_block_size", [](Dispatcher& d, unsigned shared_bytes, py::args args) {
        std::vector<PyObject*> raw;
        for (py::handle a : args) raw.push_back(a.ptr());
        return d.suggestBlockSize(raw.data(), raw.size(), shared_bytes);
      }, py::doc("kernel.forall(n) without tpb: the occupancy calculator's block size for these "
                 "arguments."));
}

// What was compiled: options, signatures, overloads, statistics, each stage's text.
void defineInspection(DispatcherClass& cls) {
  cls.defReadonly("_declared_signatures", [](const Dispatcher& d) {
        py::list out;
        for (const auto& args : d.declared()) out.append(keyOf(args));
        return out;
      })
      .defReadonly("_cache", [](const Dispatcher& d) { return d.options().cache; })
      .defReadonly("_options", [](const Dispatcher& d) {
        const cj::rt::DispatcherOptions& o = d.options();
        py::dict out;
        out["fastmath"] = o.fastmath;
        out["debug"] = o.debug;
        out["lineinfo"] = o.lineinfo;
        out["opt"] = o.opt;
        out["cache"] = o.cache;
        out["fast_compile"] = o.fast_compile;
        out["backend"] = cj::link::backendName(o.backend);
        if (!o.link.empty()) out["link"] = o.link;
        if (o.launch_bounds[0] > 0) {   // as jit(launch_bounds=...) takes it
          py::list bounds;
          for (int b : o.launch_bounds)
            if (b > 0) bounds.append(b);
          out["launch_bounds"] = py::tuple(bounds);
        }
        if (o.carveout != cj::rt::DispatcherOptions::kNoCarveout) out["shared_memory_carveout"] = o.carveout;
        return out;
      })
      .defReadonly("py_func", [](const Dispatcher& d) { return d.pyFunction(); })
      .defReadonly("extensions", [](Dispatcher& d) { return d.extensions(); },
                   "numba's argument-preparation extensions: objects with prepare_args(ty, val, stream=, "
                   "retr=) returning (ty, val), applied to each launch argument, the last one first.")
      .defReadonly("signatures", [](const Dispatcher& d) {
        py::list out;
        for (const auto& ov : d.heldOverloads()) out.append(keyOf(ov->key.args));   // numba's: types only
        return out;
      })
      .defReadonly("overloads", [](py::handle self) {
        Dispatcher& d = *cj::py_native::checkedValue<std::shared_ptr<Dispatcher>>(self);
        py::dict out;
        for (const auto& ov : d.heldOverloads()) {
          // Each object holds its overload (one the in-memory bound drops
          // lives on while Python uses it) and keeps the kernel alive (its owner).
          py::object o = py::cast(ov);
          py::detail::keep_alive_impl(o, self);
          out[keyOf(ov->key)] = o;
        }
        return signatureDict(out);
      })
      .defReadonly("_evictions", [](const Dispatcher& d) { return d.evictions(); },
                   "Overloads dropped from memory by cudajit.cache.memory_cache_limit() (a launch "
                   "with their types compiles them again, from the disk cache with cache=True).")
      .defReadonly("stats", [](Dispatcher& d) {
        py::dict out;
        for (const auto& ov : d.heldOverloads()) out[keyOf(ov->key)] = statsDict(ov->stats);
        return signatureDict(out);
      }, "Compile statistics per signature: seconds per stage, total, cache_result.")
      .def("inspect_untyped_ir", &Dispatcher::untypedIr,
           py::doc("The decoded function as untyped IR text."))
      .def("inspect_ir", [](Dispatcher& d, const py::object& sig, const py::object& after) {
        if (after.is_none()) return inspect(d, sig, [](Overload& o) { return o.compiled.typed_ir; });
        return inspectAfter(d, sig, after.cast<std::string>());
      }, py::arg("signature") = py::none(), py::arg("after") = py::none(),
         py::doc("Typed IR after the passes, per signature. after='fold': the IR right after that "
                 "pass instead; after='fold,range' or 'all': {pass: text} per signature."))
      .def("inspect_nvvm", [](Dispatcher& d, const py::object& sig) {
        return inspect(d, sig, [](Overload& o) { return o.compiled.nvvm_ir; });
      }, py::arg("signature") = py::none(), py::doc("NVVM IR (LLVM text) per signature."))
      .def("inspect_llvm", [](Dispatcher& d, const py::object& sig) {
        return inspect(d, sig, [](Overload& o) { return o.compiled.nvvm_ir; });
      }, py::arg("signature") = py::none(), py::doc("numba's name for inspect_nvvm."))
      .def("inspect_ptx", [](Dispatcher& d, const py::object& sig) {
        return inspect(d, sig, [&d](Overload& o) { return d.ptx(o); });
      }, py::arg("signature") = py::none(), py::doc("PTX per signature."))
      .def("get_regs_per_thread", [](Dispatcher& d, const py::object& sig) { return resourceQuery(d, sig, Dispatcher::kRegistersPerThread); },
           py::arg("signature") = py::none(), py::doc("Registers per thread (loads the kernel on the current GPU)."))
      .def("get_shared_mem_per_block", [](Dispatcher& d, const py::object& sig) { return resourceQuery(d, sig, Dispatcher::kSharedBytes); },
           py::arg("signature") = py::none(), py::doc("Static shared memory per block, in bytes."))
      .def("get_local_mem_per_thread", [](Dispatcher& d, const py::object& sig) { return resourceQuery(d, sig, Dispatcher::kLocalBytes); },
           py::arg("signature") = py::none(), py::doc("Local memory per thread, in bytes."))
      .def("get_const_mem_size", [](Dispatcher& d, const py::object& sig) { return resourceQuery(d, sig, Dispatcher::kConstBytes); },
           py::arg("signature") = py::none(), py::doc("Constant memory the kernel uses, in bytes."))
      .def("get_max_threads_per_block", [](Dispatcher& d, const py::object& sig) { return resourceQuery(d, sig, Dispatcher::kMaxThreadsPerBlock); },
           py::arg("signature") = py::none(), py::doc("The most threads a block of this kernel may have."))
      .def("inspect_asm", [](Dispatcher& d, const py::object& sig) {
        return inspect(d, sig, [&d](Overload& o) { return d.ptx(o); });
      }, py::arg("signature") = py::none(), py::doc("numba's name for inspect_ptx."));
}

// compile_ptx / compile_cubin and @jit(signature)'s parsing: no Dispatcher.
void bindAheadOfTime(py::module_& m) {
  m.def("_set_defer_explicit_compiles", &cj::rt::setDeferExplicitCompiles, py::arg("defer"),
        "While True, @jit(signature) records its signatures without compiling (warm CLI).");

  m.def("compile_aot", [](const py::object& py_func, const py::object& sig, bool device,
                          bool want_cubin, bool fastmath, const py::object& arch, int opt,
                          bool lineinfo, bool debug, const py::object& block, const std::string& fast_compile,
                          const py::object& tile, const std::string& backend, const std::vector<std::string>& link,
                          bool want_ltoir, const std::string& name, const py::object& launch_bounds) {
    cj::ParsedSignature s = signatureFrom(sig);
    if (!device) checkKernelReturn(s);
    cj::rt::DispatcherOptions o = optionsFrom(fastmath, debug, lineinfo, opt, false, fast_compile, backend);
    tileOptionsFrom(tile, o);
    launchBoundsFrom(launch_bounds, o);
    o.link = link;
    o.arch = archNumber(arch);
    cj::rt::AotResult r = cj::rt::compileAot(py_func, s.args, device, want_cubin, o, blockFrom(block),
                                             s.return_type, want_ltoir, name);
    const cj::Type* ret = r.return_type ? r.return_type : cj::noneTy();
    py::object cubin = want_ltoir   ? py::object(py::bytes(r.ltoir.data(), r.ltoir.size()))
                       : want_cubin ? py::object(py::bytes(r.cubin.data(), r.cubin.size()))
                                    : py::object(py::none());
    return py::make_tuple(r.ptx, cubin, cj::typeToNumbaString(ret), r.symbol);
  }, py::arg("py_func"), py::arg("signature"), py::arg("device") = false,
     py::arg("want_cubin") = false, py::arg("fastmath") = false, py::arg("arch") = 90,
     py::arg("opt") = 3, py::arg("lineinfo") = false, py::arg("debug") = false,
     py::arg("block") = py::none(), py::arg("fast_compile") = "", py::arg("tile") = py::none(),
     py::arg("backend") = "", py::arg("link") = std::vector<std::string>{}, py::arg("want_ltoir") = false,
     py::arg("name") = "", py::arg("launch_bounds") = py::none(),
     "(ptx, cubin (want_ltoir: the LTO-IR) or None, return type, symbol) for one signature; no GPU needed. block: the "
     "launch block shape of kernels with block algorithms (their PTX is the linked result from "
     "libNVVM, the kernel's own from the LLVM back end). backend: 'nvvm' or 'llvm' ('': "
     "$CUDAJIT_BACKEND, else 'nvvm').");

  // Named apart from the typing stage's parse_signature (IR spelling, strings
  // only): this is what @jit(sig) and compile_ptx accept, in numba's spelling.
  m.def("signature_types", [](const py::object& sig) {
    cj::ParsedSignature s = signatureFrom(sig);
    py::object ret = s.return_type ? py::object(py::str(cj::typeToNumbaString(s.return_type)))
                                   : py::object(py::none());
    return py::make_tuple(ret, keyOf(s.args));
  }, py::arg("signature"),
     "(return type or None, argument types) in numba's spelling, from a signature string, a "
     "tuple of types or a numba Signature; raises CompileError.");
}

}  // namespace

void bindDispatcher(py::module_& m) {
  g_launcher_type = makeLauncherType();
  m.add_object("Launcher", reinterpret_cast<PyObject*>(g_launcher_type));
  bindOverload(m);
  DispatcherClass cls(m, "cudajit._core.Dispatcher",
                      "A @cudajit.jit kernel: compiled per argument signature, launched as "
                      "kernel[grid, block](...)",
                      {{Py_mp_subscript, reinterpret_cast<void*>(&dispatcherSubscript)}});
  defineCompiling(cls);
  defineInspection(cls);
  bindAheadOfTime(m);
}
