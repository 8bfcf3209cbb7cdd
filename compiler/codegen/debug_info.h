// Line tables for lineinfo/debug: one DICompileUnit, a DIFile per Python
// source file, a DISubprogram per function, a DILocation per (line, col,
// scope). libNVVM turns them into PTX .file/.loc directives
// (-generate-line-info), which is what profilers and compute-sanitizer show.
#pragma once
#include <map>
#include <string>

#include "codegen/emitter.h"

namespace cj::codegen {

class DebugInfo {
 public:
  DebugInfo(Metadata& md, const ir::Module& m);
  // The DISubprogram node of a function.
  int subprogram(const ir::Function& fn, const std::string& linkage_name, bool local);
  // The DILocation node for `loc` in `subprogram` (line 0: the function's line).
  int location(int subprogram, ir::Loc loc);
  // Named metadata: !llvm.dbg.cu and !llvm.module.flags.
  std::string namedMetadata() const;

 private:
  int file(const std::string& path);

  Metadata& md_;
  int cu_ = -1;
  int subroutine_type_ = -1;
  int flags_ = -1;
  std::map<std::string, int> files_;
  std::map<int, int> first_line_;   // subprogram -> its line
};

}  // namespace cj::codegen
