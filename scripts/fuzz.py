"""Differential fuzzer (issue 15): random, well-typed device functions in the
numba.cuda subset, run by CPython and by cudajit, compared.

    python scripts/fuzz.py --seconds 60 --seed 1 [--out fuzz_out] [--backend llvm] [--target gpu|numba]

Each program is a function of two int64 and two float64 arguments and a
16-element int64 or float64 array `v` (read and written): integer arithmetic
with Python's floor division and modulo (divisors kept non-zero), bit
operations and masked shifts, comparisons and chained conditions, float
arithmetic and math functions on safe domains, int/float conversions,
min/max/abs, tuples, a local array (wrapped and negative indices), a shared
array (int32, uint32 or float32), `v` and strided views of it (`v[::-2]`,
`v[3:13:3]`, views of views) at wrapped and negative indices,
if/elif/else, for loops over ranges (negative steps too) and while loops
with break/continue, and calls of device functions.
Integers of the "int world" (the arguments, `i*` variables, the local
array) are kept inside +-2**40 by construction (a `% M` after products) so
that CPython's unbounded ints and the GPU's int64 agree without wraparound.
Beside them, "typed" values: int32, uint32, int64, uint64, float32 and
float64 made by numpy's constructors (`np.uint32(a)`, `np.float32(x)`,
constants such as `np.int32(-2147483648)`, `np.float32(1e-45)`, inf, nan),
mixed by arithmetic, bit operations, shifts, `//`, `%`, `/`, `**`,
comparisons, min/max/abs, conversions, math functions, tuples, a device
function, with numba's typing (`int32 + uint32 -> int64`,
`uint32 * uint32 -> uint64`, `int64 - uint64 -> int64`, `float32 * int32 ->
float64`, comparisons in the unified type: `int64 < uint64` compares as
float64) and numba's wraparound (int64 and uint64 arithmetic and every
int-to-int conversion wrap; float-to-int conversions out of range are
undefined in numba and are not compared). The typing rules are NUMBA_TYPES
below; the reference applies them at run time (`_bin`, `_cmp`, `_call`).

The reference is CPython running the same source, rewritten so that every
operator and builtin goes through those rules (values of the int world stay
Python ints, typed values are numpy scalars; float32 arithmetic is numpy's,
float32 math functions libm's sinf etc. through ctypes). cudajit's run is
the compiled function executed on the CPU (tests/host_exec.py: cudajit's
NVVM IR JIT-compiled by llvmlite, libdevice bound to libm; the shared array
is a global of address space 3 there, one per module). Integers must agree
exactly, floats within 1e-12 relative (libm is the same on both sides; the
slack is for fused operations). --backend llvm runs what LLVM's
optimiser in cudajit's LLVM back end makes of the same IR (O3 for the NVPTX
target, then the CPU), a check of the second code generator's optimiser.
--target gpu runs each program on the GPU instead: the function becomes a
device function that a kernel calls once per block of one thread (the
shared array is then the block's), one block per argument set (the same
arguments; each gets its own copy of `v`). libdevice's functions differ from libm's
by an ulp or two and the GPU fuses multiplies into adds; where such a last
bit decides the result (a float % of a huge number, an equality, int() near
an integer), the argument set is not compared: a mismatch counts only if the
reference, rerun with those results jittered by up to 3 ulps, never moves.
--target numba runs the programs through numba.njit on the CPU (numba
installed) instead of cudajit: a check of the reference's typing rules
against numba's own, not of cudajit.

Programs cudajit rejects with a CompileError are counted (the rejection
rate shows what the subset covers); any other exception is a bug. Every
mismatch or crash is minimised (statements deleted while it still fails)
and written to --out as a reproducer.
"""
import argparse
import ast
import ctypes
import ctypes.util
import math
import os
import random
import re
import sys
import time
import traceback
import warnings

import numpy as _np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

MOD = 1_000_003          # keeps integers small: products of two stay far below 2**63
INT_VARS = ["a", "b"]    # the int64 arguments
FLOAT_VARS = ["x", "y"]  # the float64 arguments
VLEN = 16                # the array argument's length


# ---- numba's typing of the typed values -------------------------------------
# Checked against numba 0.68's njit (every pair of int32, uint32, int64,
# uint64, float32, float64 under each operator, and the values of mixed
# comparisons at the extremes) and against cudajit's type inference, which
# agree; `--target numba` checks the rules on whole programs. Booleans in
# arithmetic (numba: bool ** int32 -> float32, bool + bool -> int64) and
# math.floor/ceil/trunc (int64 in numba's CPU jit, the float type in
# numba-cuda and cudajit) are left out of the generator.
INT_TYPES = {"int32": (32, True), "uint32": (32, False), "int64": (64, True), "uint64": (64, False)}
FLOAT_TYPES = ("float32", "float64")
TYPED = ["int32", "uint32", "int64", "uint64", "float32", "float64"]


def arith_type(op, ta, tb):
    """numba's result type of `ta op tb` (op one of + - * / // % ** & | ^ << >>)."""
    if ta in FLOAT_TYPES or tb in FLOAT_TYPES:
        if op in ("&", "|", "^", "<<", ">>"):
            raise TypeError(f"{ta} {op} {tb}")
        if ta == "float32" and (tb == "float32" or (op == "**" and tb in INT_TYPES)):
            return "float32"
        return "float64"
    if op == "/":
        return "float64"
    if op in ("<<", ">>"):           # the left operand's signedness, 64 bits
        return "int64" if INT_TYPES[ta][1] else "uint64"
    # 64 bits; unsigned only if both are (int64 - uint64 is int64, wrapping)
    return "uint64" if not INT_TYPES[ta][1] and not INT_TYPES[tb][1] else "int64"


def unary_type(op, t):
    """numba's type of -x and ~x: 64 bits, the operand's signedness."""
    if t in FLOAT_TYPES:
        return t
    return "int64" if INT_TYPES[t][1] else "uint64"


def unify_type(ta, tb):
    """numba's unified type (min/max, a conditional expression, comparisons)."""
    if ta == tb:
        return ta
    if ta in FLOAT_TYPES or tb in FLOAT_TYPES:
        return "float64"
    (wa, sa), (wb, sb) = INT_TYPES[ta], INT_TYPES[tb]
    if sa == sb:
        return ta if wa >= wb else tb
    unsigned_width = wa if not sa else wb
    return "int64" if unsigned_width < 64 else "float64"


# The expression forms over two generated operands a and b at depth d (g: the
# generator, for random choices and nested conditions); a program's seed
# picks them by position, so new forms go at the end.
INT_FORMS = [
    lambda g, a, b, d: f"({a} + {b})",
    lambda g, a, b, d: f"({a} - {b})",
    lambda g, a, b, d: f"(({a} * {b}) % {MOD})",
    lambda g, a, b, d: f"({a} // ({b} | 1))",
    lambda g, a, b, d: f"({a} % ({b} | 1))",
    lambda g, a, b, d: f"({a} {g.r.choice(['&', '|', '^'])} {b})",
    lambda g, a, b, d: f"(({a} % 4096) << ({b} & 7))",
    lambda g, a, b, d: f"({a} >> ({b} & 15))",
    lambda g, a, b, d: f"{g.r.choice(['min', 'max'])}({a}, {b})",
    lambda g, a, b, d: f"abs({a})",
    lambda g, a, b, d: f"({a} if {g.cond(d + 1)} else {b})",
    lambda g, a, b, d: f"int({g.float_expr(d + 1)} % 1000.0)",
    lambda g, a, b, d: f"(({a} % 100) ** ({b} & 3))",
    # the local array, at a wrapped (possibly negative) index
    lambda g, a, b, d: f"arr[{a} % 8]" if g.r.random() < 0.7 else f"arr[-1 - ({a} % 8)]",
    # a typed value back in the int world: wrapped to int64, then bounded
    lambda g, a, b, d: g.typed_to_int(d + 1),
    # the array argument or a view of it, at a wrapped (possibly negative) index
    lambda g, a, b, d: g.array_read(a, "int"),
    # the device function on typed ints, its result bounded
    lambda g, a, b, d: f"(np.int64(mix({g.typed_of(d + 1, 'int')[0]}, {g.typed_of(d + 1, 'int')[0]})) % {MOD})",
]
FLOAT_FORMS = [
    lambda g, a, b, d: f"({a} + {b})",
    lambda g, a, b, d: f"({a} - {b})",
    lambda g, a, b, d: f"({a} * {b})",
    lambda g, a, b, d: f"({a} / ({b} * {b} + 1.0))",
    lambda g, a, b, d: f"math.sqrt(abs({a}))",
    lambda g, a, b, d: f"math.{g.r.choice(['sin', 'cos', 'atan', 'tanh'])}({a})",
    lambda g, a, b, d: f"math.exp(min({a}, 20.0))",
    lambda g, a, b, d: f"math.log(abs({a}) + 1.0)",
    lambda g, a, b, d: f"float({g.int_expr(d + 1)})",
    lambda g, a, b, d: f"{g.r.choice(['min', 'max'])}({a}, {b})",
    lambda g, a, b, d: f"({a} if {g.cond(d + 1)} else {b})",
    lambda g, a, b, d: f"({a} ** 2)",
    lambda g, a, b, d: f"(abs({a}) ** 0.5)",
    # a typed value as float64
    lambda g, a, b, d: f"np.float64({g.typed_expr(d + 1)[0]})",
    # the array argument or a view of it
    lambda g, a, b, d: g.array_read(g.int_expr(d + 1), "float"),
]

# Typed constants: the extremes of each type and float32's special values.
TYPED_CONSTANTS = {
    "int32": ["-2147483648", "2147483647", "-1", "7", "-100"],
    "uint32": ["4294967295", "2147483648", "1", "3", "65535"],
    "int64": ["-9223372036854775808", "9223372036854775807", "-1", "3", "-1000"],
    "uint64": ["18446744073709551615", "9223372036854775808", "1", "5", "4294967296"],
    "float32": ["3.4028234663852886e+38", "1e-45", "1.1754943508222875e-38", "-0.0", "16777217.0",
                "0.1", "-2.5", "math.inf", "-math.inf", "math.nan"],
    "float64": ["1.7976931348623157e+308", "5e-324", "-0.0", "0.1", "math.inf", "math.nan"],
}

# Slices of a 16-element array (views: constant steps, negative ones too;
# bounds wrap and clamp as in Python).
SLICES = ["::2", "::-1", "1:", "3:13:3", "-5:", ":-3", "2:14:2", "::-3", "12:1:-2", "-1:-9:-1", "5:100", "-100:4"]
TYPED_PREFIX = {"int32": "s32_", "uint32": "u32_", "int64": "s64_", "uint64": "u64_",
                "float32": "f32_", "float64": "f64_"}


class Gen:
    """Random statements and expressions over the variables in scope."""

    def __init__(self, rng):
        self.r = rng
        self.ints = list(INT_VARS)
        self.floats = list(FLOAT_VARS)
        self.counter = 0
        self.depth = 0
        self.frozen = set()   # loop counters: read, never assigned (a while loop must end)
        self.vtype = self.r.choice(["int64", "float64"])             # the array argument v
        self.shtype = self.r.choice(["int32", "uint32", "float32"])  # the shared array sh
        self.typed = []              # (name, type) of the typed variables in scope
        self.views = [("v", VLEN)]   # (name, length): v and the views of it in scope

    def fresh(self, kind):
        self.counter += 1
        name = f"{kind}{self.counter}"
        return name

    # ---- expressions -----------------------------------------------------
    def int_atom(self):
        r = self.r.random()
        if r < 0.6:
            return self.r.choice(self.ints)
        return str(self.r.choice([0, 1, 2, 3, 7, -1, -5, 13, 100, -128, 1023]))

    def int_expr(self, d=0):
        if d > 2 or self.r.random() < 0.3:
            return self.int_atom()
        k = self.r.randrange(len(INT_FORMS))
        a, b = self.int_expr(d + 1), self.int_expr(d + 1)
        return INT_FORMS[k](self, a, b, d)

    def float_atom(self):
        if self.r.random() < 0.6:
            return self.r.choice(self.floats)
        return repr(self.r.choice([0.5, -1.25, 2.0, 3.0, 1e-3, 100.0, -0.0]))

    def float_expr(self, d=0):
        if d > 2 or self.r.random() < 0.3:
            return self.float_atom()
        k = self.r.randrange(len(FLOAT_FORMS))
        a, b = self.float_expr(d + 1), self.float_expr(d + 1)
        return FLOAT_FORMS[k](self, a, b, d)

    def cond(self, d=0):
        k = self.r.randrange(6)
        op = self.r.choice(["<", "<=", ">", ">=", "==", "!="])
        if k == 5:   # typed operands: compared in their unified type
            return f"({self.typed_expr(d + 1)[0]} {op} {self.typed_expr(d + 1)[0]})"
        if k <= 1:
            return f"({self.int_expr(d + 1)} {op} {self.int_expr(d + 1)})"
        if k == 2:
            return f"({self.float_expr(d + 1)} {op} {self.float_expr(d + 1)})"
        if k == 3 and d < 2:
            return f"({self.cond(d + 1)} {self.r.choice(['and', 'or'])} {self.cond(d + 1)})"
        return f"(not {self.cond(d + 1)})" if d < 2 else f"({self.int_atom()} > 0)"

    # ---- typed values ------------------------------------------------------
    def typed_atom(self):
        r = self.r.random()
        if r < 0.3 and self.typed:
            return self.r.choice(self.typed)
        if r < 0.4:
            return f"sh[{self.int_atom()} % 8]", self.shtype
        t = self.r.choice(TYPED)
        if r < 0.8:   # an int or float of the program, converted
            if t in FLOAT_TYPES and self.r.random() < 0.6:
                return f"np.{t}({self.float_atom()})", t
            return f"np.{t}({self.int_atom()})", t
        return f"np.{t}({self.r.choice(TYPED_CONSTANTS[t])})", t

    def typed_expr(self, d=0):
        """A typed expression and its numba type."""
        if d > 2 or self.r.random() < 0.3:
            return self.typed_atom()
        k = self.r.randrange(len(TYPED_FORMS))
        return TYPED_FORMS[k](self, d)

    def typed_of(self, d, kind):
        """A typed expression of an int ('int') or float ('float') type."""
        e, t = self.typed_expr(d)
        if (t in FLOAT_TYPES) == (kind == "float"):
            return e, t
        if kind == "float":
            u = self.r.choice(FLOAT_TYPES)
            return f"np.{u}({e})", u
        u = self.r.choice(list(INT_TYPES))
        return self.convert(e, t, u), u

    def convert(self, e, t, u):
        """Expression e of type t as type u (floats to ints through `% 1000.0`:
        in range, or NaN, which is not compared)."""
        if t == u:
            return e
        if t in FLOAT_TYPES and u in INT_TYPES:
            return f"np.{u}({e} % 1000.0)"
        return f"np.{u}({e})"

    def divisor(self, b, tb):
        """A non-zero divisor made of b, negative too, never -1 (INT64_MIN // -1)."""
        neg = self.r.random() < 0.4
        if tb in INT_TYPES and not INT_TYPES[tb][1]:
            return f"({b} % np.uint64(61) + np.uint64(2))", "uint64"
        if tb in INT_TYPES:
            return (f"(-2 - ({b} % 61))" if neg else f"({b} % 61 + 2)"), "int64"
        one = "np.float32(1.0)" if tb == "float32" else "1.0"
        return (f"(-{one} - {b} * {b})" if neg else f"({b} * {b} + {one})"), tb

    def typed_to_int(self, d):
        e, t = self.typed_expr(d)
        if t in FLOAT_TYPES:
            return f"int({e} % 1000.0)"
        return f"(np.int64({e}) % {MOD})"

    def array_read(self, idx, world):
        name, n = self.r.choice(self.views)
        at = f"{name}[{idx} % {n}]" if self.r.random() < 0.6 else f"{name}[-1 - ({idx} % {n})]"
        if world == "float":
            return at if self.vtype == "float64" else f"float({at})"
        return at if self.vtype == "int64" else f"int({at} % 1000.0)"

    # ---- statements ------------------------------------------------------
    def block(self, indent, n):
        lines = []
        for _ in range(n):
            lines += self.stmt(indent)
        return lines or [indent + "pass"]

    def stmt(self, indent):
        k = self.r.randrange(18)
        if k >= 11:
            return self.new_stmt(indent, 11 if k >= 15 else k)   # typed assignments: 4 in 18
        if k == 10:
            return [f"{indent}arr[{self.int_expr()} % 8] = ({self.int_expr()}) % {MOD}"]
        if self.depth >= 3:
            k = min(k, 3)
        if k <= 1:
            assignable = [v for v in self.ints if v not in self.frozen]
            name = self.r.choice(assignable + [self.fresh("i")]) if k == 0 else self.fresh("i")
            line = f"{indent}{name} = ({self.int_expr()}) % {MOD}"
            if name not in self.ints:
                self.ints.append(name)
            return [line]
        if k == 2:
            name = self.r.choice(self.floats + [self.fresh("f")])
            line = f"{indent}{name} = {self.float_expr()}"
            if name not in self.floats:
                self.floats.append(name)
            return [line]
        if k == 3:
            assignable = [v for v in self.ints if v not in self.frozen]
            p, q = self.r.choice(assignable), self.r.choice(assignable)
            return [f"{indent}t = ({p}, {q} % {MOD})", f"{indent}{q}, {p} = t[0], t[1]"]
        self.depth += 1
        try:
            return self.compound(indent, k)
        finally:
            self.depth -= 1

    def new_stmt(self, indent, k):
        if k == 11:   # a typed variable: a new one, or one assigned again (always one type)
            e, t = self.typed_expr()
            same = [n for n, u in self.typed if u == t]
            if same and self.r.random() < 0.4:
                return [f"{indent}{self.r.choice(same)} = {e}"]
            if self.typed and self.r.random() < 0.2:
                n, u = self.r.choice(self.typed)
                return [f"{indent}{n} = {self.convert(e, t, u)}"]
            name = self.fresh(TYPED_PREFIX[t])
            self.typed.append((name, t))
            return [f"{indent}{name} = {e}"]
        if k == 12:   # a store into v or a view of it
            name, n = self.r.choice(self.views)
            idx = self.int_expr()
            at = f"{name}[{idx} % {n}]" if self.r.random() < 0.6 else f"{name}[-1 - ({idx} % {n})]"
            value = f"({self.int_expr()}) % {MOD}" if self.vtype == "int64" else self.float_expr()
            return [f"{indent}{at} = {value}"]
        if k == 13:   # a view of v or of another view, with a constant (maybe negative) step
            base, n = self.r.choice(self.views)
            sl = self.r.choice(SLICES)
            length = len(range(n)[slice(*[int(p) if p else None for p in sl.split(":")])])
            if length == 0:
                return [f"{indent}pass"]
            name = self.fresh("w")
            self.views.append((name, length))
            return [f"{indent}{name} = {base}[{sl}]"]
        # k == 14: a store into the shared array, converted to its type as numba does
        if self.shtype == "float32":
            e, _ = self.typed_expr()           # ints and float64 round to float32
        else:
            e, _ = self.typed_of(0, "int")     # ints wrap to 32 bits
        return [f"{indent}sh[{self.int_expr()} % 8] = {e}"]

    def compound(self, indent, k):
        inner = indent + "    "
        saved = (list(self.ints), list(self.floats), list(self.typed), list(self.views))

        def restore():
            self.ints, self.floats, self.typed, self.views = (list(x) for x in saved)
        out = []
        if k in (4, 5):
            out.append(f"{indent}if {self.cond()}:")
            out += self.block(inner, self.r.randint(1, 3))
            restore()
            if k == 5:
                out.append(f"{indent}elif {self.cond()}:")
                out += self.block(inner, self.r.randint(1, 2))
                restore()
            out.append(f"{indent}else:")
            out += self.block(inner, self.r.randint(1, 2))
        elif k in (6, 7):
            v = self.fresh("k")
            start, stop = self.r.randint(-3, 3), self.r.randint(-3, 8)
            step = self.r.choice([1, 1, 2, -1, 3])
            out.append(f"{indent}for {v} in range({start}, {stop}, {step}):")
            self.ints.append(v)
            self.frozen.add(v)
            out += self.loop_body(inner)
        elif k == 8:
            w = self.fresh("w")
            out.append(f"{indent}{w} = 0")
            out.append(f"{indent}while {w} < {self.r.randint(1, 6)}:")
            out.append(f"{inner}{w} += 1")
            self.ints.append(w)
            self.frozen.add(w)
            out += self.loop_body(inner)
        else:
            out.append(f"{indent}acc = helper(({self.int_expr()}) % {MOD}, {self.float_expr()})")
            assignable = [v for v in saved[0] if v not in self.frozen]
            out.append(f"{indent}{self.r.choice(assignable)} = (acc + 1) % {MOD}")
        # names made in a branch or loop body may be unset after it: drop them
        restore()
        return out

    def loop_body(self, indent):
        out = self.block(indent, self.r.randint(1, 3))
        if self.r.random() < 0.4:
            out.append(f"{indent}if {self.cond()}:")
            out.append(f"{indent}    {self.r.choice(['break', 'continue'])}")
            out += self.block(indent, 1)
        return out

    def program(self):
        body = [f"    sh = cuda.shared.array(8, np.{self.shtype})",
                "    for q1 in range(8):",
                "        sh[q1] = q1 * 7 - 20"]
        body += self.block("    ", self.r.randint(2, 7))
        ret_i = self.r.sample(self.ints, min(3, len(self.ints)))
        ret_f = self.r.sample(self.floats, min(2, len(self.floats)))
        # every typed variable, the shared array and v: ints exactly, floats
        # bounded (so that a large one does not hide the others' last bits)
        for name, t in self.typed + [(f"sh[{self.r.randrange(-8, 8)}]", self.shtype)]:
            if t in INT_TYPES:
                ret_i.append(f"(np.int64({name}) % {MOD})")
            else:
                ret_f.append(f"(np.float64({name}) % 1000.0 if abs(np.float64({name})) < 1e300 else 0.5)")
        ret_f.append(f"float(v[{self.r.randrange(-VLEN, VLEN)}])")   # what was stored into v
        body.append(f"    return float(({' + '.join(ret_i)}) % {MOD}) + ({' + '.join(ret_f)})")
        return body


# The typed expression forms: each returns (source, numba type); a
# program's seed picks them by position, so new forms go at the end.
def _typed_binary(g, d):
    op = g.r.choice(["+", "-", "*"])
    (a, ta), (b, tb) = g.typed_expr(d + 1), g.typed_expr(d + 1)
    return f"({a} {op} {b})", arith_type(op, ta, tb)


def _typed_divmod(g, d):
    op = g.r.choice(["//", "%"])
    a, ta = g.typed_expr(d + 1)
    b, tb = g.typed_of(d + 1, "float" if ta in FLOAT_TYPES else "int")
    div, tdiv = g.divisor(b, tb)
    return f"({a} {op} {div})", arith_type(op, ta, tdiv)


def _typed_truediv(g, d):
    (a, ta), (b, tb) = g.typed_expr(d + 1), g.typed_expr(d + 1)
    if tb in INT_TYPES:   # b * b + 1 is never 0, not even wrapped (no square is -1 modulo 2**64)
        div, tdiv = f"({b} * {b} + 1)", arith_type("+", arith_type("*", tb, tb), "int64")
    else:
        div, tdiv = g.divisor(b, tb)
    return f"({a} / {div})", arith_type("/", ta, tdiv)


def _typed_bitop(g, d):
    op = g.r.choice(["&", "|", "^"])
    (a, ta), (b, tb) = g.typed_of(d + 1, "int"), g.typed_of(d + 1, "int")
    return f"({a} {op} {b})", arith_type(op, ta, tb)


def _typed_shift(g, d):
    (a, ta), (b, tb) = g.typed_of(d + 1, "int"), g.typed_of(d + 1, "int")
    if g.r.random() < 0.5:
        return f"({a} << ({b} & 31))", arith_type("<<", ta, "int64")
    return f"({a} >> ({b} & 63))", arith_type(">>", ta, "int64")


def _typed_unary(g, d):
    a, t = g.typed_expr(d + 1)
    r = g.r.random()
    if r < 0.35:
        return f"(-{a})", unary_type("-", t)
    if r < 0.6 and t in INT_TYPES:
        return f"(~{a})", unary_type("~", t)
    return f"abs({a})", t


def _typed_minmax(g, d):
    (a, ta), (b, tb) = g.typed_expr(d + 1), g.typed_expr(d + 1)
    return f"{g.r.choice(['min', 'max'])}({a}, {g.convert(b, tb, ta)})", ta


def _typed_ifexp(g, d):
    (a, ta), (b, tb) = g.typed_expr(d + 1), g.typed_expr(d + 1)
    return f"({a} if {g.cond(d + 1)} else {g.convert(b, tb, ta)})", ta


def _typed_convert(g, d):
    a, t = g.typed_expr(d + 1)
    u = g.r.choice(TYPED)
    if t in FLOAT_TYPES and u in INT_TYPES and g.r.random() < 0.3:
        return f"np.{u}({a})", u     # out of range is undefined in numba: not compared
    return g.convert(a, t, u), u


def _typed_math(g, d):
    a, t = g.typed_expr(d + 1)
    if t in INT_TYPES:   # ints become float64 first, in numba as in math
        a, t = f"np.float64({a})", "float64"
    one = "np.float32(1.0)" if t == "float32" else "1.0"
    cap = "np.float32(20.0)" if t == "float32" else "20.0"
    r = g.r.random()
    if r < 0.2:
        return f"math.sqrt(abs({a}))", t
    if r < 0.6:
        return f"math.{g.r.choice(['sin', 'cos', 'atan', 'tanh'])}({a})", t
    if r < 0.8:
        return f"math.exp(min({a}, {cap}))", t
    return f"math.log(abs({a}) + {one})", t


def _typed_call(g, d):
    (a, ta), (b, tb) = g.typed_expr(d + 1), g.typed_expr(d + 1)
    return f"mix({a}, {b})", arith_type("-", ta, tb)


def _typed_tuple(g, d):
    (a, ta), (b, tb) = g.typed_expr(d + 1), g.typed_expr(d + 1)
    k = g.r.randrange(2)
    return f"({a}, {b})[{k if g.r.random() < 0.5 else k - 2}]", (ta, tb)[k]


def _typed_power(g, d):
    a, t = g.typed_expr(d + 1)
    if t in FLOAT_TYPES:
        return f"({a} ** 2)", t
    k = g.r.randrange(4)
    return f"({a} ** {k})", arith_type("**", t, "int64")


TYPED_FORMS = [_typed_binary, _typed_binary, _typed_divmod, _typed_truediv, _typed_bitop, _typed_shift,
               _typed_unary, _typed_minmax, _typed_ifexp, _typed_convert, _typed_convert, _typed_math,
               _typed_call, _typed_tuple, _typed_power]


HELPER = f'''
@cuda.jit(device=True)
def helper(n, z):
    s = 0
    for j in range(n % 5):
        s = (s * 3 + j + n) % {MOD}
    return s + int(z % 7.0)


@cuda.jit(device=True)
def mix(p, q):
    if p > q:
        return p - q
    return q - p
'''


# Every program starts with a local int64 array of 8 elements (a Python list
# in the reference), filled so that no element is read uninitialised; the
# generated body then starts with its shared array, filled the same way.
PROLOGUE = ["    arr = LOCAL_ARRAY", "    for q0 in range(8):", "        arr[q0] = q0 * 3 - 5"]
SHARED = re.compile(r"cuda\.shared\.array\(8, np\.(\w+)\)")


def source_of(body, local_array="[0] * 8"):
    lines = [ln.replace("LOCAL_ARRAY", local_array) for ln in PROLOGUE]
    return "\n".join(["def fuzzed(a, b, x, y, v):"] + lines + body) + "\n"


def build(src):
    import numpy
    import cudajit as cuda
    src = src.replace("arr = [0] * 8", "arr = cuda.local.array(8, numpy.int64)")
    ns = {"math": math, "cuda": cuda, "numpy": numpy, "np": numpy}
    exec(compile(HELPER + src, "<fuzz>", "exec"), ns)
    return ns["fuzzed"]


def build_numba(src):
    """The program for numba's CPU jit (--target numba); the arrays are numpy's."""
    import numba
    src = src.replace("arr = [0] * 8", "arr = np.zeros(8, np.int64)")
    src = SHARED.sub(r"np.zeros(8, np.\1)", src)
    ns = {"math": math, "np": _np, "numba": numba}
    exec(compile(HELPER.replace("@cuda.jit(device=True)", "@numba.njit") + src, "<fuzz-numba>", "exec"), ns)
    return numba.njit(ns["fuzzed"])


# ---- the reference: numba's rules on CPython values ---------------------------
# Values of the int world are Python ints (kept small by construction); typed
# values are numpy scalars (np.int64 for a typed int64, so that it wraps),
# float64 values Python floats. Each operator, comparison and builtin call of
# the program goes through _bin / _un / _cmp / _call, which type the operands
# as numba would, convert them to the result type and compute in it (ints as
# Python ints, wrapped after; float32 by numpy, correctly rounded as on the
# GPU; float32 math functions by libm's sinf etc., what tests/host_exec.py
# binds libdevice's __nv_sinf to).
_NP = {"int32": _np.int32, "uint32": _np.uint32, "int64": _np.int64, "uint64": _np.uint64,
       "float32": _np.float32}
_PY = (int, float)
_OPS = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q, "/": lambda p, q: p / q,
        "//": lambda p, q: p // q, "%": lambda p, q: p % q, "**": lambda p, q: p ** q,
        "&": lambda p, q: p & q, "|": lambda p, q: p | q, "^": lambda p, q: p ^ q,
        "<<": lambda p, q: p << q, ">>": lambda p, q: p >> q}
_CMPS = {"<": lambda p, q: p < q, "<=": lambda p, q: p <= q, ">": lambda p, q: p > q,
         ">=": lambda p, q: p >= q, "==": lambda p, q: p == q, "!=": lambda p, q: p != q}
_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
for _f in ("sqrtf", "sinf", "cosf", "atanf", "tanhf", "expf", "logf"):
    getattr(_LIBM, _f).restype = ctypes.c_float
    getattr(_LIBM, _f).argtypes = [ctypes.c_float]


class Uninitialised(Exception):
    """A shared-array element read before any store (only a minimised program can)."""


def _ty(v):
    t = type(v)
    if t is int:
        return "int64"
    if t is float:
        return "float64"
    if t is bool or t is _np.bool_:
        raise TypeError("booleans are kept out of typed arithmetic")
    return t.__name__


def _wrap(n, t):
    bits, signed = INT_TYPES[t]
    n &= (1 << bits) - 1
    if signed and n >> (bits - 1):
        n -= 1 << bits
    return _NP[t](n)


def _int_to_f32(n):
    """n rounded once to float32 (an int64 or uint64 above 2**53 would round twice through float)."""
    m = abs(n)
    if m.bit_length() > 24:
        shift = m.bit_length() - 24
        q, rem = divmod(m, 1 << shift)
        half = 1 << (shift - 1)
        if rem > half or (rem == half and q & 1):
            q += 1
        m = q << shift
    return _np.float32(float(-m if n < 0 else m))


def _cast(v, t):
    """numba's conversion of a value to type t (explicit or implicit: the same)."""
    if t in INT_TYPES:
        if isinstance(v, (float, _np.floating)):
            f = float(v)
            if not math.isfinite(f):
                raise ValueError("float to int of a non-finite value: undefined")
            n = int(f)   # truncates toward zero
            bits, signed = INT_TYPES[t]
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
            if not lo <= n <= hi:
                raise ValueError(f"float to {t} out of range: undefined")
            return _NP[t](n)
        return _wrap(int(v), t)
    if t == "float32":
        if isinstance(v, (float, _np.floating)):
            return _np.float32(float(v))
        return _int_to_f32(int(v))
    return float(v) if isinstance(v, (float, _np.floating)) else float(int(v))


def _bin(op, x, y):
    if type(x) in _PY and type(y) in _PY:   # the int and float worlds: Python's semantics
        return _OPS[op](x, y)
    t = arith_type(op, _ty(x), _ty(y))
    if t in INT_TYPES:
        if op in ("<<", ">>"):   # numba's shl: no flags, so it wraps
            return _wrap(_OPS[op](int(_cast(x, t)), int(y)), t)
        r = _OPS[op](int(_cast(x, t)), int(_cast(y, t)))
        if op in ("+", "-", "*", "**") and INT_TYPES[t][1] and not -2 ** 63 <= r < 2 ** 63:
            # numba's signed add, sub and mul carry LLVM's nsw flag (and its
            # power multiplies with them): a signed overflow is undefined
            # there, not a wraparound; unsigned arithmetic wraps
            raise ValueError(f"signed overflow in {op}: undefined in numba")
        return _wrap(r, t)
    p, q = _cast(x, t), _cast(y, t)
    if op == "**":
        if q != 2:
            raise NotImplementedError("typed float powers other than ** 2")
        return p * p   # numba's and cudajit's power by a small integer multiply
    r = _OPS[op](p, q)
    return float(r) if t == "float64" else _np.float32(r)


def _un(op, x):
    if type(x) in _PY:
        return -x if op == "-" else ~x if op == "~" else +x
    t = unary_type(op, _ty(x))
    if t in INT_TYPES:
        # numba negates and inverts in the operand's own type, then widens
        # (int_negate_impl: "Negate before upcasting, for unsigned numbers"):
        # -np.uint32(1) is 4294967295, -np.int32(-2**31) is -2**31
        n = int(x)
        return _wrap(int(_wrap(-n if op == "-" else ~n if op == "~" else n, _ty(x))), t)
    return -x if op == "-" else x


def _cmp(op, x, y):
    if type(x) in _PY and type(y) in _PY:
        return _CMPS[op](x, y)
    t = unify_type(_ty(x), _ty(y))
    p, q = _cast(x, t), _cast(y, t)
    if t in INT_TYPES:
        return _CMPS[op](int(p), int(q))
    return _CMPS[op](float(p), float(q))


def _call(name, *args):
    x = args[0]
    typed = type(x) not in _PY
    if name == "abs":
        if typed and _ty(x) in INT_TYPES:
            return _wrap(abs(int(x)), _ty(x))
        return abs(x)
    if name in ("min", "max"):
        return (min if name == "min" else max)(*args)   # the operands share a type
    if name == "int":
        if isinstance(x, (float, _np.floating)):
            return int(_cast(x, "int64"))
        return x
    if name == "float":
        if type(x) is _np.float32:
            return x
        return _cast(x, "float64")
    if name.startswith("np."):
        return _cast(x, name[3:])
    if name.startswith("math."):
        fn = name[5:]
        if type(x) is _np.float32:
            return _np.float32(getattr(_LIBM, fn + "f")(float(x)))
        return getattr(math, fn)(float(x) if typed else x)
    raise NameError(name)


class _SharedArray:
    """cuda.shared.array(8, dtype) in the reference: stores convert to dtype."""

    def __init__(self, t):
        self.t, self.data = t, [None] * 8

    def __getitem__(self, i):
        v = self.data[i]
        if v is None:
            raise Uninitialised(f"sh[{i}]")
        return v

    def __setitem__(self, i, v):
        self.data[i] = _cast(v, self.t)


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_BUILTINS = ("abs", "min", "max", "int", "float")


def _helper_call(name, args):
    return ast.Call(ast.Name(name, ast.Load()), args, [])


class _Typed(ast.NodeTransformer):
    """Routes the program's operators and builtins through _bin/_un/_cmp/_call.
    With jitter, also wraps in _jit(...) what the GPU may round differently
    from CPython: libdevice's transcendental functions and pow (an ulp or two
    from libm's) and float products (which -fma=1 may fuse with an add,
    skipping their rounding). sqrt, division and sums are correctly rounded
    on both."""

    def __init__(self, jitter=False):
        self.jitter = jitter

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.left, ast.List):
            return node   # the local array's [0] * 8
        op = _BINOPS[type(node.op)]
        call = _helper_call("_bin", [ast.Constant(op), node.left, node.right])
        if self.jitter and op in ("*", "**"):
            return _helper_call("_jit", [call])
        return call

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) or isinstance(node.operand, ast.Constant):
            return node   # `not`, and negative literals
        op = {ast.USub: "-", ast.Invert: "~", ast.UAdd: "+"}[type(node.op)]
        return _helper_call("_un", [ast.Constant(op), node.operand])

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) != 1:
            raise NotImplementedError("chained comparisons")
        return _helper_call("_cmp", [ast.Constant(_CMPOPS[type(node.ops[0])]), node.left, node.comparators[0]])

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in _BUILTINS:
            name = f.id
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("np", "math"):
            name = f"{f.value.id}.{f.attr}"
        else:
            return node
        call = _helper_call("_call", [ast.Constant(name)] + node.args)
        if self.jitter and name.startswith("math.") and name not in ("math.sqrt", "math.fabs"):
            return _helper_call("_jit", [call])
        return call


def _reference_fn(src, jit=None):
    src = SHARED.sub(r"_SharedArray('\1')", src)
    tree = ast.parse(HELPER.replace("@cuda.jit(device=True)\n", "") + src)
    tree = ast.fix_missing_locations(_Typed(jitter=jit is not None).visit(tree))
    ns = {"math": math, "np": _np, "_bin": _bin, "_un": _un, "_cmp": _cmp, "_call": _call,
          "_SharedArray": _SharedArray, "_jit": jit}
    exec(compile(tree, "<fuzz-ref>", "exec"), ns)
    fn = ns["fuzzed"]

    def run(*args):
        with warnings.catch_warnings(), _np.errstate(all="ignore"):
            warnings.simplefilter("ignore")   # numpy's overflow warnings: the wraparound asked for
            return fn(*args)
    return run


def reference(src):
    return _reference_fn(src)


def jittered_reference(src, rng):
    """The reference with every such result moved by up to 3 ulps at random:
    an argument set whose result moves with it is decided by last-bit
    rounding (a float % of a large number, an equality, int() of a value
    near an integer) and is not compared on the GPU."""
    def jit(v):
        if type(v) is float and math.isfinite(v) and v != 0.0:
            return v * (1.0 + rng.randint(-3, 3) * 2.0 ** -52)
        if type(v) is _np.float32 and math.isfinite(v) and v != 0.0:
            return _np.float32(float(v) * (1.0 + rng.randint(-3, 3) * 2.0 ** -23))
        return v
    return _reference_fn(src, jit)


REFERENCE_ERRORS = (ZeroDivisionError, OverflowError, ValueError)
STATS = {"sets": 0, "compared": 0}   # argument sets run by run_one, and those compared


def rounding_sensitive(src, args, want, tries=4):
    rng = random.Random(repr(args))
    for _ in range(tries):
        fn = jittered_reference(src, rng)
        try:
            moved = fn(*ref_args(args))
        except REFERENCE_ERRORS:
            return True
        if not agree(float(moved), float(want)):
            return True
    return False


def agree(got, want):
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want):
        return got == want
    return abs(got - want) <= 1e-12 * max(1.0, abs(want))


def vtype_of(args_list):
    return "float64" if isinstance(args_list[0][4][0], float) else "int64"


def ref_args(args):
    """The reference's arguments: v as a numpy array of Python numbers (its slices are views)."""
    return args[:4] + (_np.array(args[4], dtype=object),)


def device_args(args, vtype):
    return args[:4] + (_np.array(args[4], dtype=vtype),)


GPU_KERNEL = '''
@cuda.jit(backend=BACKEND)
def fuzz_kernel(a, b, x, y, vs, out):
    i = cuda.blockIdx.x
    if i < out.size:
        out[i] = fuzzed(a[i], b[i], x[i], y[i], vs[i])
'''


def gpu_kernel(device_fn, backend):
    """The kernel that runs the program: block i calls it on argument set i."""
    import cudajit as cuda
    ns = {"cuda": cuda, "fuzzed": cuda.jit(device=True)(device_fn), "BACKEND": backend}
    exec(compile(GPU_KERNEL, "<fuzz-kernel>", "exec"), ns)
    return ns["fuzz_kernel"]


def gpu_signature(vtype):
    return f"void(int64[::1], int64[::1], float64[::1], float64[::1], {vtype}[:, ::1], float64[::1])"


def gpu_function(device_fn, backend):
    """The program run by a kernel on the GPU, one block of one thread per
    argument set (the shared array is the block's, so no thread races
    another): a callable that takes the list of argument tuples and returns
    the results."""
    import numpy
    kernel = gpu_kernel(device_fn, backend)

    def run(args_list):
        cols = list(zip(*args_list))
        arrays = [numpy.array(cols[0], numpy.int64), numpy.array(cols[1], numpy.int64),
                  numpy.array(cols[2], numpy.float64), numpy.array(cols[3], numpy.float64),
                  numpy.array(cols[4], vtype_of(args_list))]   # a row of v for each argument set
        out = numpy.full(len(args_list), numpy.nan)
        kernel[len(args_list), 1](*arrays, out)   # numpy arrays: copied back
        return out.tolist()
    return run


def run_one(body, args_list, backend="nvvm", target="cpu"):
    """'ok', 'rejected: <msg>', 'mismatch: ...' or 'crash: ...'. An argument
    set is (a, b, x, y, v), v a tuple of VLEN ints or floats."""
    from cudajit.errors import CompileError
    src = source_of(body)
    vtype = vtype_of(args_list)
    try:
        ref = reference(src)
        wants = []
        for args in args_list:
            try:
                wants.append(ref(*ref_args(args)))
            except REFERENCE_ERRORS:
                wants.append(None)   # outside the subset's arithmetic: not compared
    except Exception as e:  # the generator made something CPython refuses: a generator bug
        return f"generator: {type(e).__name__}: {e}"
    try:
        if target == "gpu":
            gots = gpu_function(build(src), backend)(args_list)   # compiles at the launch
        elif target == "numba":
            fn = _reference_quiet(build_numba(src))
            gots = [fn(*device_args(args, vtype)) if want is not None else None
                    for args, want in zip(args_list, wants)]
        else:
            from host_exec import host_function
            h = host_function(build(src), ["int64", "int64", "float64", "float64", f"{vtype}[::1]"],
                              backend=backend)
            gots = [h(*device_args(args, vtype)) if want is not None else None
                    for args, want in zip(args_list, wants)]
    except CompileError as e:
        return "rejected: " + str(e).splitlines()[0]
    except Exception as e:
        return f"crash: {type(e).__name__}: {e}"
    STATS["sets"] += len(args_list)
    STATS["compared"] += sum(want is not None for want in wants)
    for args, want, got in zip(args_list, wants, gots):
        if want is None:
            continue
        if target == "gpu" and not agree(float(got), float(want)) and rounding_sensitive(src, args, want):
            continue   # libdevice's last bit decides it: not a compiler bug
        if not agree(float(got), float(want)):
            return f"mismatch: args={args} cudajit={got!r} cpython={want!r}"
    return "ok"


def _reference_quiet(fn):
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return run


WHILE_STEP = re.compile(r"^\s*w\d+ \+= 1$")


def minimise(body, args_list, kind, backend="nvvm", target="cpu"):
    """Deletes statements (innermost lines first) while the failure kind stays."""
    changed = True
    while changed:
        changed = False
        for k in range(len(body) - 2, -1, -1):
            if WHILE_STEP.match(body[k]):
                continue   # without its step a while loop never ends (on both sides)
            trial = body[:k] + body[k + 1:]
            try:
                compile(source_of(trial), "<t>", "exec")
            except SyntaxError:
                continue
            if run_one(trial, args_list, backend, target).split(":")[0] == kind:
                body, changed = trial, True
    return body


def arguments(rng, vtype):
    """Six argument sets: four random, one of zeros and signs, one of special values."""
    def vec(special=False):
        if vtype == "int64":
            return tuple(rng.randint(-1000, 1000) for _ in range(VLEN))
        vals = [rng.uniform(-100, 100) for _ in range(VLEN)]
        if special:
            for k in rng.sample(range(VLEN), 4):
                vals[k] = rng.choice([math.inf, -math.inf, math.nan, -0.0, 5e-324, 1e300])
        return tuple(vals)
    args_list = [(rng.randint(-10**6, 10**6), rng.randint(-10**6, 10**6),
                  rng.uniform(-100, 100), rng.uniform(-100, 100), vec()) for _ in range(4)]
    args_list.append((0, -1, 0.0, -0.0, vec()))
    args_list.append((rng.randint(-3, 3), rng.randint(-3, 3), rng.choice([math.inf, -math.inf, math.nan, 1e300]),
                      rng.choice([-1e-300, 5e-324, 2.5]), vec(special=True)))
    return args_list


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="fuzz_out")
    p.add_argument("--max-programs", type=int, default=0, help="stop after this many (0: no limit)")
    p.add_argument("--backend", default="nvvm", choices=["nvvm", "llvm"],
                   help="llvm: run the LLVM back end's optimised module (O3, NVPTX target) on the CPU")
    p.add_argument("--target", default="cpu", choices=["cpu", "gpu", "numba"],
                   help="gpu: run each program in a kernel on the GPU, one block per argument set; "
                        "numba: run it through numba.njit instead of cudajit (a check of the reference)")
    opts = p.parse_args(argv)
    if opts.target == "gpu":
        import cudajit as cuda
        if not cuda.is_available():
            print("fuzz: --target gpu needs a GPU and its driver; none is usable here", file=sys.stderr)
            return 2
    if opts.target == "numba":
        try:
            import numba  # noqa: F401
        except ImportError:
            print("fuzz: --target numba needs numba", file=sys.stderr)
            return 2
    if opts.backend == "llvm":
        from cudajit import _core
        from cudajit.errors import ToolchainError
        try:
            _core.llvm_backend_version()
        except ToolchainError as e:   # every program would "crash" on it
            print(f"fuzz: --backend llvm needs cudajit's LLVM back end: {e}", file=sys.stderr)
            return 2
    rng = random.Random(opts.seed)
    STATS.update(sets=0, compared=0)
    counts = {"ok": 0, "rejected": 0, "mismatch": 0, "crash": 0, "generator": 0}
    reasons = {}
    start = time.time()
    n = 0
    while time.time() - start < opts.seconds and (not opts.max_programs or n < opts.max_programs):
        n += 1
        gen = Gen(rng)
        body = gen.program()
        args_list = arguments(rng, gen.vtype)
        outcome = run_one(body, args_list, opts.backend, opts.target)
        kind = outcome.split(":")[0]
        counts[kind] += 1
        if kind == "rejected":
            reasons[outcome] = reasons.get(outcome, 0) + 1
        if kind in ("mismatch", "crash", "generator"):
            small = minimise(body, args_list, kind, opts.backend, opts.target) if kind != "generator" else body
            os.makedirs(opts.out, exist_ok=True)
            path = os.path.join(opts.out, f"seed{opts.seed}_{n}_{kind}.py")
            with open(path, "w") as f:
                f.write(f"# {run_one(small, args_list, opts.backend, opts.target)} (backend {opts.backend}, "
                        f"target {opts.target})\n# args (a, b, x, y, v; v {gen.vtype}): {args_list}\n")
                f.write("import math\nimport numpy\nimport numpy as np\nimport cudajit as cuda\n" + HELPER +
                        source_of(small, "cuda.local.array(8, numpy.int64)"))
            print(f"[{n}] {kind}: {outcome[:200]} -> {path}", flush=True)
    elapsed = time.time() - start
    print(f"programs {n} in {elapsed:.0f} s (seed {opts.seed}, target {opts.target}): " +
          ", ".join(f"{k} {v}" for k, v in counts.items()))
    if n:
        print(f"rejection rate {counts['rejected'] / n:.1%}")
    if STATS["sets"]:
        print(f"argument sets compared {STATS['compared'] / STATS['sets']:.1%} "
              "(the others leave the subset's arithmetic: a NaN to int, an overflowing float, ...)")
    for reason, c in sorted(reasons.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {c:5d}  {reason[:160]}")
    return 1 if counts["mismatch"] or counts["crash"] or counts["generator"] else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        traceback.print_exc()
        sys.exit(2)
