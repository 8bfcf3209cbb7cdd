// A small cleanup the decoder runs on its own output so that the IR reads
// like the source: removes block parameters that receive one value on every
// edge and parameters nothing reads, merges a block into its only
// predecessor when that predecessor only branches to it, and drops constants
// and undefs nobody uses. (The general "simplify-params" and DCE passes still
// run later; this keeps the decoder's text form, which golden tests read,
// small.)
#pragma once
#include "ir/ir.h"

namespace cj::bytecode {

void cleanupDecoded(ir::Function& fn);

}  // namespace cj::bytecode
