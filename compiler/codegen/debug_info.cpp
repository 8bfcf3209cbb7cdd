#include "codegen/debug_info.h"

namespace cj::codegen {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

DebugInfo::DebugInfo(Metadata& md, const ir::Module& m) : md_(md) {
  std::string main_file =
      m.functions.empty() || m.functions[0]->filename.empty() ? "<unknown>" : m.functions[0]->filename;
  int f = file(main_file);
  cu_ = md_.add("!DICompileUnit(language: DW_LANG_Python, file: !" + std::to_string(f) +
                    ", producer: \"cudajit\", isOptimized: true, runtimeVersion: 0, "
                    "emissionKind: DebugDirectivesOnly)",
                /*distinct=*/true);
  subroutine_type_ = md_.add("!DISubroutineType(types: !{})");
  flags_ = md_.add("!{i32 2, !\"Debug Info Version\", i32 3}");
}

int DebugInfo::file(const std::string& path) {
  auto it = files_.find(path);
  if (it != files_.end()) return it->second;
  std::string dir, name = path;
  size_t slash = path.rfind('/');
  if (slash != std::string::npos) {
    dir = path.substr(0, slash);
    name = path.substr(slash + 1);
  }
  int id = md_.add("!DIFile(filename: " + quoted(name) + ", directory: " + quoted(dir) + ")");
  files_[path] = id;
  return id;
}

int DebugInfo::subprogram(const ir::Function& fn, const std::string& linkage_name, bool local) {
  int f = file(fn.filename.empty() ? "<unknown>" : fn.filename);
  std::string line = std::to_string(fn.first_line);
  std::string name = fn.py_name.empty() ? fn.name : fn.py_name;
  int sp = md_.add("!DISubprogram(name: " + quoted(name) + ", linkageName: " + quoted(linkage_name) +
                       ", scope: !" + std::to_string(f) + ", file: !" + std::to_string(f) +
                       ", line: " + line + ", type: !" + std::to_string(subroutine_type_) +
                       ", isLocal: " + (local ? "true" : "false") +
                       ", isDefinition: true, scopeLine: " + line +
                       ", isOptimized: true, unit: !" + std::to_string(cu_) + ")",
                   /*distinct=*/true);
  first_line_[sp] = fn.first_line;
  return sp;
}

int DebugInfo::location(int subprogram, ir::Loc loc) {
  int line = loc.line > 0 ? loc.line : first_line_[subprogram];
  int col = loc.line > 0 ? loc.col : 0;
  return md_.add("!DILocation(line: " + std::to_string(line) + ", column: " + std::to_string(col) +
                 ", scope: !" + std::to_string(subprogram) + ")");
}

std::string DebugInfo::namedMetadata() const {
  return "!llvm.dbg.cu = !{!" + std::to_string(cu_) + "}\n!llvm.module.flags = !{!" +
         std::to_string(flags_) + "}\n";
}

}  // namespace cj::codegen
