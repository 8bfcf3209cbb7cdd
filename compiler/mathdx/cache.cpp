// The caches in front of libmathdx (an instantiation costs an NVRTC compile
// of cuBLASDx, cuFFTDx or cuRANDDx, 5-20 s): this process's results by spec, then a
// support/disk_cache.h directory <cache root>/mathdx of <sha256>.cjmdx
// entries, keyed by the spec and libmathdx's identity (version, file size
// and mtime of libmathdx and of the NVRTC it runs on).
//
// Entry body: "key value..." lines (traits, LTO-IR sizes), an empty line,
// then the LTO-IR modules back to back. The stored spec must equal the
// requested one (a key collision reads as corrupt and is recompiled).
#include <algorithm>
#include <atomic>
#include <thread>
#include <map>
#include <mutex>
#include <cstdlib>

#include "mathdx/fft.h"
#include "mathdx/library.h"
#include "mathdx/random.h"
#include "mathdx/tensor.h"
#include "mathdx/mathdx.h"
#include "mathdx/matmul.h"
#include "support/disk_cache.h"
#include "support/sha256.h"

namespace cj::mathdx {
namespace {

constexpr uint32_t kFormatVersion = 1;

// One routine kind's results: by spec text, and by specKey (what kernels name).
template <class Result>
struct Store {
  std::map<std::string, std::shared_ptr<const Result>> memory, by_key;
};
std::mutex g_mutex;
Store<MatmulResult> g_matmuls;
Store<FftResult> g_ffts;
Store<RandomResult> g_randoms;
Store<TensorFunctionResult> g_tensor_functions;
InstantiateTensorFunction g_tensor_instantiator;
std::map<std::string, TensorFunctionSpec> g_pipeline_specs;   // by key: the tensor functions served with a pipeline
std::function<void(const std::function<void()>&)> g_unlocked_section;   // setUnlockedSection
// The specs served, by key (fftWithApi / matmulWithApi make siblings of
// them), and the instantiators the binding registered for siblings.
std::map<std::string, FftSpec> g_fft_specs;
std::map<std::string, MatmulSpec> g_matmul_specs;
InstantiateFft g_fft_instantiator;
Instantiate g_matmul_instantiator;
std::atomic<int64_t> g_memory_hits{0}, g_disk_hits{0}, g_compiles{0};

DiskCache diskCache() { return DiskCache(cacheDirectory(), ".cjmdx", "CJMATHDX", kFormatVersion); }

// The array fields of MatmulResult, by their names in the entry.
struct ArrayField {
  const char* name;
  std::array<int64_t, 3> MatmulResult::*field;
};
const ArrayField kArrays[] = {
    {"value_size", &MatmulResult::value_size},
    {"size", &MatmulResult::size},
    {"block_dim", &MatmulResult::block_dim},
    {"suggested_block_dim", &MatmulResult::suggested_block_dim},
    {"leading_dimension", &MatmulResult::leading_dimension},
    {"suggested_leading_dimension", &MatmulResult::suggested_leading_dimension},
    {"alignment", &MatmulResult::alignment},
};
struct NameField {
  const char* name;
  std::array<std::string, 3> MatmulResult::*field;
};
const NameField kNames[] = {
    {"value_type", &MatmulResult::value_type},
    {"arrangement", &MatmulResult::arrangement},
};

// An entry's body: "key value..." lines, an empty line, the LTO-IR modules.
// No iostreams (spec.cpp says why): integers through std::to_string and strtoll.
using Lines = std::vector<std::pair<std::string, std::string>>;

std::string writeEntry(const std::string& spec, const std::string& symbol, Lines lines,
                       const std::vector<std::vector<char>>& ltoir) {
  std::string out = "spec " + spec + "\nsymbol " + symbol + "\n";
  for (const auto& [key, value] : lines) out += key + " " + value + "\n";
  out += "ltoir";
  for (const auto& m : ltoir) out += " " + std::to_string(m.size());
  out += "\n\n";
  for (const auto& m : ltoir) out.append(m.data(), m.size());
  return out;
}

// The space-separated words of a line.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < line.size()) {
    size_t end = line.find(' ', at);
    if (end == std::string::npos) end = line.size();
    out.push_back(line.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

int64_t number(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); }

// Whether an entry holds LTO-IR: a Matmul's or FFT's spec text says ", code=none, "
// when it holds the traits alone (MatmulSpec / FftSpec::toString).
bool specHasCode(const std::string& spec) { return spec.find(", code=none, ") == std::string::npos; }

// Reads an entry: `line(key, rest, words)` for each line but spec, symbol
// and ltoir. False when malformed or for another spec, or without code
// unless `code` is false (a tensor-traits entry has none).
template <class LineFn>
bool readEntry(const std::string& body, const std::string& spec, std::string* symbol,
               std::vector<std::vector<char>>* ltoir, LineFn line, bool code = true) {
  size_t end = body.find("\n\n");
  if (end == std::string::npos) return false;
  std::vector<size_t> sizes;
  std::string stored_spec;
  for (size_t at = 0; at < end;) {
    size_t eol = body.find('\n', at);
    if (eol == std::string::npos || eol > end) eol = end;
    std::string text = body.substr(at, eol - at);
    at = eol + 1;
    size_t space = text.find(' ');
    std::string key = text.substr(0, space);
    std::string rest = space == std::string::npos ? std::string() : text.substr(space + 1);
    if (key == "spec") stored_spec = rest;
    else if (key == "symbol") *symbol = rest;
    else if (key == "ltoir") for (const auto& w : words(rest)) sizes.push_back(size_t(number(w)));
    else line(key, rest, words(rest));
  }
  size_t at = end + 2;
  for (size_t s : sizes) {
    if (at + s > body.size()) return false;
    ltoir->emplace_back(body.begin() + at, body.begin() + at + s);
    at += s;
  }
  return stored_spec == spec && at == body.size() && (!code || (!ltoir->empty() && !symbol->empty()));
}

std::string serialize(const MatmulResult& r) {
  Lines lines = {{"max_threads_per_block", std::to_string(r.max_threads_per_block)},
                 {"shared_memory_size", std::to_string(r.shared_memory_size)}};
  if (!r.api.empty()) lines.push_back({"api", r.api});
  for (const auto& f : kArrays) {
    const auto& v = r.*f.field;
    lines.push_back({f.name, std::to_string(v[0]) + " " + std::to_string(v[1]) + " " + std::to_string(v[2])});
  }
  for (const auto& f : kNames) {
    const auto& v = r.*f.field;
    lines.push_back({f.name, v[0] + " " + v[1] + " " + v[2]});
  }
  return writeEntry(r.spec, r.symbol, std::move(lines), r.ltoir);
}

bool deserialize(const std::string& body, const std::string& spec, MatmulResult* r) {
  r->spec = spec;
  const bool code = specHasCode(spec);
  return readEntry(body, spec, &r->symbol, &r->ltoir,
                   [&](const std::string& key, const std::string&, const std::vector<std::string>& w) {
                     if (key == "max_threads_per_block" && w.size() == 1) r->max_threads_per_block = number(w[0]);
                     if (key == "api" && w.size() == 1) r->api = w[0];
                     if (key == "shared_memory_size" && w.size() == 1) r->shared_memory_size = number(w[0]);
                     for (const auto& f : kArrays)
                       if (key == f.name && w.size() == 3)
                         for (int i = 0; i < 3; ++i) (r->*f.field)[i] = number(w[i]);
                     for (const auto& f : kNames)
                       if (key == f.name && w.size() == 3)
                         for (int i = 0; i < 3; ++i) (r->*f.field)[i] = w[i];
                   },
                   code);
}

// FftResult's fields by their names in the entry.
struct FftNumber {
  const char* name;
  int64_t FftResult::*field;
};
const FftNumber kFftNumbers[] = {
    {"size", &FftResult::size},
    {"elements_per_thread", &FftResult::elements_per_thread},
    {"storage_size", &FftResult::storage_size},
    {"stride", &FftResult::stride},
    {"implicit_type_batching", &FftResult::implicit_type_batching},
    {"input_length", &FftResult::input_length},
    {"output_length", &FftResult::output_length},
    {"input_elements_per_thread", &FftResult::input_elements_per_thread},
    {"output_elements_per_thread", &FftResult::output_elements_per_thread},
    {"shared_memory_size", &FftResult::shared_memory_size},
    {"ffts_per_block", &FftResult::ffts_per_block},
    {"suggested_ffts_per_block", &FftResult::suggested_ffts_per_block},
};
struct FftName {
  const char* name;
  std::string FftResult::*field;
};
const FftName kFftNames[] = {
    {"execution", &FftResult::execution},
    {"api", &FftResult::api},
    {"value_type", &FftResult::value_type},
    {"input_type", &FftResult::input_type},
    {"output_type", &FftResult::output_type},
};

std::string serialize(const FftResult& r) {
  Lines lines;
  for (const auto& f : kFftNumbers) lines.push_back({f.name, std::to_string(r.*f.field)});
  for (const auto& f : kFftNames) lines.push_back({f.name, r.*f.field});
  lines.push_back({"block_dim", std::to_string(r.block_dim[0]) + " " + std::to_string(r.block_dim[1]) + " " +
                                    std::to_string(r.block_dim[2])});
  return writeEntry(r.spec, r.symbol, std::move(lines), r.ltoir);
}

bool deserialize(const std::string& body, const std::string& spec, FftResult* r) {
  r->spec = spec;
  const bool code = specHasCode(spec);
  return readEntry(body, spec, &r->symbol, &r->ltoir,
                   [&](const std::string& key, const std::string& rest, const std::vector<std::string>& w) {
                     for (const auto& f : kFftNumbers)
                       if (key == f.name && w.size() == 1) r->*f.field = number(w[0]);
                     for (const auto& f : kFftNames)
                       if (key == f.name) r->*f.field = rest;
                     if (key == "block_dim" && w.size() == 3)
                       for (int i = 0; i < 3; ++i) r->block_dim[i] = number(w[i]);
                   },
                   code);
}

const char* const kRandomSymbolKeys[] = {"init", "generate", "skip_offset", "skip_subsequence"};

std::string serialize(const RandomResult& r) {
  Lines lines = {{"state_size", std::to_string(r.state_size)},
                 {"state_alignment", std::to_string(r.state_alignment)},
                 {"count", std::to_string(r.count)},
                 {"output_type", r.output_type},
                 {"param_type", r.param_type}};
  for (size_t f = 0; f < r.symbols.size(); ++f) lines.push_back({std::string("symbol_") + kRandomSymbolKeys[f], r.symbols[f]});
  return writeEntry(r.spec, r.symbols[static_cast<size_t>(RandomFunction::Generate)], std::move(lines), {*r.ltoir});
}

bool deserialize(const std::string& body, const std::string& spec, RandomResult* r) {
  r->spec = spec;
  std::string symbol;
  std::vector<std::vector<char>> modules;
  bool ok = readEntry(body, spec, &symbol, &modules,
                      [&](const std::string& key, const std::string& rest, const std::vector<std::string>& w) {
                        if (key == "state_size" && w.size() == 1) r->state_size = number(w[0]);
                        if (key == "state_alignment" && w.size() == 1) r->state_alignment = number(w[0]);
                        if (key == "count" && w.size() == 1) r->count = number(w[0]);
                        if (key == "output_type") r->output_type = rest;
                        if (key == "param_type") r->param_type = rest;
                        for (size_t f = 0; f < r->symbols.size(); ++f)
                          if (key == std::string("symbol_") + kRandomSymbolKeys[f]) r->symbols[f] = rest;
                      });
  if (!ok || modules.size() != 1) return false;
  r->ltoir = std::make_shared<const std::vector<char>>(std::move(modules[0]));
  for (const auto& s : r->symbols)
    if (s.empty()) return false;
  return r->state_size > 0;
}

// A tensor function: its symbol and code, and one "tensor" line per tensor:
// uid storage_bytes alignment logical_size; with a pipeline, a "device_pipeline"
// and a "tile_pipeline" line: storage_bytes storage_alignment buffer_size
// buffer_alignment block_dim (3).
const struct {
  const char* name;
  PipelineTraits TensorFunctionResult::*field;
} kPipelineLines[] = {{"device_pipeline", &TensorFunctionResult::device_pipeline},
                      {"tile_pipeline", &TensorFunctionResult::tile_pipeline}};

std::string serialize(const TensorFunctionResult& r) {
  Lines lines;
  for (const TensorTraits& t : r.tensors)
    lines.push_back({"tensor", std::to_string(t.uid) + " " + std::to_string(t.storage_bytes) + " " +
                                   std::to_string(t.alignment) + " " + std::to_string(t.logical_size)});
  for (const auto& row : kPipelineLines) {
    const PipelineTraits& p = r.*row.field;
    if (!p.storage_bytes) continue;
    std::string v;
    for (int64_t x : {p.storage_bytes, p.storage_alignment, p.buffer_size, p.buffer_alignment, p.block_dim[0],
                      p.block_dim[1], p.block_dim[2]})
      v += (v.empty() ? "" : " ") + std::to_string(x);
    lines.push_back({row.name, v});
  }
  return writeEntry(r.spec, r.symbol, std::move(lines), r.ltoir);
}

bool deserialize(const std::string& body, const std::string& spec, TensorFunctionResult* r) {
  r->spec = spec;
  const bool code = spec.rfind("TENSORS(function=traits,", 0) != 0;
  bool ok = readEntry(
      body, spec, &r->symbol, &r->ltoir,
      [&](const std::string& key, const std::string&, const std::vector<std::string>& w) {
        if (key == "tensor" && w.size() == 4) r->tensors.push_back({number(w[0]), number(w[1]), number(w[2]), number(w[3])});
        for (const auto& row : kPipelineLines)
          if (key == row.name && w.size() == 7)
            r->*row.field = {number(w[0]), number(w[1]), number(w[2]), number(w[3]), {number(w[4]), number(w[5]), number(w[6])}};
      },
      code);
  return ok && (code || r->ltoir.empty());
}

// The memory cache, the disk cache, else an instantiation (through
// `elsewhere` when given).
template <class Result, class Spec, class Elsewhere>
std::shared_ptr<const Result> serve(Store<Result>& store, const Spec& spec, const Elsewhere& elsewhere) {
  const std::string text = spec.toString();
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = store.memory.find(text);
    if (it != store.memory.end()) {
      ++g_memory_hits;
      return it->second;
    }
  }
  const Api& a = api();   // LibraryMissing before any cache is read
  const std::string key = sha256Hex(std::to_string(kFormatVersion) + "\n" + a.identity + "\n" + text);
  DiskCache disk = diskCache();
  std::string body;
  auto result = std::make_shared<Result>();
  if (disk.load(key, &body) == CacheLoad::Hit && deserialize(body, text, result.get())) {
    ++g_disk_hits;
  } else {
    // One instantiation at a time in this process: libmathdx does not say it
    // is thread-safe. Those `elsewhere` makes (each in a process of its own)
    // may run side by side.
    static std::mutex compile_mutex;
    std::unique_lock<std::mutex> lock(compile_mutex, std::defer_lock);
    if (!elsewhere) lock.lock();
    *result = Result{};
    body = elsewhere ? elsewhere(spec) : compileSerialized(spec);
    if (!deserialize(body, text, result.get()))
      throw ToolchainError("libmathdx: the instantiation of " + text + " came back malformed");
    ++g_compiles;
    disk.store(key, body);   // a failed write only costs the next process a compile
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  auto served = store.memory.emplace(text, std::move(result)).first->second;
  store.by_key[specKey(text)] = served;
  return served;
}

template <class Result>
std::shared_ptr<const Result> lookup(const Store<Result>& store, const std::string& key) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = store.by_key.find(key);
  return it == store.by_key.end() ? nullptr : it->second;
}

}  // namespace

std::string cacheDirectory() { return userCacheRoot() + "/mathdx"; }

std::string compileSerialized(const MatmulSpec& spec) { return serialize(compileMatmul(spec)); }
std::string compileSerialized(const FftSpec& spec) { return serialize(compileFft(spec)); }
std::string compileSerialized(const RandomSpec& spec) { return serialize(compileRandom(spec)); }
std::string compileSerialized(const TensorFunctionSpec& spec) { return serialize(compileTensorFunction(spec)); }

template <class Result, class Spec, class Elsewhere>
std::shared_ptr<const Result> serveRecorded(Store<Result>& store, std::map<std::string, Spec>& specs, const Spec& spec,
                                            const Elsewhere& elsewhere) {
  auto r = serve(store, spec, elsewhere);
  std::lock_guard<std::mutex> lock(g_mutex);
  specs.emplace(specKey(r->spec), spec);
  return r;
}

// The served spec of `key` changed by `vary` (another api, the code),
// through the registered instantiator.
template <class Result, class Spec, class Elsewhere, class Vary>
std::shared_ptr<const Result> sibling(Store<Result>& store, std::map<std::string, Spec>& specs,
                                      const Elsewhere& registered, const std::string& key, const Vary& vary) {
  Spec spec;
  Elsewhere instantiate;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = specs.find(key);
    if (it == specs.end()) return nullptr;
    spec = it->second;
    instantiate = registered;
  }
  const std::string before = spec.toString();
  vary(spec);
  if (spec.toString() == before) return lookup(store, key);
  if (!instantiate)
    throw ToolchainError("cudajit.mathdx: no instantiator registered for " + spec.toString() +
                         " (import cudajit.mathdx registers it)");
  return serveRecorded(store, specs, spec, instantiate);
}

std::shared_ptr<const MatmulResult> matmul(const MatmulSpec& spec, const Instantiate& elsewhere) {
  return serveRecorded(g_matmuls, g_matmul_specs, spec, elsewhere);
}

std::shared_ptr<const FftResult> fft(const FftSpec& spec, const InstantiateFft& elsewhere) {
  return serveRecorded(g_ffts, g_fft_specs, spec, elsewhere);
}

void setFftInstantiator(InstantiateFft instantiate) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_fft_instantiator = std::move(instantiate);
}

void setMatmulInstantiator(Instantiate instantiate) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_matmul_instantiator = std::move(instantiate);
}

std::shared_ptr<const FftResult> fftWithApi(const std::string& key, const std::string& api) {
  return sibling(g_ffts, g_fft_specs, g_fft_instantiator, key, [&](FftSpec& s) { s.api = api; });
}

std::shared_ptr<const MatmulResult> matmulWithApi(const std::string& key, const std::string& api) {
  return sibling(g_matmuls, g_matmul_specs, g_matmul_instantiator, key, [&](MatmulSpec& s) { s.api = api; });
}

std::shared_ptr<const MatmulResult> matmulCode(const std::string& key) {
  auto r = lookup(g_matmuls, key);
  if (r && !r->ltoir.empty()) return r;
  return sibling(g_matmuls, g_matmul_specs, g_matmul_instantiator, key, [](MatmulSpec& s) { s.code = true; });
}

std::shared_ptr<const RandomResult> random(const RandomSpec& spec, const InstantiateRandom& elsewhere) {
  return serve(g_randoms, spec, elsewhere);
}

void setTensorFunctionInstantiator(InstantiateTensorFunction instantiate) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_tensor_instantiator = std::move(instantiate);
}

std::shared_ptr<const TensorFunctionResult> tensorFunction(const TensorFunctionSpec& spec,
                                                           const InstantiateTensorFunction& elsewhere) {
  InstantiateTensorFunction instantiate = elsewhere;
  if (!instantiate) {
    std::lock_guard<std::mutex> lock(g_mutex);
    instantiate = g_tensor_instantiator;
  }
  TensorFunctionSpec tensors = spec;
  tensors.matmul.api = "tensors";
  auto r = serve(g_tensor_functions, tensors, instantiate);
  if (tensors.pipeline.depth > 0) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_pipeline_specs.emplace(specKey(r->spec), tensors);
  }
  return r;
}

bool servedPipelineSpec(const std::string& key, TensorFunctionSpec* spec) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_pipeline_specs.find(key);
  if (it == g_pipeline_specs.end()) return false;
  *spec = it->second;
  return true;
}

bool servedMatmulSpec(const std::string& key, MatmulSpec* spec) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_matmul_specs.find(key);
  if (it == g_matmul_specs.end()) return false;
  *spec = it->second;
  return true;
}

bool matmulTraitsSpec(const std::string& mm_key, const std::string& like, TensorFunctionSpec* spec) {
  if (!servedMatmulSpec(mm_key, &spec->matmul)) return false;
  // libmathdx makes a tensor "like" another value type of every tensor but
  // the accumulators.
  spec->function = "traits";
  spec->tensors.clear();
  for (const std::string& n : tensorTypeNames())
    if (like.empty() || n.find("accumulator") == std::string::npos) spec->tensors.push_back({n, like});
  return true;
}

TensorTraits matmulTensorTraits(const std::string& mm_key, const std::string& tensor, const std::string& like) {
  TensorFunctionSpec spec;
  if (!matmulTraitsSpec(mm_key, like, &spec))
    throw ToolchainError("cudajit.mathdx: Matmul " + mm_key + " was not built in this process");
  auto r = tensorFunction(spec);
  for (size_t i = 0; i < spec.tensors.size() && i < r->tensors.size(); ++i)
    if (spec.tensors[i].type == tensor) return r->tensors[i];
  throw ToolchainError("cudajit.mathdx: no tensor type '" + tensor + "'");
}

void prefetchTensorFunctions(const std::vector<TensorFunctionSpec>& specs) {
  std::vector<TensorFunctionSpec> missing;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const TensorFunctionSpec& spec : specs) {
      TensorFunctionSpec t = spec;
      t.matmul.api = "tensors";
      if (!g_tensor_functions.memory.count(t.toString())) missing.push_back(t);
    }
  }
  if (missing.size() < 2) return;   // one is made by its call, where its errors belong
  const size_t threads = std::min<size_t>(
      missing.size(), std::max<unsigned>(2, std::min<unsigned>(8, std::thread::hardware_concurrency())));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < missing.size();) {
      try {
        tensorFunction(missing[i]);
      } catch (const std::exception&) {
        // its call instantiates it again and reports the error there
      }
    }
  };
  auto parallel = [&] {
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
  };
  std::function<void(const std::function<void()>&)> unlocked;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    unlocked = g_unlocked_section;
  }
  if (unlocked) unlocked(parallel);
  else parallel();
}

void setUnlockedSection(std::function<void(const std::function<void()>&)> run) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_unlocked_section = std::move(run);
}

std::shared_ptr<const TensorFunctionResult> servedTensorFunction(const std::string& key) {
  return lookup(g_tensor_functions, key);
}

// libmathdx's version is part of the key: a kernel cached on disk under it
// (the key is in its IR) is not reused with another libmathdx's code.
std::string specKey(const std::string& spec_text) {
  return sha256Hex("libmathdx " + api().version + "\n" + spec_text).substr(0, 16);
}

std::shared_ptr<const MatmulResult> servedResult(const std::string& key) { return lookup(g_matmuls, key); }
std::shared_ptr<const FftResult> servedFft(const std::string& key) { return lookup(g_ffts, key); }
std::shared_ptr<const RandomResult> servedRandom(const std::string& key) { return lookup(g_randoms, key); }

CacheStats cacheStats() { return {g_memory_hits.load(), g_disk_hits.load(), g_compiles.load()}; }

void clearMemoryCache() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_matmuls.memory.clear();
  g_ffts.memory.clear();
  g_randoms.memory.clear();
  g_tensor_functions.memory.clear();
}

}  // namespace cj::mathdx
