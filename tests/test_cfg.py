"""The CFG analyses of compiler/ir/cfg.h (reverse post-order, reachability,
dominators, natural loops, irreducibility) through `_core.cfg_analysis`.

Every answer is checked against a reference computed here independently, from
the successor lists parsed out of the IR text: DFS for the order, iterative
dataflow for the dominator sets, a backward walk from the latches for each
loop, and "the graph without its back edges has a cycle" for irreducibility.
Cases: hand-built CFGs, random CFGs, and CFGs of real Python functions
(`while` / `for` / `break` / `continue` nests) decoded by the public decoder.
"""

import random
import re

import pytest

core = pytest.importorskip("cudajit._core", reason="cudajit._core is not built")

BLOCK_RE = re.compile(r"^bb(\d+)\b")
BR_RE = re.compile(r"^\s+br bb(\d+)")
CBR_RE = re.compile(r"^\s+cbr v\d+, bb(\d+)(?:\([^)]*\))?, bb(\d+)")


# ---- building and reading CFG text ------------------------------------------------------


def cfg_text(succs, name="f"):
    """IR text of one function whose block i branches to succs[i] (0, 1 or 2
    targets; a cbr on the argument for 2)."""
    lines = [f"func {name}(v0:b1 c) -> none", ""]
    lines.pop()
    for b, out in enumerate(succs):
        lines.append(f"bb{b}:")
        if not out:
            lines.append("  ret")
        elif len(out) == 1:
            lines.append(f"  br bb{out[0]}")
        else:
            lines.append(f"  cbr v0, bb{out[0]}, bb{out[1]}")
    return "\n".join(lines) + "\n"


def parse_cfgs(text):
    """{function name: (block ids in order, {id: [successor ids]})} from IR text."""
    out = {}
    blocks = succs = cur = None
    for line in text.splitlines():
        if line.startswith("func "):
            blocks, succs = [], {}
            out[re.match(r"func (\S+?)\(", line).group(1)] = (blocks, succs)
            continue
        m = BLOCK_RE.match(line)
        if m:
            cur = int(m.group(1))
            blocks.append(cur)
            succs[cur] = []
            continue
        m = CBR_RE.match(line)
        if m:
            succs[cur] = [int(m.group(1)), int(m.group(2))]
            continue
        m = BR_RE.match(line)
        if m:
            succs[cur] = [int(m.group(1))]
    return out


# ---- the reference ------------------------------------------------------------------------


def ref_rpo(entry, succs):
    seen, post = {entry}, []
    stack = [(entry, iter(succs[entry]))]
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(succs[s])))
                break
        else:
            post.append(node)
            stack.pop()
    return post[::-1]


def ref_dominators(entry, succs, reach):
    """Dominator sets by the textbook dataflow: Dom(n) = {n} + meet of preds."""
    preds = {b: [p for p in reach if b in succs[p]] for b in reach}
    dom = {b: set(reach) for b in reach}
    dom[entry] = {entry}
    changed = True
    while changed:
        changed = False
        for b in reach:
            if b == entry:
                continue
            new = set(reach)
            for p in preds[b]:
                new &= dom[p]
            new |= {b}
            if new != dom[b]:
                dom[b], changed = new, True
    return dom


def ref_idom(dom, entry):
    # The closest strict dominator: the one with the most dominators itself.
    return {b: (None if b == entry else max(dom[b] - {b}, key=lambda d: len(dom[d]))) for b in dom}


def ref_loops(succs, reach, dom):
    """{header: (latches, body)} of the natural loops, the body from a backward
    walk from the latches that stops at the header."""
    preds = {b: [p for p in reach if b in succs[p]] for b in reach}
    loops = {}
    for h in reach:
        latches = sorted({p for p in preds[h] if h in dom[p]})
        if not latches:
            continue
        body, work = {h}, list(latches)
        while work:
            n = work.pop()
            if n not in body:
                body.add(n)
                work.extend(preds[n])
        loops[h] = (latches, body)
    return loops


def ref_irreducible(succs, reach, dom):
    """Reducible iff the graph without its back edges (u -> h, h dom u) is acyclic."""
    fwd = {b: [s for s in succs[b] if s in reach and s not in dom[b]] for b in reach}
    state = {}

    def cyclic(b):
        state[b] = 1
        for s in fwd[b]:
            if state.get(s) == 1 or (s not in state and cyclic(s)):
                return True
        state[b] = 2
        return False

    return any(b not in state and cyclic(b) for b in reach)


def check(result, blocks, succs):
    """Compares one function's cfg_analysis result with the reference."""
    entry = blocks[0]
    assert result["blocks"] == blocks
    assert {b: result["succs"][b] for b in blocks} == succs
    rpo = ref_rpo(entry, succs)
    reach = set(rpo)
    assert result["rpo"] == rpo
    assert result["reachable"] == [b for b in blocks if b in reach]
    dom = ref_dominators(entry, succs, reach)
    idom = ref_idom(dom, entry)
    assert result["idom"] == idom
    assert result["dom_depth"] == {b: len(dom[b]) - 1 for b in reach}
    # Every block after its immediate dominator in the order.
    pos = {b: i for i, b in enumerate(rpo)}
    assert all(idom[b] is None or pos[idom[b]] < pos[b] for b in reach)

    # Post-dominators: dominators of the reversed graph entered from a
    # virtual exit with an edge to every block without successors.
    exit_ = "exit"
    rev = {b: [p for p in blocks if b in succs[p]] for b in blocks}
    rev[exit_] = [b for b in blocks if not succs[b]]
    back = ref_rpo(exit_, rev)
    pdom = ref_dominators(exit_, rev, set(back))
    ipdom = {b: None for b in blocks}
    for b, d in ref_idom(pdom, exit_).items():
        if b != exit_ and d != exit_:
            ipdom[b] = d
    assert result["ipdom"] == ipdom

    loops = ref_loops(succs, reach, dom)
    got = {l["header"]: l for l in result["loops"]}
    assert set(got) == set(loops)
    headers_in_order = [l["header"] for l in result["loops"]]
    assert headers_in_order == sorted(headers_in_order, key=pos.get), "outer loops first"
    for h, (latches, body) in loops.items():
        l = got[h]
        assert l["latches"] == latches, h
        assert l["blocks"] == sorted(body, key=pos.get), h
        assert l["blocks"][0] == h
        enclosing = [g for g, (_, b) in loops.items() if h in b]
        assert l["depth"] == len(enclosing), h
        outer = [g for g in enclosing if g != h]
        assert l["parent"] == (max(outer, key=lambda g: len(dom[g])) if outer else None), h
    assert result["irreducible"] == ref_irreducible(succs, reach, dom)
    for u, v in result["irreducible_edges"]:
        assert v in succs[u] and pos[v] <= pos[u] and v not in dom[u]
    return result


def analyse(succs):
    text = cfg_text(succs)
    assert core.verify_ir(text, False) == "", text
    (result,) = core.cfg_analysis(text)
    return check(result, list(range(len(succs))), {i: list(s) for i, s in enumerate(succs)})


# ---- hand-built CFGs ------------------------------------------------------------------------


def test_straight_line_and_diamond():
    r = analyse([[1], [2], []])
    assert r["rpo"] == [0, 1, 2] and r["idom"] == {0: None, 1: 0, 2: 1} and r["loops"] == []
    r = analyse([[1, 2], [3], [3], []])   # if / else / join
    assert r["idom"] == {0: None, 1: 0, 2: 0, 3: 0}
    assert r["rpo"] == [0, 2, 1, 3]   # DFS takes the true arm first: it ends up after the false arm
    assert r["loops"] == [] and not r["irreducible"]


def test_nested_loops():
    # 0 -> 1 (outer header) -> 2 (inner header) <-> 3; 2 -> 4 -> 1; 1 -> 5 exit
    r = analyse([[1], [2, 5], [3, 4], [2], [1], []])
    outer, inner = r["loops"]
    assert (outer["header"], outer["latches"], outer["depth"], outer["parent"]) == (1, [4], 1, None)
    assert sorted(outer["blocks"]) == [1, 2, 3, 4]
    assert (inner["header"], inner["latches"], inner["blocks"], inner["depth"], inner["parent"]) == (
        2, [3], [2, 3], 2, 1)
    assert not r["irreducible"]


def test_three_deep_and_sibling_loops():
    # outer 1 { inner 2 {3}, inner 4 { innermost 5 {6} } }
    succs = [[1], [2, 9], [3, 4], [2], [5, 8], [6, 7], [5], [4], [1], []]
    r = analyse(succs)
    by_header = {l["header"]: l for l in r["loops"]}
    assert {h: l["depth"] for h, l in by_header.items()} == {1: 1, 2: 2, 4: 2, 5: 3}
    assert by_header[5]["parent"] == 4 and by_header[2]["parent"] == 1 and by_header[4]["parent"] == 1


def test_loop_with_several_latches():
    # while: 1 header; body 2 branches to 3 or 4; both `continue` back to 1
    r = analyse([[1], [2, 5], [3, 4], [1], [1], []])
    (loop,) = r["loops"]
    assert loop["header"] == 1 and loop["latches"] == [3, 4] and sorted(loop["blocks"]) == [1, 2, 3, 4]


def test_self_loop_and_cbr_with_one_target():
    r = analyse([[1], [1, 2], [3, 3], []])
    (loop,) = r["loops"]
    assert loop["header"] == 1 and loop["latches"] == [1] and loop["blocks"] == [1]
    assert r["idom"][3] == 2


def test_early_exits():
    # a loop with a `break` (2 -> 5) and a `return` (3 -> 6) out of the body
    r = analyse([[1], [2, 5], [3, 5], [4, 6], [1], [6], []])
    (loop,) = r["loops"]
    assert sorted(loop["blocks"]) == [1, 2, 3, 4]
    assert r["idom"][5] == 1 and r["idom"][6] == 1


def test_irreducible_two_entries():
    # 0 enters the cycle 1 <-> 2 at either block: neither dominates the other
    r = analyse([[1, 2], [2, 3], [1], []])
    assert r["irreducible"] and r["loops"] == []
    assert r["idom"] == {0: None, 1: 0, 2: 0, 3: 1}
    assert len(r["irreducible_edges"]) == 1


def test_irreducible_inside_a_loop():
    # loop header 1; inside it 2 and 3 form a cycle entered from 1 at both
    r = analyse([[1], [2, 3], [3, 4], [2, 4], [1, 5], []])
    assert r["irreducible"]
    (loop,) = r["loops"]
    assert loop["header"] == 1 and sorted(loop["blocks"]) == [1, 2, 3, 4]


def test_unreachable_blocks():
    # 2 and 3 are unreachable (3 even branches into the reachable part)
    r = analyse([[1], [], [3], [1]])
    assert r["reachable"] == [0, 1] and r["rpo"] == [0, 1]
    assert set(r["idom"]) == {0, 1}
    out = core.run_passes(cfg_text([[1], [], [3], [1]]), ["remove-unreachable"], False)
    assert [int(b) for b in re.findall(r"^bb(\d+)", out, re.M)] == [0, 1]


def test_unreachable_cycle_is_not_a_loop():
    r = analyse([[1], [], [3], [2]])
    assert r["loops"] == [] and not r["irreducible"]


def test_ids_not_dense():
    # block ids from text need not be 0..n-1 (the analyses number blocks themselves)
    text = "func f(v0:b1 c) -> none\nbb0:\n  br bb300\nbb300:\n  cbr v0, bb300, bb5\nbb5:\n  ret\n"
    (r,) = core.cfg_analysis(text)
    check(r, [0, 300, 5], {0: [300], 300: [300, 5], 5: []})
    assert r["loops"][0]["header"] == 300


def test_random_cfgs():
    rng = random.Random(19)
    irreducible = loops = 0
    for trial in range(400):
        n = rng.randint(1, 14)
        succs = []
        for b in range(n):
            k = rng.choice([0, 1, 1, 2, 2, 2]) if b else rng.choice([1, 2])
            # no edge into the entry (the verifier forbids one)
            succs.append([rng.randrange(1, n) for _ in range(k)] if n > 1 else [])
        r = analyse(succs)
        irreducible += r["irreducible"]
        loops += bool(r["loops"])
    # the sample exercises both kinds of cycle
    assert irreducible > 20 and loops > 100


def test_several_functions():
    text = cfg_text([[1], [1, 2], []], "a") + cfg_text([[1, 2], [3], [3], []], "b")
    ra, rb = core.cfg_analysis(text)
    assert (ra["name"], rb["name"]) == ("a", "b")
    assert len(ra["loops"]) == 1 and rb["loops"] == []


# ---- CFGs of Python functions ---------------------------------------------------------------


def k_while_break_continue(a, n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if a[i] < 0:
            continue
        if a[i] > 100:
            break
        s += a[i]
    return s


def k_nested_for(a, n, m):
    s = 0
    for i in range(n):
        for j in range(m):
            if j > i:
                break
            s += a[i, j]
    return s


def k_three_deep(a, n):
    s = 0
    i = 0
    while i < n:
        j = 0
        while j < n:
            if a[j] == 0:
                j += 1
                continue
            for k in range(j):
                if k == i:
                    break
                s += k
            j += 1
        i += 1
    return s


def k_loop_return(a, n):
    for i in range(n):
        if a[i] == 7:
            return i
        while a[i] > 0:
            a[i] -= 1
            if a[i] == 3:
                break
    return -1


def k_while_else(a, n):
    i = 0
    while i < n:
        if a[i]:
            break
        i += 1
    else:
        i = -1
    return i


@pytest.mark.parametrize(
    "fn, nloops, max_depth",
    [
        (k_while_break_continue, 1, 1),
        (k_nested_for, 2, 2),
        (k_three_deep, 3, 3),
        (k_loop_return, 2, 2),
        (k_while_else, 1, 1),
    ],
)
def test_python_functions(fn, nloops, max_depth):
    text = core.decode_ir(fn)
    assert core.verify_ir(text, False) == ""
    results = core.cfg_analysis(text)
    cfgs = parse_cfgs(text)
    for r in results:
        blocks, succs = cfgs[r["name"]]
        check(r, blocks, succs)
    r = results[0]
    # CPython may invert a `while` (a test before the loop and one at its
    # bottom), which adds a natural loop per `continue` target: at least as
    # many loops, nested at least as deep, as the source has.
    assert len(r["loops"]) >= nloops, text
    assert max(l["depth"] for l in r["loops"]) >= max_depth
    assert not r["irreducible"]
