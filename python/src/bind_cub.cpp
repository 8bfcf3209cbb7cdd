// CUB instantiations for tests and tools: build a spec from a dict, compile
// (or fetch from the caches) its LTO-IR, read the cache counters.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "codegen/backend.h"
#include "cub/cub.h"
#include "cub/toolkit.h"
#include "support/error.h"
#include "support/lru_map.h"
#include "sys_path_py.h"

namespace py = pybind11;

namespace {

const char* const kSpecKeys[] = {"algorithm", "dtype",       "value_dtype",  "op",
                                 "user_op",   "block",       "items_per_thread", "arrangement",
                                 "warp_threads", "bins",     "arch",        "sync"};

template <class E>
E parseEnum(const py::dict& d, const char* key, bool (*parse)(std::string_view, E*)) {
  std::string s = py::cast<std::string>(d[key]);
  E out;
  if (!parse(s, &out)) throw py::value_error(std::string("CUB spec: unknown ") + key + " '" + s + "'");
  return out;
}

// {"algorithm": "block_reduce", "dtype": "float32", "op": "sum", "block": 256, ...}
cj::cub::Spec specFromDict(const py::dict& d) {
  for (auto item : d) {
    std::string k = py::cast<std::string>(item.first);
    bool known = false;
    for (const char* key : kSpecKeys) known = known || k == key;
    if (!known) throw py::value_error("CUB spec: unknown key '" + k + "'");
  }
  if (!d.contains("algorithm") || !d.contains("dtype"))
    throw py::value_error("CUB spec needs 'algorithm' and 'dtype'");
  cj::cub::Spec s;
  s.algorithm = parseEnum(d, "algorithm", &cj::cub::parseAlgorithm);
  s.dtype = parseEnum(d, "dtype", &cj::cub::parseDtype);
  if (d.contains("value_dtype")) s.value_dtype = parseEnum(d, "value_dtype", &cj::cub::parseDtype);
  if (d.contains("op")) s.op = parseEnum(d, "op", &cj::cub::parseOp);
  if (d.contains("user_op")) s.user_op = py::cast<std::string>(d["user_op"]);
  if (d.contains("block")) {
    py::object b = d["block"];
    if (py::isinstance<py::int_>(b)) {
      s.block[0] = py::cast<int>(b);
    } else {
      auto dims = py::cast<std::vector<int>>(b);
      if (dims.empty() || dims.size() > 3) throw py::value_error("CUB spec: block has 1 to 3 dimensions");
      for (size_t i = 0; i < dims.size(); ++i) s.block[i] = dims[i];
    }
  }
  if (d.contains("items_per_thread")) s.items_per_thread = py::cast<int>(d["items_per_thread"]);
  if (d.contains("arrangement")) s.arrangement = parseEnum(d, "arrangement", &cj::cub::parseArrangement);
  if (d.contains("warp_threads")) s.warp_threads = py::cast<int>(d["warp_threads"]);
  if (d.contains("bins")) s.bins = py::cast<int>(d["bins"]);
  if (d.contains("arch")) s.arch = py::cast<int>(d["arch"]);
  if (d.contains("sync")) s.sync = py::cast<bool>(d["sync"]);
  return s;
}

// A spec is a dict or its one-line text form (spec.h: toString).
cj::cub::Spec specFrom(const py::object& o) {
  if (py::isinstance<py::str>(o)) {
    cj::cub::Spec s;
    std::string error;
    if (!cj::cub::parseSpec(py::cast<std::string>(o), &s, &error)) throw py::value_error(error);
    return s;
  }
  if (!py::isinstance<py::dict>(o)) throw py::type_error("a CUB spec is a dict or a str");
  return specFromDict(o.cast<py::dict>());
}

void addSysPath() { cj::cub::addSiteDirectories(cj::py_sys::sysPathEntries()); }

}  // namespace

void bindCub(py::module_& m) {
  m.def(
      "cub_ltoir",
      [](const py::object& d) {
        cj::cub::Spec spec = specFrom(d);
        addSysPath();
        cj::cub::Instance inst;
        {
          py::gil_scoped_release release;
          inst = cj::cub::instantiate(spec);
        }
        py::bytes ltoir(inst.ltoir->data(), inst.ltoir->size());
        std::vector<std::string> names = {inst.entry.name};
        return py::make_tuple(ltoir, inst.temp_bytes, inst.temp_align, names);
      },
      py::arg("spec"),
      "Compiles (or fetches from the memory / disk cache) the CUB instantiation a spec (dict "
      "or text form) describes. Returns (ltoir bytes, temp_bytes, temp_align, [entry point names]).");
  m.def(
      "cub_describe",
      [](const py::object& d) {
        cj::cub::Generated g = cj::cub::generate(specFrom(d));
        py::dict out;
        out["spec"] = cj::cub::toString(g.spec);
        out["name"] = g.entry.name;
        out["c_declaration"] = g.entry.cDeclaration();
        out["nvvm_declaration"] = cj::codegen::nvvmBackend().externDeclaration(g.entry.name, g.entry.signature());
        out["source"] = g.source;
        return out;
      },
      py::arg("spec"),
      "The entry point of a spec without compiling: {spec (normalized, text form), name, "
      "c_declaration, nvvm_declaration, source}.");
  m.def(
      "cub_cache_stats",
      [] {
        cj::cub::CacheStats s = cj::cub::cacheStats();
        py::dict out;
        out["memory_hits"] = s.memory_hits;
        out["disk_hits"] = s.disk_hits;
        out["compiles"] = s.compiles;
        out["corrupt_entries"] = s.corrupt_entries;
        out["write_failures"] = s.write_failures;
        out["compile_seconds"] = s.compile_seconds;
        out["memory_entries"] = s.memory_entries;
        out["evictions"] = s.evictions;
        out["directory"] = cj::cub::cacheDirectory();
        return out;
      },
      "Counters of this process's CUB caches (hits per level, NVRTC compiles, rejected entries).");
  m.def("memory_cache_limit", &cj::memoryCacheLimit,
        "The most entries each bounded in-memory cache keeps (CUB instantiations, tile "
        "specialisations, each kernel's overloads compiled at launch): "
        "set_memory_cache_limit(), else $CUDAJIT_MEMORY_CACHE_ENTRIES, else 1024; 0: no bound.");
  m.def("set_memory_cache_limit", [](int64_t entries) {
        if (entries < 0) throw py::value_error("the memory cache limit must be >= 0 (0: no bound)");
        cj::setMemoryCacheLimit(static_cast<size_t>(entries));
      }, py::arg("entries"),
      "Bounds the in-memory caches (library instantiations, tile specialisations, each kernel's "
      "overloads compiled at launch) to their `entries` most recently used (0: no bound); entries "
      "dropped come back from the disk cache.");
  m.def("cub_clear_memory_cache", &cj::cub::clearMemoryCache,
        "Forgets this process's compiled CUB instances (the next call reads the disk cache).");
  m.def(
      "cub_cache_path", [](const py::object& d) { return cj::cub::cachePath(specFrom(d)); },
      py::arg("spec"), "The disk-cache file of a spec's LTO-IR.");
  m.def("cub_toolchain", [] {
    addSysPath();
    return cj::cub::toolchainDescription();
  }, "Which NVRTC and CCCL headers the CUB instantiations use.");
}
