// The providers, one row per library, and the stage itself (resolve.h).
#include <map>
#include <set>

#include "libcalls/provider.h"
#include "libcalls/resolve.h"
#include "support/error.h"

namespace cj::libcalls {

const Provider& cubProvider();      // cub_provider.cpp
const Provider& mathdxProvider();   // mathdx_provider.cpp
const Provider& foreignProvider();  // foreign_provider.cpp

namespace {

struct ProviderRow {
  Library library;
  const Provider& (*get)();
};

// Adding a library: one row (and its Provider subclass in a file of its own).
constexpr ProviderRow kProviders[] = {
    {Library::Cub, cubProvider},
    {Library::Mathdx, mathdxProvider},
    {Library::Foreign, foreignProvider},
};

}  // namespace

const Provider& providerFor(Library lib) {
  for (const ProviderRow& row : kProviders)
    if (row.library == lib) return row.get();
  throw ToolchainError("no provider for library '" + std::string(libraryName(lib)) + "'");
}

std::vector<LibraryCall> collect(const ir::Module& typed) {
  std::vector<LibraryCall> out;
  std::set<LibraryCall> seen;
  for (const auto& fn : typed.functions)
    for (const auto& b : fn->blocks)
      for (const auto& in : b->instrs)
        if (std::optional<LibraryCall> call = libraryCallOf(*in))
          if (seen.insert(*call).second) out.push_back(std::move(*call));
  return out;
}

ResolvedCalls resolve(const std::vector<LibraryCall>& calls) {
  // Each library's descriptors together, so its provider compiles them at once.
  std::map<Library, std::vector<std::string>> by_library;
  for (const LibraryCall& c : calls) by_library[c.library].push_back(c.descriptor);
  std::map<LibraryCall, ResolvedCall> resolved;
  for (auto& [lib, descriptors] : by_library) {
    std::vector<ResolvedCall> r = providerFor(lib).resolve(descriptors);
    for (size_t i = 0; i < descriptors.size(); ++i) resolved[{lib, descriptors[i]}] = std::move(r[i]);
  }
  ResolvedCalls out;
  for (const LibraryCall& c : calls) out.add(c, resolved[c]);   // in order of appearance
  return out;
}

}  // namespace cj::libcalls
