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
  using Key = std::tuple<int, std::vector<int>, std::vector<int>, std::vector<int>, std::vector<int>>;
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<TileLayout>> table;
  Key key{static_cast<int>(l.kind), l.size_per_thread, l.threads_per_warp, l.warps_per_cta, l.order};
  std::lock_guard<std::mutex> lock(mu);
  auto it = table.find(key);
  if (it != table.end()) return it->second.get();
  auto owned = std::make_unique<TileLayout>(std::move(l));
  const TileLayout* p = owned.get();
  table.emplace(std::move(key), std::move(owned));
  return p;
}

// Per dimension: how many of a thread's registers lie along it (its
// size_per_thread times the repetitions of the coverage over the extent).
int64_t coverage(const TileLayout* l, int d) {
  return int64_t{l->size_per_thread[d]} * l->threads_per_warp[d] * l->warps_per_cta[d];
}
int64_t registersAlong(const TileLayout* l, const std::vector<int64_t>& shape, int d) {
  return l->size_per_thread[d] * std::max<int64_t>(1, shape[d] / coverage(l, d));
}

// Splits a linear id (lane, warp or register) into per-dimension coordinates,
// fastest dimension (order[0]) varying fastest.
template <class Extent>
std::vector<int64_t> split(const TileLayout* l, int64_t id, Extent extent) {
  std::vector<int64_t> coord(l->rank());
  for (int d : l->order) {
    int64_t n = extent(d);
    coord[d] = id % n;
    id /= n;
  }
  return coord;
}
template <class Extent>
int64_t combine(const TileLayout* l, const std::vector<int64_t>& coord, Extent extent) {
  int64_t id = 0, stride = 1;
  for (int d : l->order) {
    id += coord[d] * stride;
    stride *= extent(d);
  }
  return id;
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
  int warps = 1;
  while (warps < 8 && int64_t{warps} * 2 * 256 <= largest_tile_elements) warps *= 2;
  return warps;
}

int64_t registersPerThread(const TileLayout* l, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int d = 0; d < l->rank(); ++d) n *= registersAlong(l, shape, d);
  return n;
}

std::vector<int64_t> elementOf(const TileLayout* l, const std::vector<int64_t>& shape, int warp, int lane,
                               int64_t reg) {
  auto lanes = split(l, lane, [&](int d) { return l->threads_per_warp[d]; });
  auto warps = split(l, warp, [&](int d) { return l->warps_per_cta[d]; });
  auto regs = split(l, reg, [&](int d) { return registersAlong(l, shape, d); });
  std::vector<int64_t> element(l->rank());
  for (int d = 0; d < l->rank(); ++d) {
    int64_t spt = l->size_per_thread[d], tpw = l->threads_per_warp[d];
    int64_t x = regs[d] / spt * coverage(l, d) + warps[d] * spt * tpw + lanes[d] * spt + regs[d] % spt;
    element[d] = x % shape[d];
  }
  return element;
}

ElementOwner ownerOf(const TileLayout* l, const std::vector<int64_t>& shape, const std::vector<int64_t>& element) {
  int r = l->rank();
  std::vector<int64_t> lanes(r), warps(r), regs(r);
  for (int d = 0; d < r; ++d) {
    int64_t spt = l->size_per_thread[d], tpw = l->threads_per_warp[d];
    int64_t x = element[d], within = x % coverage(l, d);
    warps[d] = within / (spt * tpw);
    lanes[d] = within / spt % tpw;
    regs[d] = x / coverage(l, d) * spt + within % spt;
  }
  ElementOwner o;
  o.lane = static_cast<int>(combine(l, lanes, [&](int d) { return l->threads_per_warp[d]; }));
  o.warp = static_cast<int>(combine(l, warps, [&](int d) { return l->warps_per_cta[d]; }));
  o.reg = combine(l, regs, [&](int d) { return registersAlong(l, shape, d); });
  return o;
}

std::string tileLayoutToString(const TileLayout* l) {
  return "blocked<" + join(l->size_per_thread) + ", " + join(l->threads_per_warp) + ", " +
         join(l->warps_per_cta) + ", " + join(l->order) + ">";
}

const TileLayout* parseTileLayout(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> const TileLayout* {
    if (error) *error = "bad tile layout '" + std::string(text) + "': " + why;
    return nullptr;
  };
  TextCursor p{text, 0};
  if (!p.eatWord("blocked") || !p.eat('<')) return fail("expected 'blocked<'");
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
