"""Differential fuzzer (issue 15): random, well-typed device functions in the
numba.cuda subset, run by CPython and by cudajit, compared.

    python scripts/fuzz.py --seconds 60 --seed 1 [--out fuzz_out] [--backend llvm] [--target gpu]

Each program is a function of two int64 and two float64 arguments: integer
arithmetic with Python's floor division and modulo (divisors kept non-zero),
bit operations and masked shifts, comparisons and chained conditions, float
arithmetic and math functions on safe domains, int/float conversions,
min/max/abs, tuples, a local array (wrapped and negative indices),
if/elif/else, for loops over ranges (negative steps too) and while loops
with break/continue, and calls of a device function.
Integers are kept inside +-2**40 by construction (a `% M` after products)
so that CPython's unbounded ints and the GPU's int64 agree without
wraparound. The reference is CPython running the same source; cudajit's run
is the compiled function executed on the CPU (tests/host_exec.py: cudajit's
NVVM IR JIT-compiled by llvmlite, libdevice bound to libm). Integers must
agree exactly, floats within 1e-12 relative (libm is the same on both
sides; the slack is for fused operations). --backend llvm runs what LLVM's
optimiser in cudajit's LLVM back end makes of the same IR (O3 for the NVPTX
target, then the CPU), a check of the second code generator's optimiser.
--target gpu runs each program on the GPU instead: the function becomes a
device function that a kernel calls once per thread, one thread per
argument set (the same arguments). libdevice's functions differ from libm's
by an ulp or two and the GPU fuses multiplies into adds; where such a last
bit decides the result (a float % of a huge number, an equality, int() near
an integer), the argument set is not compared: a mismatch counts only if the
reference, rerun with those results jittered by up to 3 ulps, never moves.

Programs cudajit rejects with a CompileError are counted (the rejection
rate shows what the subset covers); any other exception is a bug. Every
mismatch or crash is minimised (statements deleted while it still fails)
and written to --out as a reproducer.
"""
import argparse
import ast
import math
import os
import random
import re
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

MOD = 1_000_003          # keeps integers small: products of two stay far below 2**63
INT_VARS = ["a", "b"]    # the int64 arguments
FLOAT_VARS = ["x", "y"]  # the float64 arguments


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
]


class Gen:
    """Random statements and expressions over the variables in scope."""

    def __init__(self, rng):
        self.r = rng
        self.ints = list(INT_VARS)
        self.floats = list(FLOAT_VARS)
        self.counter = 0
        self.depth = 0
        self.frozen = set()   # loop counters: read, never assigned (a while loop must end)

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
        k = self.r.randrange(5)
        op = self.r.choice(["<", "<=", ">", ">=", "==", "!="])
        if k <= 1:
            return f"({self.int_expr(d + 1)} {op} {self.int_expr(d + 1)})"
        if k == 2:
            return f"({self.float_expr(d + 1)} {op} {self.float_expr(d + 1)})"
        if k == 3 and d < 2:
            return f"({self.cond(d + 1)} {self.r.choice(['and', 'or'])} {self.cond(d + 1)})"
        return f"(not {self.cond(d + 1)})" if d < 2 else f"({self.int_atom()} > 0)"

    # ---- statements ------------------------------------------------------
    def block(self, indent, n):
        lines = []
        for _ in range(n):
            lines += self.stmt(indent)
        return lines or [indent + "pass"]

    def stmt(self, indent):
        k = self.r.randrange(11)
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

    def compound(self, indent, k):
        inner = indent + "    "
        saved_i, saved_f = list(self.ints), list(self.floats)
        out = []
        if k in (4, 5):
            out.append(f"{indent}if {self.cond()}:")
            out += self.block(inner, self.r.randint(1, 3))
            self.ints, self.floats = list(saved_i), list(saved_f)
            if k == 5:
                out.append(f"{indent}elif {self.cond()}:")
                out += self.block(inner, self.r.randint(1, 2))
                self.ints, self.floats = list(saved_i), list(saved_f)
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
            assignable = [v for v in saved_i if v not in self.frozen]
            out.append(f"{indent}{self.r.choice(assignable)} = (acc + 1) % {MOD}")
        # names made in a branch or loop body may be unset after it: drop them
        self.ints, self.floats = saved_i, saved_f
        return out

    def loop_body(self, indent):
        out = self.block(indent, self.r.randint(1, 3))
        if self.r.random() < 0.4:
            out.append(f"{indent}if {self.cond()}:")
            out.append(f"{indent}    {self.r.choice(['break', 'continue'])}")
            out += self.block(indent, 1)
        return out

    def program(self):
        body = self.block("    ", self.r.randint(2, 7))
        ret_i = " + ".join(self.r.sample(self.ints, min(3, len(self.ints))))
        ret_f = " + ".join(self.r.sample(self.floats, min(2, len(self.floats))))
        body.append(f"    return float(({ret_i}) % {MOD}) + ({ret_f})")
        return body


HELPER = f'''
@cuda.jit(device=True)
def helper(n, z):
    s = 0
    for j in range(n % 5):
        s = (s * 3 + j + n) % {MOD}
    return s + int(z % 7.0)
'''


# Every program starts with a local int64 array of 8 elements (a Python list
# in the reference), filled so that no element is read uninitialised.
PROLOGUE = ["    arr = LOCAL_ARRAY", "    for q0 in range(8):", "        arr[q0] = q0 * 3 - 5"]


def source_of(body, local_array="[0] * 8"):
    lines = [ln.replace("LOCAL_ARRAY", local_array) for ln in PROLOGUE]
    return "\n".join(["def fuzzed(a, b, x, y):"] + lines + body) + "\n"


def build(src):
    import numpy
    import cudajit as cuda
    src = src.replace("arr = [0] * 8", "arr = cuda.local.array(8, numpy.int64)")
    ns = {"math": math, "cuda": cuda, "numpy": numpy}
    exec(compile(HELPER + src, "<fuzz>", "exec"), ns)
    return ns["fuzzed"]


def reference(src):
    ns = {"math": math}
    exec(compile(HELPER.replace("@cuda.jit(device=True)\n", "") + src, "<fuzz-ref>", "exec"), ns)
    return ns["fuzzed"]


class _Jitter(ast.NodeTransformer):
    """Wraps what the GPU may round differently from CPython in _jit(...):
    libdevice's transcendental functions and pow (an ulp or two from libm's)
    and float products (which -fma=1 may fuse with an add, skipping their
    rounding). sqrt, division and sums are correctly rounded on both."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, (ast.Mult, ast.Pow)):
            return ast.Call(ast.Name("_jit", ast.Load()), [node], [])
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math"
                and f.attr not in ("sqrt", "fabs")):
            return ast.Call(ast.Name("_jit", ast.Load()), [node], [])
        return node


def jittered_reference(src, rng):
    """The reference with every such result moved by up to 3 ulps at random:
    an argument set whose result moves with it is decided by last-bit
    rounding (a float % of a large number, an equality, int() of a value
    near an integer) and is not compared on the GPU."""
    tree = ast.fix_missing_locations(_Jitter().visit(ast.parse(HELPER.replace("@cuda.jit(device=True)\n", "") + src)))

    def jit(v):
        if type(v) is float and math.isfinite(v) and v != 0.0:
            return v * (1.0 + rng.randint(-3, 3) * 2.0 ** -52)
        return v
    ns = {"math": math, "_jit": jit}
    exec(compile(tree, "<fuzz-ref-jittered>", "exec"), ns)
    return ns["fuzzed"]


def rounding_sensitive(src, args, want, tries=4):
    rng = random.Random(hash(args))
    for _ in range(tries):
        fn = jittered_reference(src, rng)
        try:
            moved = fn(*args)
        except (ZeroDivisionError, OverflowError, ValueError):
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


GPU_KERNEL = '''
@cuda.jit(backend=BACKEND)
def fuzz_kernel(a, b, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = fuzzed(a[i], b[i], x[i], y[i])
'''


def gpu_function(device_fn, backend):
    """The program run by a kernel on the GPU, one thread per argument set:
    a callable that takes the list of argument tuples and returns the results."""
    import numpy
    import cudajit as cuda
    ns = {"cuda": cuda, "fuzzed": cuda.jit(device=True)(device_fn), "BACKEND": backend}
    exec(compile(GPU_KERNEL, "<fuzz-kernel>", "exec"), ns)
    kernel = ns["fuzz_kernel"]

    def run(args_list):
        cols = list(zip(*args_list))
        arrays = [numpy.array(cols[0], numpy.int64), numpy.array(cols[1], numpy.int64),
                  numpy.array(cols[2], numpy.float64), numpy.array(cols[3], numpy.float64)]
        out = numpy.full(len(args_list), numpy.nan)
        kernel[1, 32 * ((len(args_list) + 31) // 32)](*arrays, out)   # numpy arrays: copied back
        return out.tolist()
    return run


def run_one(body, args_list, backend="nvvm", target="cpu"):
    """'ok', 'rejected: <msg>', 'mismatch: ...' or 'crash: ...'."""
    from cudajit.errors import CompileError
    src = source_of(body)
    try:
        ref = reference(src)
        wants = []
        for args in args_list:
            try:
                wants.append(ref(*args))
            except (ZeroDivisionError, OverflowError, ValueError):
                wants.append(None)   # outside the subset's arithmetic: not compared
    except Exception as e:  # the generator made something CPython refuses: a generator bug
        return f"generator: {type(e).__name__}: {e}"
    try:
        if target == "gpu":
            gots = gpu_function(build(src), backend)(args_list)   # compiles at the launch
        else:
            from host_exec import host_function
            h = host_function(build(src), ["int64", "int64", "float64", "float64"], backend=backend)
            gots = [h(*args) if want is not None else None for args, want in zip(args_list, wants)]
    except CompileError as e:
        return "rejected: " + str(e).splitlines()[0]
    except Exception as e:
        return f"crash: {type(e).__name__}: {e}"
    for args, want, got in zip(args_list, wants, gots):
        if want is None:
            continue
        if target == "gpu" and not agree(float(got), float(want)) and rounding_sensitive(src, args, want):
            continue   # libdevice's last bit decides it: not a compiler bug
        if not agree(float(got), float(want)):
            return f"mismatch: args={args} cudajit={got!r} cpython={want!r}"
    return "ok"


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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="fuzz_out")
    p.add_argument("--max-programs", type=int, default=0, help="stop after this many (0: no limit)")
    p.add_argument("--backend", default="nvvm", choices=["nvvm", "llvm"],
                   help="llvm: run the LLVM back end's optimised module (O3, NVPTX target) on the CPU")
    p.add_argument("--target", default="cpu", choices=["cpu", "gpu"],
                   help="gpu: run each program in a kernel on the GPU, one thread per argument set")
    opts = p.parse_args(argv)
    if opts.target == "gpu":
        import cudajit as cuda
        if not cuda.is_available():
            print("fuzz: --target gpu needs a GPU and its driver; none is usable here", file=sys.stderr)
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
    counts = {"ok": 0, "rejected": 0, "mismatch": 0, "crash": 0, "generator": 0}
    reasons = {}
    start = time.time()
    n = 0
    while time.time() - start < opts.seconds and (not opts.max_programs or n < opts.max_programs):
        n += 1
        body = Gen(rng).program()
        args_list = [(rng.randint(-10**6, 10**6), rng.randint(-10**6, 10**6),
                      rng.uniform(-100, 100), rng.uniform(-100, 100)) for _ in range(4)]
        args_list.append((0, -1, 0.0, -0.0))
        args_list.append((rng.randint(-3, 3), rng.randint(-3, 3), rng.choice([math.inf, -math.inf, math.nan, 1e300]),
                          rng.choice([-1e-300, 5e-324, 2.5])))
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
                        f"target {opts.target})\n# args: {args_list}\n")
                f.write("import math\nimport numpy\nimport cudajit as cuda\n" + HELPER +
                        source_of(small, "cuda.local.array(8, numpy.int64)"))
            print(f"[{n}] {kind}: {outcome[:200]} -> {path}", flush=True)
    elapsed = time.time() - start
    print(f"programs {n} in {elapsed:.0f} s (seed {opts.seed}, target {opts.target}): " +
          ", ".join(f"{k} {v}" for k, v in counts.items()))
    if n:
        print(f"rejection rate {counts['rejected'] / n:.1%}")
    for reason, c in sorted(reasons.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {c:5d}  {reason[:160]}")
    return 1 if counts["mismatch"] or counts["crash"] or counts["generator"] else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        traceback.print_exc()
        sys.exit(2)
