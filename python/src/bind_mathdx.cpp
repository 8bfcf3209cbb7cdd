// MathDx descriptors for cudajit.mathdx: a dict of nvmath.device's
// parameters -> {traits, symbol, ltoir} (a Matmul's; an FFT's when the dict
// has routine='fft'). libmathdx missing -> ImportError
// naming the pip package; a descriptor libmathdx rejects -> CompileError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "mathdx/mathdx.h"
#include "sys_path_py.h"

namespace py = pybind11;

namespace {

template <class T, size_t N>
void setArray(const py::dict& d, const char* key, std::array<T, N>* out) {
  if (!d.contains(key) || d[key].is_none()) return;
  auto v = py::cast<std::vector<T>>(d[key]);
  if (v.size() != N) throw py::value_error(std::string("mathdx: ") + key + " has " + std::to_string(N) + " entries");
  for (size_t i = 0; i < N; ++i) (*out)[i] = v[i];
}

template <class T>
void setScalar(const py::dict& d, const char* key, T* out) {
  if (d.contains(key) && !d[key].is_none()) *out = py::cast<T>(d[key]);
}

const char* const kKeys[] = {"size", "precision", "data_type", "arrangement", "transpose_mode", "block_dim",
                             "leading_dimension", "alignment", "function", "execution", "api", "sm", "code",
                             "with_pipeline", "input_streaming", "static_block_dim"};

// The dict cudajit/mathdx.py builds (normalized spellings, sm as 80/90).
// Refuses a key the spec does not have (a typo in cudajit/mathdx.py).
template <size_t N>
void checkKeys(const py::dict& d, const char* const (&keys)[N], const char* what) {
  for (auto item : d) {
    std::string k = py::cast<std::string>(item.first);
    bool known = false;
    for (const char* key : keys) known = known || k == key;
    if (!known) throw py::value_error(std::string("mathdx: unknown ") + what + " key '" + k + "'");
  }
}

cj::mathdx::MatmulSpec specFrom(const py::dict& d) {
  checkKeys(d, kKeys, "Matmul");
  cj::mathdx::MatmulSpec s;
  setArray(d, "size", &s.size);
  setArray(d, "precision", &s.precision);
  setScalar(d, "data_type", &s.data_type);
  setArray(d, "arrangement", &s.arrangement);
  setArray(d, "transpose_mode", &s.transpose_mode);
  setArray(d, "block_dim", &s.block_dim);
  setArray(d, "leading_dimension", &s.leading_dimension);
  setArray(d, "alignment", &s.alignment);
  setScalar(d, "function", &s.function);
  setScalar(d, "execution", &s.execution);
  setScalar(d, "api", &s.api);
  setScalar(d, "sm", &s.sm);
  setScalar(d, "code", &s.code);
  setScalar(d, "with_pipeline", &s.with_pipeline);
  setScalar(d, "input_streaming", &s.input_streaming);
  setScalar(d, "static_block_dim", &s.static_block_dim);
  return s;
}

// specFrom's inverse: what cudajit/mathdx.py's instantiator takes.
template <class T, size_t N>
py::object listOrNone(const std::array<T, N>& v, bool set) {
  if (!set) return py::none();
  py::list l;
  for (const auto& x : v) l.append(x);
  return std::move(l);
}

py::dict matmulSpecDict(const cj::mathdx::MatmulSpec& s) {
  auto any = [](const std::array<int64_t, 3>& v) { return v[0] || v[1] || v[2]; };
  py::dict d;
  d["size"] = listOrNone(s.size, true);
  d["precision"] = listOrNone(s.precision, true);
  d["data_type"] = s.data_type;
  d["arrangement"] = listOrNone(s.arrangement, !s.arrangement[0].empty());
  d["transpose_mode"] = listOrNone(s.transpose_mode, !s.transpose_mode[0].empty());
  d["block_dim"] = listOrNone(s.block_dim, any(s.block_dim));
  d["leading_dimension"] = listOrNone(s.leading_dimension, any(s.leading_dimension));
  d["alignment"] = listOrNone(s.alignment, any(s.alignment));
  d["function"] = s.function;
  d["execution"] = s.execution;
  d["api"] = s.api.empty() ? py::object(py::none()) : py::object(py::str(s.api));
  d["sm"] = s.sm;
  d["code"] = s.code;
  d["with_pipeline"] = s.with_pipeline;
  d["input_streaming"] = s.input_streaming;
  d["static_block_dim"] = s.static_block_dim;
  return d;
}

// Registers a Python instantiator (cudajit/mathdx.py's fresh process) for
// the siblings a kernel's compile asks for; its errors become the compiler's.
template <class Spec, class ToDict>
std::function<std::string(const Spec&)> pythonInstantiator(const py::object& instantiate, ToDict toDict,
                                                           const char* construct) {
  auto* fn = new py::object(instantiate);   // kept for the process's life
  return [fn, toDict, construct](const Spec& spec) -> std::string {
    py::gil_scoped_acquire gil;
    try {
      return (*fn)(toDict(spec)).template cast<std::string>();
    } catch (py::error_already_set& e) {
      std::string what = py::str(e.value());
      if (std::string(py::str(e.type().attr("__name__"))) == "CompileError")
        throw cj::CompileError("", 0, 0, construct, what);
      throw cj::ToolchainError("cudajit.mathdx: instantiating " + spec.toString() + ": " + what);
    }
  };
}

const char* const kFftKeys[] = {"routine", "size", "precision", "fft_type", "direction", "execution",
                                "ffts_per_block", "elements_per_thread", "complex_layout", "real_mode", "api", "sm",
                                "code"};

bool isRoutine(const py::dict& d, const char* routine) {
  return d.contains("routine") && py::cast<std::string>(d["routine"]) == routine;
}

cj::mathdx::FftSpec fftSpecFrom(const py::dict& d) {
  checkKeys(d, kFftKeys, "FFT");
  cj::mathdx::FftSpec s;
  setScalar(d, "size", &s.size);
  setScalar(d, "precision", &s.precision);
  setScalar(d, "fft_type", &s.fft_type);
  setScalar(d, "direction", &s.direction);
  setScalar(d, "execution", &s.execution);
  setScalar(d, "ffts_per_block", &s.ffts_per_block);
  setScalar(d, "elements_per_thread", &s.elements_per_thread);
  setScalar(d, "complex_layout", &s.complex_layout);
  setScalar(d, "real_mode", &s.real_mode);
  setScalar(d, "api", &s.api);
  if (s.api == "register_memory") s.api.clear();   // the default, not part of the key
  setScalar(d, "sm", &s.sm);
  setScalar(d, "code", &s.code);
  return s;
}

// fftSpecFrom's inverse: what cudajit/mathdx.py's instantiator takes.
py::dict fftSpecDict(const cj::mathdx::FftSpec& s) {
  py::dict d;
  auto optional = [](int64_t v) { return v > 0 ? py::object(py::int_(v)) : py::object(py::none()); };
  auto text = [](const std::string& v) { return v.empty() ? py::object(py::none()) : py::object(py::str(v)); };
  d["routine"] = "fft";
  d["size"] = s.size;
  d["precision"] = s.precision;
  d["fft_type"] = s.fft_type;
  d["direction"] = s.direction;
  d["execution"] = s.execution;
  d["ffts_per_block"] = optional(s.ffts_per_block);
  d["elements_per_thread"] = optional(s.elements_per_thread);
  d["complex_layout"] = text(s.complex_layout);
  d["real_mode"] = text(s.real_mode);
  d["api"] = text(s.api);
  d["sm"] = s.sm;
  d["code"] = s.code;
  return d;
}

const char* const kRandomKeys[] = {"routine", "generator", "philox_rounds", "distribution", "output_type",
                                   "method", "normal_method", "sm"};

cj::mathdx::RandomSpec randomSpecFrom(const py::dict& d) {
  checkKeys(d, kRandomKeys, "RNG");
  cj::mathdx::RandomSpec s;
  setScalar(d, "generator", &s.generator);
  setScalar(d, "philox_rounds", &s.philox_rounds);
  setScalar(d, "distribution", &s.distribution);
  setScalar(d, "output_type", &s.output_type);
  setScalar(d, "method", &s.method);
  setScalar(d, "normal_method", &s.normal_method);
  setScalar(d, "sm", &s.sm);
  return s;
}

// A trait libmathdx does not define for the descriptor is None.
py::object trait(int64_t v) { return v == cj::mathdx::kNoTrait ? py::none() : py::cast(v); }

// Runs f with the GIL released; LibraryMissing becomes ImportError.
template <class F>
auto withoutGil(F f) {
  try {
    py::gil_scoped_release release;
    return f();
  } catch (const cj::mathdx::LibraryMissing& e) {
    throw py::import_error(e.what());
  }
}

void addSysPath() { cj::mathdx::addSiteDirectories(cj::py_sys::sysPathEntries()); }

template <class T>
py::tuple tuple3(const std::array<T, 3>& v) { return py::make_tuple(v[0], v[1], v[2]); }

// {routine: 'tensor_function', matmul: <a Matmul's dict>, function, tensors:
// [(type, like), ...], alignment} <-> TensorFunctionSpec.
const char* const kTensorKeys[] = {"routine", "matmul", "function", "tensors", "alignment", "pipeline", "pipelines"};
const char* const kPipelineKeys[] = {"depth", "a_shape", "a_stride", "b_shape", "b_stride"};

cj::mathdx::TensorFunctionSpec tensorSpecFrom(const py::dict& d) {
  checkKeys(d, kTensorKeys, "tensor function");
  cj::mathdx::TensorFunctionSpec s;
  s.matmul = specFrom(py::cast<py::dict>(d["matmul"]));
  setScalar(d, "function", &s.function);
  setScalar(d, "alignment", &s.alignment);
  for (auto t : py::cast<py::list>(d["tensors"])) {
    auto pair = py::cast<std::vector<std::string>>(t);
    if (pair.size() != 2) throw py::value_error("mathdx: a tensor is (type, like)");
    s.tensors.push_back({pair[0], pair[1]});
  }
  if (d.contains("pipeline") && !d["pipeline"].is_none()) {
    auto p = py::cast<py::dict>(d["pipeline"]);
    checkKeys(p, kPipelineKeys, "pipeline");
    setScalar(p, "depth", &s.pipeline.depth);
    setScalar(p, "a_shape", &s.pipeline.a_shape);
    setScalar(p, "a_stride", &s.pipeline.a_stride);
    setScalar(p, "b_shape", &s.pipeline.b_shape);
    setScalar(p, "b_stride", &s.pipeline.b_stride);
  }
  setScalar(d, "pipelines", &s.pipelines);
  return s;
}

py::dict tensorSpecDict(const cj::mathdx::TensorFunctionSpec& s) {
  py::dict d;
  d["routine"] = "tensor_function";
  d["matmul"] = matmulSpecDict(s.matmul);
  d["function"] = s.function;
  py::list tensors;
  for (const auto& t : s.tensors) tensors.append(py::make_tuple(t.type, t.like));
  d["tensors"] = tensors;
  d["alignment"] = s.alignment;
  if (s.pipeline.depth > 0) {
    py::dict p;
    p["depth"] = s.pipeline.depth;
    p["a_shape"] = s.pipeline.a_shape;
    p["a_stride"] = s.pipeline.a_stride;
    p["b_shape"] = s.pipeline.b_shape;
    p["b_stride"] = s.pipeline.b_stride;
    d["pipeline"] = p;
  }
  d["pipelines"] = s.pipelines;
  return d;
}

py::dict pipelineTraitsDict(const cj::mathdx::PipelineTraits& p) {
  py::dict d;
  d["storage_bytes"] = p.storage_bytes;
  d["storage_alignment"] = p.storage_alignment;
  d["buffer_size"] = p.buffer_size;
  d["buffer_alignment"] = p.buffer_alignment;
  d["block_dim"] = tuple3(p.block_dim);
  return d;
}

py::dict tensorResultDict(const cj::mathdx::TensorFunctionResult& r) {
  py::dict out;
  out["spec"] = r.spec;
  out["key"] = cj::mathdx::specKey(r.spec);
  out["symbol"] = r.symbol;
  py::list modules;
  for (const auto& l : r.ltoir) modules.append(py::bytes(l.data(), l.size()));
  out["ltoir"] = modules;
  py::list tensors;
  for (const auto& t : r.tensors) {
    py::dict td;
    td["uid"] = t.uid;
    td["storage_bytes"] = t.storage_bytes;
    td["alignment"] = t.alignment;
    td["logical_size"] = t.logical_size;
    tensors.append(td);
  }
  out["tensors"] = tensors;
  out["device_pipeline"] = pipelineTraitsDict(r.device_pipeline);
  out["tile_pipeline"] = pipelineTraitsDict(r.tile_pipeline);
  return out;
}

}  // namespace

void bindMathdx(py::module_& m) {
  m.def(
      "mathdx_matmul",
      [](const py::dict& d, const py::object& elsewhere) {
        cj::mathdx::MatmulSpec spec = specFrom(d);
        addSysPath();
        cj::mathdx::Instantiate instantiate;
        if (!elsewhere.is_none()) {
          instantiate = [&](const cj::mathdx::MatmulSpec&) {
            py::gil_scoped_acquire gil;
            return elsewhere(d).cast<std::string>();   // bytes; its exceptions pass through
          };
        }
        auto r = withoutGil([&] { return cj::mathdx::matmul(spec, instantiate); });
        py::dict out;
        out["spec"] = r->spec;
        out["key"] = cj::mathdx::specKey(r->spec);   // the kernel-side name (mathdx.h)
        out["symbol"] = r->symbol;
        py::list modules;
        for (const auto& l : r->ltoir) modules.append(py::bytes(l.data(), l.size()));
        out["ltoir"] = modules;
        out["value_type"] = tuple3(r->value_type);
        out["value_size"] = tuple3(r->value_size);
        out["size"] = tuple3(r->size);
        out["block_dim"] = tuple3(r->block_dim);
        out["suggested_block_dim"] = tuple3(r->suggested_block_dim);
        out["leading_dimension"] = tuple3(r->leading_dimension);
        out["suggested_leading_dimension"] = tuple3(r->suggested_leading_dimension);
        out["arrangement"] = tuple3(r->arrangement);
        out["alignment"] = tuple3(r->alignment);
        out["max_threads_per_block"] = r->max_threads_per_block;
        out["shared_memory_size"] = r->shared_memory_size;
        return out;
      },
      py::arg("spec"), py::arg("elsewhere") = py::none(),
      "Instantiates a cuBLASDx descriptor through libmathdx (or fetches it from the memory / "
      "disk cache; a miss goes to elsewhere(spec) -> mathdx_compile_serialized's bytes when "
      "given): {spec, symbol, ltoir: [bytes], value_type, size, block_dim, "
      "suggested_block_dim, leading_dimension, suggested_leading_dimension, arrangement, "
      "alignment, max_threads_per_block, shared_memory_size}. ImportError without libmathdx, "
      "CompileError for a descriptor it rejects.");
  m.def(
      "mathdx_tensor_function",
      [](const py::dict& d, const py::object& elsewhere) {
        cj::mathdx::TensorFunctionSpec spec = tensorSpecFrom(d);
        addSysPath();
        cj::mathdx::InstantiateTensorFunction instantiate;
        if (!elsewhere.is_none()) {
          instantiate = [&](const cj::mathdx::TensorFunctionSpec&) {
            py::gil_scoped_acquire gil;
            return elsewhere(d).cast<std::string>();
          };
        }
        auto r = withoutGil([&] { return cj::mathdx::tensorFunction(spec, instantiate); });
        return tensorResultDict(*r);
      },
      py::arg("spec"), py::arg("elsewhere") = py::none(),
      "cuBLASDx's tensor API: the traits of a GEMM's tensors and, unless function is 'traits', "
      "a device function on them (served from the caches as mathdx_matmul): {spec, key, symbol, "
      "ltoir: [bytes], tensors: [{uid, storage_bytes, alignment, logical_size}]}.");
  m.def("mathdx_tensor_types", [] { return cj::mathdx::tensorTypeNames(); },
        "Every cuBLASDx tensor type's name (a layout's traits query asks for all of them).");
  m.def(
      "mathdx_set_instantiators",
      [](const py::object& instantiate) {
        cj::mathdx::setFftInstantiator(
            pythonInstantiator<cj::mathdx::FftSpec>(instantiate, fftSpecDict, "mathdx.fft"));
        cj::mathdx::setMatmulInstantiator(
            pythonInstantiator<cj::mathdx::MatmulSpec>(instantiate, matmulSpecDict, "mathdx.matmul"));
        cj::mathdx::setTensorFunctionInstantiator(
            pythonInstantiator<cj::mathdx::TensorFunctionSpec>(instantiate, tensorSpecDict, "mathdx.tensor"));
        // A kernel's tensor functions are made on several threads, each taking
        // the GIL for the instantiator; a compile may hold it (the dispatcher's
        // does), so the compile's thread lets it go while it waits for them.
        cj::mathdx::setUnlockedSection([](const std::function<void()>& work) {
          if (PyGILState_Check()) {
            py::gil_scoped_release release;
            work();
          } else {
            work();
          }
        });
      },
      py::arg("instantiate"),
      "Registers instantiate(spec dict) -> mathdx_compile_serialized's bytes, run (in a fresh "
      "process) when a kernel needs a routine's sibling with another API: an FFT's shared-memory "
      "API, a GEMM's runtime leading dimensions.");
  m.def(
      "mathdx_fft",
      [](const py::dict& d, const py::object& elsewhere) {
        cj::mathdx::FftSpec spec = fftSpecFrom(d);
        addSysPath();
        cj::mathdx::InstantiateFft instantiate;
        if (!elsewhere.is_none()) {
          instantiate = [&](const cj::mathdx::FftSpec&) {
            py::gil_scoped_acquire gil;
            return elsewhere(d).cast<std::string>();
          };
        }
        auto r = withoutGil([&] { return cj::mathdx::fft(spec, instantiate); });
        py::dict out;
        out["spec"] = r->spec;
        out["key"] = cj::mathdx::specKey(r->spec);
        out["symbol"] = r->symbol;
        py::list modules;
        for (const auto& l : r->ltoir) modules.append(py::bytes(l.data(), l.size()));
        out["ltoir"] = modules;
        out["execution"] = r->execution;
        out["api"] = r->api.empty() ? "register_memory" : r->api;
        out["value_type"] = r->value_type;
        out["input_type"] = r->input_type;
        out["output_type"] = r->output_type;
        out["size"] = r->size;
        out["elements_per_thread"] = r->elements_per_thread;
        out["storage_size"] = r->storage_size;
        out["stride"] = r->stride;
        out["implicit_type_batching"] = r->implicit_type_batching;
        out["input_length"] = r->input_length;
        out["output_length"] = r->output_length;
        out["input_elements_per_thread"] = r->input_elements_per_thread;
        out["output_elements_per_thread"] = r->output_elements_per_thread;
        out["shared_memory_size"] = trait(r->shared_memory_size);
        out["ffts_per_block"] = trait(r->ffts_per_block);
        out["suggested_ffts_per_block"] = trait(r->suggested_ffts_per_block);
        out["block_dim"] = r->block_dim[0] == cj::mathdx::kNoTrait ? py::object(py::none()) : py::object(tuple3(r->block_dim));
        return out;
      },
      py::arg("spec"), py::arg("elsewhere") = py::none(),
      "Instantiates a cuFFTDx descriptor through libmathdx (or fetches it from the caches), as "
      "mathdx_matmul does: {spec, key, symbol, ltoir, execution, value_type, input_type, "
      "output_type, size, elements_per_thread, storage_size, stride, implicit_type_batching, "
      "input_length, output_length, input/output_elements_per_thread, shared_memory_size, "
      "ffts_per_block, suggested_ffts_per_block, block_dim} (the last four None for Thread).");
  m.def(
      "mathdx_random",
      [](const py::dict& d, const py::object& elsewhere) {
        cj::mathdx::RandomSpec spec = randomSpecFrom(d);
        addSysPath();
        cj::mathdx::InstantiateRandom instantiate;
        if (!elsewhere.is_none()) {
          instantiate = [&](const cj::mathdx::RandomSpec&) {
            py::gil_scoped_acquire gil;
            return elsewhere(d).cast<std::string>();
          };
        }
        auto r = withoutGil([&] { return cj::mathdx::random(spec, instantiate); });
        py::dict out;
        out["spec"] = r->spec;
        out["key"] = cj::mathdx::specKey(r->spec);
        py::dict symbols;
        const char* names[] = {"init", "generate", "skip_offset", "skip_subsequence"};
        for (size_t f = 0; f < r->symbols.size(); ++f) symbols[names[f]] = r->symbols[f];
        out["symbols"] = symbols;
        out["ltoir"] = py::bytes(r->ltoir->data(), r->ltoir->size());
        out["state_size"] = r->state_size;
        out["state_alignment"] = r->state_alignment;
        out["count"] = r->count;
        out["output_type"] = r->output_type;
        out["param_type"] = r->param_type;
        return out;
      },
      py::arg("spec"), py::arg("elsewhere") = py::none(),
      "Instantiates a cuRANDDx generator + distribution through libmathdx (or fetches it from the "
      "caches), as mathdx_matmul does: {spec, key, symbols: {init, generate, skip_offset, "
      "skip_subsequence}, ltoir, state_size, state_alignment, count, output_type, param_type}.");
  m.def(
      "mathdx_compile_serialized",
      [](const py::dict& d) {
        std::string body;
        if (isRoutine(d, "tensor_function")) {
          cj::mathdx::TensorFunctionSpec spec = tensorSpecFrom(d);
          addSysPath();
          body = withoutGil([&] { return cj::mathdx::compileSerialized(spec); });
        } else if (isRoutine(d, "random")) {
          cj::mathdx::RandomSpec spec = randomSpecFrom(d);
          addSysPath();
          body = withoutGil([&] { return cj::mathdx::compileSerialized(spec); });
        } else if (isRoutine(d, "fft")) {
          cj::mathdx::FftSpec spec = fftSpecFrom(d);
          addSysPath();
          body = withoutGil([&] { return cj::mathdx::compileSerialized(spec); });
        } else {
          cj::mathdx::MatmulSpec spec = specFrom(d);
          addSysPath();
          body = withoutGil([&] { return cj::mathdx::compileSerialized(spec); });
        }
        return py::bytes(body);
      },
      py::arg("spec"),
      "Instantiates a cuBLASDx (or, with routine='fft', cuFFTDx) descriptor through libmathdx in "
      "this process, no caches: the serialized result mathdx_matmul's / mathdx_fft's `elsewhere` "
      "returns (run in a fresh process).");
  m.def(
      "mathdx_fft_knobs",
      [](const py::dict& d, const std::vector<std::string>& knobs) {
        cj::mathdx::FftSpec spec = fftSpecFrom(d);
        addSysPath();
        return withoutGil([&] { return cj::mathdx::fftKnobs(spec, knobs); });
      },
      py::arg("spec"), py::arg("knobs"),
      "cuFFTDx's knob query through libmathdx in this process (nvmath's FFT.valid, which runs it "
      "in a fresh process): a list of lists of the knobs' values, one per valid combination.");
  m.def(
      "mathdx_library",
      [] {
        addSysPath();
        return withoutGil([] { return cj::mathdx::libraryDescription(); });
      },
      "'libmathdx X.Y.Z at <path>'; ImportError when it cannot be loaded.");
  m.def("mathdx_cache_stats", [] {
    cj::mathdx::CacheStats s = cj::mathdx::cacheStats();
    py::dict out;
    out["memory_hits"] = s.memory_hits;
    out["disk_hits"] = s.disk_hits;
    out["compiles"] = s.compiles;
    out["directory"] = cj::mathdx::cacheDirectory();
    return out;
  }, "Counters of this process's MathDx caches.");
  m.def("mathdx_clear_memory_cache", &cj::mathdx::clearMemoryCache,
        "Forgets this process's MathDx results (the next call reads the disk cache).");
}
