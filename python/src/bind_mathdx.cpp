// MathDx descriptors for cudajit.mathdx: a dict of nvmath.device's
// parameters -> {traits, symbol, ltoir}. libmathdx missing -> ImportError
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
                             "leading_dimension", "alignment", "function", "execution", "sm"};

// The dict cudajit/mathdx.py builds (normalized spellings, sm as 80/90).
cj::mathdx::MatmulSpec specFrom(const py::dict& d) {
  for (auto item : d) {
    std::string k = py::cast<std::string>(item.first);
    bool known = false;
    for (const char* key : kKeys) known = known || k == key;
    if (!known) throw py::value_error("mathdx: unknown key '" + k + "'");
  }
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
  setScalar(d, "sm", &s.sm);
  return s;
}

void addSysPath() { cj::mathdx::addSiteDirectories(cj::py_sys::sysPathEntries()); }

template <class T>
py::tuple tuple3(const std::array<T, 3>& v) { return py::make_tuple(v[0], v[1], v[2]); }

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
        std::shared_ptr<const cj::mathdx::MatmulResult> r;
        try {
          py::gil_scoped_release release;
          r = cj::mathdx::matmul(spec, instantiate);
        } catch (const cj::mathdx::LibraryMissing& e) {
          throw py::import_error(e.what());
        }
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
      "mathdx_compile_serialized",
      [](const py::dict& d) {
        cj::mathdx::MatmulSpec spec = specFrom(d);
        addSysPath();
        std::string body;
        try {
          py::gil_scoped_release release;
          body = cj::mathdx::compileSerialized(spec);
        } catch (const cj::mathdx::LibraryMissing& e) {
          throw py::import_error(e.what());
        }
        return py::bytes(body);
      },
      py::arg("spec"),
      "Instantiates a cuBLASDx descriptor through libmathdx in this process, no caches: the "
      "serialized result mathdx_matmul's `elsewhere` returns (run in a fresh process).");
  m.def(
      "mathdx_library",
      [] {
        addSysPath();
        try {
          return cj::mathdx::libraryDescription();
        } catch (const cj::mathdx::LibraryMissing& e) {
          throw py::import_error(e.what());
        }
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
