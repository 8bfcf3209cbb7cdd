"""Bad-input fuzzing of the front end (issue 15): mutated and truncated code
objects, random constants and names, handed to the compiler. Each one must
compile or raise a Python exception (CompileError for what the decoder
refuses); a crash of the process is a bug.

    python scripts/fuzz_frontend.py --count 3000 --seed 1

Mutants are made from the differential fuzzer's programs (scripts/fuzz.py):
arguments and opcodes of co_code changed or the bytecode cut short,
constants replaced by objects of other types, names swapped. The bytecode
mutations keep each instruction's inline cache entries whole: CPython 3.11+
itself writes past the end of a code object whose last instruction lacks
them (reading `co_code` de-specialises in place), so such objects cannot be
made safely at all. They run in a child process that
records each mutant's index before compiling it; when the child dies, the
parent reports the mutant that killed it (replayable with --only INDEX) and
starts a new child after it.
"""
import argparse
import dis
import os
import random
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

ODD_CONSTANTS = [None, True, -1, 2**70, 1.5, float("nan"), 1j, "s", b"b", (), (1, "x"), frozenset(), ...]


def _caches(opcode):
    """Inline cache entries after an opcode (none before 3.11)."""
    table = getattr(dis, "_inline_cache_entries", None)
    if table is None:
        return 0
    if isinstance(table, dict):   # 3.13: by name
        return table.get(dis.opname[opcode], 0)
    return table[opcode]


def mutant(index, seed):
    """The index-th mutant of the seeded stream: (description, function)."""
    import math

    import fuzz
    import numpy

    import cudajit
    rng = random.Random(seed * 1_000_003 + index)
    # the program as cudajit compiles it (a local array, device functions), so
    # that an unmutated one compiles and the mutants reach past the decoder
    src = fuzz.source_of(fuzz.Gen(rng).program(), "cuda.local.array(8, np.int64)")
    ns = {"math": math, "np": numpy, "cuda": cudajit}
    exec(compile(fuzz.HELPER + src, "<mutant>", "exec"), ns)
    fn = ns["fuzzed"]
    code = fn.__code__
    kind = rng.randrange(4)
    starts = [i.offset for i in dis.get_instructions(code)]   # caches are not instructions
    if kind == 0:   # change arguments, and opcodes to others with as many cache entries
        raw = bytearray(code.co_code)
        for _ in range(rng.randint(1, 4)):
            at = rng.choice(starts)
            if rng.random() < 0.5:
                raw[at + 1] = rng.randrange(256)
            else:
                caches = _caches(raw[at])
                raw[at] = rng.choice([op for op in range(256) if dis.opname[op][0] != "<" and
                                      _caches(op) == caches])
        code = code.replace(co_code=bytes(raw))
        what = "arguments and opcodes changed"
    elif kind == 1:   # cut the bytecode short, after a whole instruction and its caches
        cut = rng.choice(starts[1:] or starts)
        code = code.replace(co_code=code.co_code[:cut])
        what = f"cut at {cut}"
    elif kind == 2:   # constants of other types
        consts = list(code.co_consts)
        for _ in range(rng.randint(1, 3)):
            if consts:
                consts[rng.randrange(len(consts))] = rng.choice(ODD_CONSTANTS)
        code = code.replace(co_consts=tuple(consts))
        what = "constants replaced"
    else:   # names swapped or made up
        names = list(code.co_names)
        if names:
            names[rng.randrange(len(names))] = rng.choice(names + ["nonexistent", "print", "__import__"])
        code = code.replace(co_names=tuple(names))
        what = "names changed"
    return what, types.FunctionType(code, fn.__globals__, fn.__name__)


def child(seed, start, count, progress):
    import cudajit as cuda
    sig = "(int64, int64, float64, float64, float64[::1])"   # fuzzed(a, b, x, y, v)
    outcomes = {}
    for i in range(start, start + count):
        with open(progress, "w") as f:
            f.write(str(i))
        what, fn = mutant(i, seed)
        try:
            cuda.compile_ptx(fn, sig, device=True)
            result = "compiled"
        except cuda.CompileError:
            result = "CompileError"
        except Exception as e:   # a Python exception is acceptable; say which
            result = type(e).__name__
        outcomes[result] = outcomes.get(result, 0) + 1
    print(outcomes, flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", type=int, default=None, help="replay one mutant in this process")
    p.add_argument("--child", nargs=3, type=int, metavar=("SEED", "START", "COUNT"), help=argparse.SUPPRESS)
    p.add_argument("--progress", default=None, help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.child:
        child(*opts.child, opts.progress)
        return 0
    if opts.only is not None:
        what, fn = mutant(opts.only, opts.seed)
        print(f"mutant {opts.only} ({what})", flush=True)
        child(opts.seed, opts.only, 1, os.devnull)
        return 0
    progress = f"/tmp/cudajit_fuzz_frontend_{os.getpid()}"
    start, crashes, totals = 0, [], {}
    while start < opts.count:
        proc = subprocess.run([sys.executable, __file__, "--child", str(opts.seed), str(start),
                               str(opts.count - start), "--progress", progress],
                              capture_output=True, text=True)
        if proc.returncode == 0:
            for part in proc.stdout.strip().strip("{}").split(", "):
                if part:
                    k, v = part.split(": ")
                    totals[k.strip("'")] = totals.get(k.strip("'"), 0) + int(v)
            break
        with open(progress) as f:
            dead = int(f.read() or start)
        crashes.append((dead, proc.returncode, proc.stderr.strip().splitlines()[-1:] if proc.stderr else []))
        print(f"mutant {dead} killed the process (status {proc.returncode}): replay with --only {dead} "
              f"--seed {opts.seed}", flush=True)
        start = dead + 1
    if os.path.exists(progress):
        os.remove(progress)
    print(f"mutants {opts.count} (seed {opts.seed}): {totals}, crashes {len(crashes)}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
