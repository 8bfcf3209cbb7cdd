#include "types/tile_layout.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "types/text_cursor.h"
#include "types/types.h"

namespace cj {
namespace {

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int64_t product(const std::vector<int>& v) {
  int64_t p = 1;
  for (int x : v) p *= x;
  return p;
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

const TileLayout* intern(TileLayout l) {
  using Key = std::tuple<int, std::vector<int>, std::vector<int>, std::vector<int>, std::vector<int>, int, int>;
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<TileLayout>> table;
  Key key{static_cast<int>(l.kind), l.size_per_thread, l.threads_per_warp, l.warps_per_cta, l.order,
          l.mma_version, l.mma_n};
  std::lock_guard<std::mutex> lock(mu);
  auto it = table.find(key);
  if (it != table.end()) return it->second.get();
  auto owned = std::make_unique<TileLayout>(std::move(l));
  const TileLayout* p = owned.get();
  table.emplace(std::move(key), std::move(owned));
  return p;
}

int log2(int64_t v) {
  int n = 0;
  while ((int64_t{1} << n) < v) ++n;
  return n;
}

// Register strides along one dimension: `first` (the bits inside one
// repetition), then the repetitions of `coverage` that the extent needs.
std::vector<int64_t> regStrides(std::vector<int64_t> first, int64_t coverage, int64_t extent) {
  for (int64_t rep = 1; rep * coverage < extent; rep <<= 1) first.push_back(rep * coverage);
  return first;
}

TileGeometry blockedGeometry(const TileLayout* l, const std::vector<int64_t>& shape) {
  TileGeometry g;
  g.order = l->order;
  g.dims.resize(l->rank());
  int lane_bit = 0, warp_bit = 0;
  for (int d : l->order) {
    TileDimMap& m = g.dims[d];
    int64_t spt = l->size_per_thread[d];
    m.lanes = l->threads_per_warp[d];
    m.lane_shift = lane_bit;
    m.lane_stride = spt;
    m.warps = l->warps_per_cta[d];
    m.warp_shift = warp_bit;
    m.warp_stride = spt * m.lanes;
    lane_bit += log2(m.lanes);
    warp_bit += log2(m.warps);
    std::vector<int64_t> within;
    for (int64_t s = 1; s < spt; s <<= 1) within.push_back(s);
    m.reg_strides = regStrides(within, spt * m.lanes * m.warps, shape[d]);
  }
  return g;
}

TileGeometry mmaGeometry(const TileLayout* l, const std::vector<int64_t>& shape) {
  TileGeometry g;
  g.order = {1, 0};   // a thread's column pairs first, then its rows: the m16n8 fragment order c0..c3
  g.dims.resize(2);
  int wm = l->warps_per_cta[0], wn = l->warps_per_cta[1];
  TileDimMap& rows = g.dims[0];
  rows.lanes = 8;
  rows.lane_shift = 2;
  rows.lane_stride = 1;
  rows.warps = wm;
  rows.warp_stride = 16;
  rows.reg_strides = regStrides({8}, int64_t{16} * wm, shape[0]);
  TileDimMap& cols = g.dims[1];
  cols.lanes = 4;
  cols.lane_stride = 2;
  cols.warps = wn;
  cols.warp_shift = log2(wm);
  cols.warp_stride = l->mma_n;
  std::vector<int64_t> within = {1};
  for (int64_t s = 8; s < l->mma_n; s <<= 1) within.push_back(s);
  cols.reg_strides = regStrides(within, int64_t{l->mma_n} * wn, shape[1]);
  return g;
}

// Splits a register number into per-dimension register coordinates (the
// fastest dimension of `order` varying fastest), and back.
std::vector<int64_t> splitRegister(const TileGeometry& g, int64_t r) {
  std::vector<int64_t> coord(g.dims.size());
  for (int d : g.order) {
    coord[d] = r % g.dims[d].registers();
    r /= g.dims[d].registers();
  }
  return coord;
}
int64_t joinRegister(const TileGeometry& g, const std::vector<int64_t>& coord) {
  int64_t r = 0, stride = 1;
  for (int d : g.order) {
    r += coord[d] * stride;
    stride *= g.dims[d].registers();
  }
  return r;
}

}  // namespace

int TileLayout::numWarps() const { return static_cast<int>(product(warps_per_cta)); }

std::string blockedLayoutError(const std::vector<int>& spt, const std::vector<int>& tpw,
                               const std::vector<int>& wpc, const std::vector<int>& order) {
  size_t r = order.size();
  if (r == 0 || r > static_cast<size_t>(kMaxTileRank))
    return "a blocked layout has 1 to " + std::to_string(kMaxTileRank) + " dimensions";
  if (spt.size() != r || tpw.size() != r || wpc.size() != r)
    return "size per thread, threads per warp, warps per CTA and order need one entry per dimension";
  for (const auto* v : {&spt, &tpw, &wpc})
    for (int x : *v)
      if (!isPowerOfTwo(x) || x > kMaxTileElements)
        return "every size, thread and warp count is a power of two, not " + std::to_string(x);
  if (product(tpw) != 32) return "threads per warp multiply to " + std::to_string(product(tpw)) + ", not 32";
  if (product(wpc) > 32) return "warps per CTA multiply to " + std::to_string(product(wpc)) + " (at most 32)";
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < r; ++i)
    if (sorted[i] != static_cast<int>(i)) return "order " + join(order) + " is not a permutation of the dimensions";
  return "";
}

const TileLayout* blockedLayout(const std::vector<int>& spt, const std::vector<int>& tpw,
                                const std::vector<int>& wpc, const std::vector<int>& order) {
  if (!blockedLayoutError(spt, tpw, wpc, order).empty()) return nullptr;
  TileLayout l;
  l.size_per_thread = spt;
  l.threads_per_warp = tpw;
  l.warps_per_cta = wpc;
  l.order = order;
  return intern(std::move(l));
}

const TileLayout* defaultBlockedLayout(const std::vector<int64_t>& shape, int element_bytes, int num_warps) {
  int r = static_cast<int>(shape.size());
  if (r == 0 || !isPowerOfTwo(num_warps) || num_warps > 32 || !isPowerOfTwo(element_bytes) ||
      !tileShapeError(shape).empty())
    return nullptr;
  std::vector<int> order(r), spt(r, 1), tpw(r, 1), wpc(r, 1);
  for (int i = 0; i < r; ++i) order[i] = r - 1 - i;
  int last = r - 1;
  spt[last] = static_cast<int>(std::clamp<int64_t>(16 / element_bytes, 1, shape[last]));
  // Lanes from the fastest dimension; lanes left over replicate along it.
  int64_t lanes = 32;
  for (int d : order) {
    int64_t t = std::min<int64_t>(lanes, std::max<int64_t>(1, shape[d] / spt[d]));
    tpw[d] = static_cast<int>(t);
    lanes /= t;
  }
  tpw[order.front()] *= static_cast<int>(lanes);
  // Warps from the slowest dimension; warps left over replicate along it.
  int64_t warps = num_warps;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int d = *it;
    int64_t w = std::min<int64_t>(warps, std::max<int64_t>(1, shape[d] / (int64_t{spt[d]} * tpw[d])));
    wpc[d] = static_cast<int>(w);
    warps /= w;
  }
  wpc[order.back()] *= static_cast<int>(warps);
  return blockedLayout(spt, tpw, wpc, order);
}

int defaultNumWarps(int64_t largest_tile_elements) {
  // From 4096 elements on, 16 a thread (Triton's 8 warps for a 4096 row):
  // row softmax 8192x4096 f32 on an H200 took 70.6 us with 8 warps, 79.9
  // with 16 (Triton 68.5). Below, 8 a thread at most.
  if (largest_tile_elements >= 4096) return static_cast<int>(std::min<int64_t>(16, largest_tile_elements / 512));
  int warps = 1;
  while (warps < 16 && int64_t{warps} * 2 * 256 <= largest_tile_elements) warps *= 2;
  return warps;
}

int64_t TileDimMap::contiguous() const {
  int64_t n = 1;
  for (int64_t s : reg_strides) {
    if (s != n) break;
    n <<= 1;
  }
  return n;
}

TileGeometry tileGeometry(const TileLayout* l, const std::vector<int64_t>& shape) {
  TileGeometry g = l->kind == TileLayoutKind::Mma ? mmaGeometry(l, shape) : blockedGeometry(l, shape);
  for (const TileDimMap& m : g.dims) g.registers *= m.registers();
  return g;
}

int64_t registersPerThread(const TileLayout* l, const std::vector<int64_t>& shape) {
  return tileGeometry(l, shape).registers;
}

std::vector<int64_t> elementOf(const TileLayout* l, const std::vector<int64_t>& shape, int warp, int lane,
                               int64_t reg) {
  TileGeometry g = tileGeometry(l, shape);
  std::vector<int64_t> regs = splitRegister(g, reg);
  std::vector<int64_t> element(g.dims.size());
  for (size_t d = 0; d < g.dims.size(); ++d) {
    const TileDimMap& m = g.dims[d];
    int64_t x = ((lane >> m.lane_shift) & (m.lanes - 1)) * m.lane_stride +
                ((warp >> m.warp_shift) & (m.warps - 1)) * m.warp_stride;
    for (size_t b = 0; b < m.reg_strides.size(); ++b)
      if (regs[d] >> b & 1) x += m.reg_strides[b];
    element[d] = x % shape[d];
  }
  return element;
}

ElementOwner ownerOf(const TileLayout* l, const std::vector<int64_t>& shape, const std::vector<int64_t>& element) {
  // Each set bit of a coordinate comes from exactly one register, lane or
  // warp bit; bits no coordinate below the extent sets stay 0 (replica 0).
  TileGeometry g = tileGeometry(l, shape);
  ElementOwner o;
  std::vector<int64_t> regs(g.dims.size());
  for (size_t d = 0; d < g.dims.size(); ++d) {
    const TileDimMap& m = g.dims[d];
    int64_t x = element[d];
    for (size_t b = 0; b < m.reg_strides.size(); ++b)
      if (x & m.reg_strides[b]) regs[d] |= int64_t{1} << b;
    for (int b = 0; (1 << b) < m.lanes; ++b)
      if (x & (m.lane_stride << b)) o.lane |= 1 << (m.lane_shift + b);
    for (int b = 0; (1 << b) < m.warps; ++b)
      if (x & (m.warp_stride << b)) o.warp |= 1 << (m.warp_shift + b);
  }
  o.reg = joinRegister(g, regs);
  return o;
}

std::string mmaLayoutError(int version, const std::vector<int>& wpc, int mma_n) {
  if (version != 2 && version != 3) return "an mma layout is version 2 (mma.sync) or 3 (wgmma), not " + std::to_string(version);
  if (wpc.size() != 2) return "an mma layout has 2 dimensions";
  for (int x : wpc)
    if (!isPowerOfTwo(x)) return "warp counts are powers of two, not " + std::to_string(x);
  if (product(wpc) > 32) return "warps per CTA multiply to " + std::to_string(product(wpc)) + " (at most 32)";
  if (version == 3 && wpc[0] % 4) return "a wgmma layout has whole warpgroups (4 warps each) along M";
  if (!isPowerOfTwo(mma_n) || mma_n < 8 || mma_n > 256) return "mma_n is a power of two from 8 to 256, not " + std::to_string(mma_n);
  return "";
}

const TileLayout* mmaLayout(int version, const std::vector<int>& wpc, int mma_n) {
  if (!mmaLayoutError(version, wpc, mma_n).empty()) return nullptr;
  TileLayout l;
  l.kind = TileLayoutKind::Mma;
  l.warps_per_cta = wpc;
  l.order = {1, 0};
  l.size_per_thread = {1, 2};
  l.threads_per_warp = {8, 4};
  l.mma_version = version;
  l.mma_n = mma_n;
  return intern(std::move(l));
}

std::string tileLayoutToString(const TileLayout* l) {
  if (l->kind == TileLayoutKind::Mma)
    return "mma<v" + std::to_string(l->mma_version) + ", " + join(l->warps_per_cta) + ", n" + std::to_string(l->mma_n) + ">";
  return "blocked<" + join(l->size_per_thread) + ", " + join(l->threads_per_warp) + ", " +
         join(l->warps_per_cta) + ", " + join(l->order) + ">";
}

const TileLayout* parseTileLayout(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> const TileLayout* {
    if (error) *error = "bad tile layout '" + std::string(text) + "': " + why;
    return nullptr;
  };
  TextCursor p{text, 0};
  if (p.eatWord("mma")) {
    std::vector<int64_t> version, warps, n;
    if (!p.eat('<') || !p.eat('v') || !p.xList(&version, 2) || version.size() != 1 || !p.eat(',') ||
        !p.xList(&warps, 9) || !p.eat(',') || !p.eat('n') || !p.xList(&n, 4) || n.size() != 1 || !p.eat('>'))
      return fail("expected mma<v3, 4x1, n128> (version, warps per CTA, columns per warp)");
    if (!p.atEnd()) return fail("unexpected text after '>'");
    std::vector<int> wpc(warps.begin(), warps.end());
    if (std::string why = mmaLayoutError(static_cast<int>(version[0]), wpc, static_cast<int>(n[0])); !why.empty())
      return fail(why);
    return mmaLayout(static_cast<int>(version[0]), wpc, static_cast<int>(n[0]));
  }
  if (!p.eatWord("blocked") || !p.eat('<')) return fail("expected 'blocked<' or 'mma<'");
  std::vector<int> parts[4];
  for (int i = 0; i < 4; ++i) {
    if (i && !p.eat(',')) return fail("expected 4 lists: size per thread, threads per warp, warps, order");
    std::vector<int64_t> list;
    if (!p.xList(&list, 9)) return fail("expected a list of ints joined by 'x', e.g. 1x4");
    parts[i].assign(list.begin(), list.end());   // at most 9 digits: each fits an int
  }
  if (!p.eat('>')) return fail("expected '>'");
  if (!p.atEnd()) return fail("unexpected text after '>'");
  if (std::string why = blockedLayoutError(parts[0], parts[1], parts[2], parts[3]); !why.empty())
    return fail(why);
  return blockedLayout(parts[0], parts[1], parts[2], parts[3]);
}

}  // namespace cj
