#include "support/error.h"

namespace cj {

std::string CompileError::format(const std::string& file, int line, int col,
                                 const std::string& construct, const std::string& message,
                                 const std::string& hint) {
  std::string out = file.empty() ? std::string("<unknown>") : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (col > 0) out += ":" + std::to_string(col);
  }
  out += ": " + message;
  if (!construct.empty()) out += " [" + construct + "]";
  if (!hint.empty()) out += "\n  hint: " + hint;
  return out;
}

CompileError::CompileError(std::string file_, int line_, int col_, std::string construct_,
                           std::string message_, std::string hint_)
    : std::runtime_error(format(file_, line_, col_, construct_, message_, hint_)),
      file(std::move(file_)), line(line_), col(col_), construct(std::move(construct_)),
      message(std::move(message_)), hint(std::move(hint_)) {}

}  // namespace cj
