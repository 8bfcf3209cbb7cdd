// cudajit._core.Dispatcher: `kernel[grid, block](*args)` and the inspect_*
// methods, plus compile_ptx and signature parsing. The work is in
// runtime/dispatcher.cpp; this file converts Python objects at the edges.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "runtime/args.h"
#include "runtime/dispatcher.h"
#include "runtime/errors.h"
#include "runtime/signature.h"
#include "support/error.h"

namespace py = pybind11;
using cj::rt::Dispatcher;
using cj::rt::LaunchConfig;
using cj::rt::Overload;

namespace {

// operator.index(v): ints and numpy integers, not floats.
long long indexValue(const py::handle& v) {
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!i) throw py::error_already_set();
  return i.cast<long long>();
}

// One argument type: a string in numba's spelling, or a numba type object
// (arrays by their dtype/ndim/layout, the rest by their str()).
const cj::Type* typeFrom(const py::handle& t) {
  if (!PyUnicode_Check(t.ptr()) && py::hasattr(t, "dtype") && py::hasattr(t, "ndim") &&
      py::hasattr(t, "layout")) {
    const cj::Type* dtype = cj::rt::parseNumbaType(py::str(t.attr("dtype")).cast<std::string>());
    const std::string layout = py::str(t.attr("layout")).cast<std::string>();
    if (!dtype->isScalar() || (layout != "C" && layout != "F" && layout != "A"))
      throw cj::rt::ArgumentTypeError("unsupported array type in a signature: " +
                                      py::str(t).cast<std::string>());
    return cj::arrayTy(dtype->scalar, t.attr("ndim").cast<int>(),
                       layout == "C" ? cj::Layout::C : layout == "F" ? cj::Layout::F : cj::Layout::A);
  }
  return cj::rt::parseNumbaType(py::str(t).cast<std::string>());
}

// A signature as Python spells it: "void(float32, float32[:])", a tuple or
// list of type names ("float32[::1]", numba type objects: their str() is
// parsed), or a numba Signature (anything with .args and .return_type).
cj::rt::ParsedSignature signatureFrom(const py::handle& sig) {
  if (PyUnicode_Check(sig.ptr())) return cj::rt::parseSignature(sig.cast<std::string>());
  cj::rt::ParsedSignature out;
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

unsigned dimValue(const py::handle& v, const char* what) {
  if (!PyIndex_Check(v.ptr()))
    throw cj::rt::ArgumentTypeError(std::string(what) + " dimensions must be ints, not '" +
                                    Py_TYPE(v.ptr())->tp_name + "'");
  const long long n = indexValue(v);
  if (n < 1 || n > 0x7fffffffLL)
    throw cj::rt::ArgumentValueError(std::string(what) + " dimension " + std::to_string(n) +
                                     " is out of range (each must be at least 1)");
  return static_cast<unsigned>(n);
}

// An int, a tuple of 1-3 ints, or an object with x, y, z (numba's Dim3).
void dims(const py::handle& v, unsigned out[3], const char* what) {
  out[0] = out[1] = out[2] = 1;
  if (PyTuple_Check(v.ptr()) || PyList_Check(v.ptr())) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(v);
    if (seq.size() < 1 || seq.size() > 3)
      throw cj::rt::ArgumentValueError(std::string(what) + " must have 1 to 3 dimensions, got " +
                                       std::to_string(seq.size()));
    for (size_t k = 0; k < seq.size(); ++k) out[k] = dimValue(seq[k], what);
    return;
  }
  if (!PyIndex_Check(v.ptr()) && py::hasattr(v, "x") && py::hasattr(v, "y") && py::hasattr(v, "z")) {
    out[0] = dimValue(v.attr("x"), what);
    out[1] = dimValue(v.attr("y"), what);
    out[2] = dimValue(v.attr("z"), what);
    return;
  }
  out[0] = dimValue(v, what);
}

LaunchConfig configFrom(const py::handle& key) {
  if (!PyTuple_Check(key.ptr()))
    throw cj::rt::ArgumentTypeError("launch a kernel as kernel[blocks, threads](...) or "
                                    "kernel[blocks, threads, stream, shared_bytes](...)");
  py::tuple t = py::reinterpret_borrow<py::tuple>(key);
  if (t.size() < 2 || t.size() > 4)
    throw cj::rt::ArgumentValueError("a launch configuration has 2 to 4 items (blocks, threads, "
                                     "stream, dynamic shared memory bytes), got " +
                                     std::to_string(t.size()));
  LaunchConfig c;
  dims(t[0], c.grid, "grid");
  dims(t[1], c.block, "block");
  if (t.size() >= 3) {
    py::handle s = t[2];
    c.stream = PyLong_Check(s.ptr()) && py::cast<long long>(s) == 0 ? nullptr
                                                                      : cj::rt::streamFromPython(s);
  }
  if (t.size() == 4) {
    const long long bytes = indexValue(t[3]);
    if (bytes < 0 || bytes > 0x7fffffffLL)
      throw cj::rt::ArgumentValueError("dynamic shared memory bytes out of range: " + std::to_string(bytes));
    c.shared_bytes = static_cast<unsigned>(bytes);
  }
  return c;
}

// block=None | 256 | (256,) | (16, 16) | (8, 8, 4): the launch block shape
// ahead-of-time compiles specialise kernels with block algorithms on.
cj::rt::Block blockFrom(const py::object& v) {
  cj::rt::Block b{{0, 0, 0}};
  if (v.is_none()) return b;
  unsigned d[3];
  dims(v, d, "block");
  for (int k = 0; k < 3; ++k) {
    if (d[k] > 1024)
      throw cj::rt::ArgumentValueError("block dimension " + std::to_string(d[k]) + " is out of range");
    b[k] = static_cast<int>(d[k]);
  }
  return b;
}

struct Launcher {
  std::shared_ptr<Dispatcher> dispatcher;
  LaunchConfig config;
};

Overload& overloadFor(Dispatcher& d, const py::object& signature) {
  if (signature.is_none()) {
    if (d.overloads().size() == 1) return *d.overloads().front();
    throw cj::rt::ArgumentValueError("pass a signature: the kernel has " +
                                     std::to_string(d.overloads().size()) + " compiled signatures");
  }
  cj::rt::ParsedSignature sig = signatureFrom(signature);
  Overload* ov = d.find(sig.args);
  if (!ov)
    throw py::key_error("no compiled signature " + cj::rt::numbaArgsString(sig.args) +
                        " (see .signatures)");
  return *ov;
}

// inspect_*(signature=None): a str for one signature; with none given, a dict
// {signature: str} over all compiled ones (numba's convention).
template <typename Get>
py::object inspect(Dispatcher& d, const py::object& signature, Get get) {
  if (!signature.is_none()) return py::str(get(overloadFor(d, signature)));
  py::dict out;
  for (Overload* ov : d.overloads()) out[keyOf(ov->key.args)] = py::str(get(*ov));
  return out;
}

cj::rt::DispatcherOptions optionsFrom(bool fastmath, bool debug, bool lineinfo, int opt) {
  cj::rt::DispatcherOptions o;
  o.fastmath = fastmath;
  o.debug = debug;
  o.lineinfo = lineinfo;
  o.opt = opt;
  return o;
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

}  // namespace

void bindDispatcher(py::module_& m) {
  py::class_<Overload>(m, "Overload", "One compiled signature of a kernel.")
      .def_property_readonly("signature", [](const Overload& o) { return keyOf(o.key.args); })
      .def_property_readonly("symbol", [](const Overload& o) { return o.compiled.symbol; })
      .def_property_readonly("arch", [](const Overload& o) { return o.arch; })
      .def_property_readonly("typed_ir", [](const Overload& o) { return o.compiled.typed_ir; })
      .def_property_readonly("nvvm_ir", [](const Overload& o) { return o.compiled.nvvm_ir; })
      .def_property_readonly("cubin", [](const Overload& o) {
        return py::bytes(o.compiled.cubin.data(), o.compiled.cubin.size());
      })
      .def_property_readonly("stage_times", [](const Overload& o) { return stageTimes(o.compiled.times); })
      .def_property_readonly("param_count", [](const Overload& o) { return o.slots.size(); })
      .def_property_readonly("block", [](const Overload& o) {
        // The launch block shape it is specialised on (block algorithms), or None.
        if (o.key.block == cj::rt::Block{{0, 0, 0}}) return py::object(py::none());
        return py::object(py::make_tuple(o.key.block[0], o.key.block[1], o.key.block[2]));
      })
      .def_property_readonly("cub_specs", [](const Overload& o) { return o.compiled.cub_specs; });

  py::class_<Launcher>(m, "Launcher", "A kernel bound to a launch configuration.")
      .def("__call__", [](Launcher& l, py::args args, py::kwargs kwargs) {
        if (kwargs && !kwargs.empty())
          throw cj::rt::ArgumentTypeError("kernels take positional arguments only");
        l.dispatcher->launch(l.config, args);
      })
      .def_property_readonly("griddim", [](const Launcher& l) {
        return py::make_tuple(l.config.grid[0], l.config.grid[1], l.config.grid[2]);
      })
      .def_property_readonly("blockdim", [](const Launcher& l) {
        return py::make_tuple(l.config.block[0], l.config.block[1], l.config.block[2]);
      })
      .def_property_readonly("sharedmem", [](const Launcher& l) { return l.config.shared_bytes; });

  py::class_<Dispatcher, std::shared_ptr<Dispatcher>>(m, "Dispatcher",
      "A @cudajit.jit kernel: compiled per argument signature, launched as kernel[grid, block](...)")
      .def(py::init([](py::object py_func, bool fastmath, bool debug, bool lineinfo, int opt) {
             return std::make_shared<Dispatcher>(std::move(py_func),
                                                 optionsFrom(fastmath, debug, lineinfo, opt));
           }),
           py::arg("py_func"), py::arg("fastmath") = false, py::arg("debug") = false,
           py::arg("lineinfo") = false, py::arg("opt") = 3)
      .def("__getitem__", [](std::shared_ptr<Dispatcher> self, const py::handle& key) {
        return Launcher{std::move(self), configFrom(key)};
      })
      .def("__call__", [](Dispatcher&, py::args, py::kwargs) {
        throw cj::rt::ArgumentValueError(
            "kernel launch configuration was not specified: launch it as "
            "kernel[blocks, threads](...)");
      })
      .def("compile", [](Dispatcher& d, const py::object& sig, const py::object& block) {
        cj::rt::ParsedSignature s = signatureFrom(sig);
        if (s.return_type && s.return_type != cj::noneTy())
          throw cj::CompileError("", 0, 0, "signature",
                                 "a kernel's signature must return void, not " +
                                     cj::typeToNumbaString(s.return_type));
        return keyOf(d.compileExplicit(s.args, blockFrom(block)).key.args);
      }, py::arg("signature"), py::arg("block") = py::none(),
         "Compiles one signature now (no GPU needed); block=(256,) for kernels that use block "
         "algorithms (they are specialised on the launch block shape).")
      .def_property_readonly("py_func", [](const Dispatcher& d) { return d.pyFunction(); })
      .def_property_readonly("signatures", [](const Dispatcher& d) {
        py::list out;
        for (Overload* ov : d.overloads()) out.append(keyOf(ov->key.args));
        return out;
      })
      .def_property_readonly("overloads", [](py::object self) {
        Dispatcher& d = self.cast<Dispatcher&>();
        py::dict out;
        for (Overload* ov : d.overloads())
          out[keyOf(ov->key.args)] = py::cast(ov, py::return_value_policy::reference_internal, self);
        return out;
      })
      .def("inspect_untyped_ir", &Dispatcher::untypedIr,
           "The decoded function as untyped IR text.")
      .def("inspect_ir", [](Dispatcher& d, const py::object& sig) {
        return inspect(d, sig, [](Overload& o) { return o.compiled.typed_ir; });
      }, py::arg("signature") = py::none(), "Typed IR after the passes, per signature.")
      .def("inspect_nvvm", [](Dispatcher& d, const py::object& sig) {
        return inspect(d, sig, [](Overload& o) { return o.compiled.nvvm_ir; });
      }, py::arg("signature") = py::none(), "NVVM IR (LLVM text) per signature.")
      .def("inspect_llvm", [](Dispatcher& d, const py::object& sig) {
        return inspect(d, sig, [](Overload& o) { return o.compiled.nvvm_ir; });
      }, py::arg("signature") = py::none(), "numba's name for inspect_nvvm.")
      .def("inspect_ptx", [](Dispatcher& d, const py::object& sig) {
        return inspect(d, sig, [&d](Overload& o) { return d.ptx(o); });
      }, py::arg("signature") = py::none(), "PTX per signature.")
      .def("inspect_asm", [](Dispatcher& d, const py::object& sig) {
        return inspect(d, sig, [&d](Overload& o) { return d.ptx(o); });
      }, py::arg("signature") = py::none(), "numba's name for inspect_ptx.");

  m.def("compile_ptx", [](const py::object& py_func, const py::object& sig, bool device,
                          bool fastmath, int arch, int opt, bool lineinfo, bool debug,
                          const py::object& block) {
    cj::rt::ParsedSignature s = signatureFrom(sig);
    if (!device && s.return_type && s.return_type != cj::noneTy())
      throw cj::CompileError("", 0, 0, "signature",
                             "a kernel's signature must return void, not " +
                                 cj::typeToNumbaString(s.return_type));
    cj::rt::DispatcherOptions o = optionsFrom(fastmath, debug, lineinfo, opt);
    o.arch = arch;
    cj::rt::PtxResult r = cj::rt::compilePtx(py_func, s.args, device, o, blockFrom(block));
    const cj::Type* ret = r.return_type ? r.return_type : cj::noneTy();
    return py::make_tuple(r.ptx, cj::typeToNumbaString(ret));
  }, py::arg("py_func"), py::arg("signature"), py::arg("device") = false,
     py::arg("fastmath") = false, py::arg("arch") = 90, py::arg("opt") = 3,
     py::arg("lineinfo") = false, py::arg("debug") = false, py::arg("block") = py::none());

  m.def("compile_cubin", [](const py::object& py_func, const py::object& sig, bool fastmath,
                            int arch, int opt, bool lineinfo, bool debug, const py::object& block) {
    cj::rt::ParsedSignature s = signatureFrom(sig);
    if (s.return_type && s.return_type != cj::noneTy())
      throw cj::CompileError("", 0, 0, "signature",
                             "a kernel's signature must return void, not " +
                                 cj::typeToNumbaString(s.return_type));
    cj::rt::DispatcherOptions o = optionsFrom(fastmath, debug, lineinfo, opt);
    o.arch = arch;
    cj::rt::CubinResult r = cj::rt::compileCubin(py_func, s.args, o, blockFrom(block));
    return py::make_tuple(py::bytes(r.cubin.data(), r.cubin.size()), r.symbol);
  }, py::arg("py_func"), py::arg("signature"), py::arg("fastmath") = false, py::arg("arch") = 90,
     py::arg("opt") = 3, py::arg("lineinfo") = false, py::arg("debug") = false,
     py::arg("block") = py::none(),
     "The linked cubin of a kernel for one signature (and block shape, for block algorithms) and "
     "its entry symbol; needs no GPU.");

  // Named apart from the typing stage's parse_signature (IR spelling, strings
  // only): this is what @jit(sig) and compile_ptx accept, in numba's spelling.
  m.def("signature_types", [](const py::object& sig) {
    cj::rt::ParsedSignature s = signatureFrom(sig);
    py::object ret = s.return_type ? py::object(py::str(cj::typeToNumbaString(s.return_type)))
                                   : py::object(py::none());
    return py::make_tuple(ret, keyOf(s.args));
  }, py::arg("signature"),
     "(return type or None, argument types) in numba's spelling, from a signature string, a "
     "tuple of types or a numba Signature; raises CompileError.");
}
