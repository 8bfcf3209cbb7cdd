#!/usr/bin/env bash
# One call on the GPU machine (the `device` tool): build, run every test
# (GPU-marked ones included), run the benchmarks; full logs under $OUT.
#   bash scripts/gpu_session.sh [pytest args...]
# SKIP_TESTS=1 / SKIP_BENCH=1 leave a part out; BENCHES="a.py b.py" picks the
# benchmarks; EXAMPLES="examples/x.py ..." runs examples after the tests.
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 - <<'PY' > "$OUT/env.txt" 2>&1
import sys, platform
print(sys.version)
for m in ("numpy", "cupy", "torch", "numba_cuda", "pybind11"):
    try:
        mod = __import__(m); print(m, getattr(mod, "__version__", "?"))
    except Exception as e:
        print(m, "missing:", e)
PY
nvidia-smi -L >> "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

start=$(date +%s)
if ! python3 -m pip install --no-build-isolation --no-deps -q . > "$OUT/build.log" 2>&1; then
  tail -60 "$OUT/build.log"; echo "BUILD FAILED"; exit 1
fi
echo "build: $(( $(date +%s) - start )) s"

if [ -z "${SKIP_TESTS:-}" ]; then
cd /tmp   # test the installed package, not the source tree
python3 -m pytest -q -p no:cacheprovider "${OLDPWD}/tests" -rs "$@" \
  --junitxml "$OUT/tests.xml" > "$OUT/tests.log" 2>&1
echo "tests rc=$?"
grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -40
tail -3 "$OUT/tests.log"
cd "$OLDPWD"
fi

for e in ${EXAMPLES:-}; do
  timeout 120 python3 "$e" > "$OUT/$(basename "$e" .py).log" 2>&1
  echo "== $e rc=$?"; tail -15 "$OUT/$(basename "$e" .py).log"
done

if [ -z "${SKIP_BENCH:-}" ] && ls benchmarks/*.py > /dev/null 2>&1; then
  for b in ${BENCHES:-benchmarks/bench.py benchmarks/bench_kernels.py benchmarks/bench_cub.py benchmarks/bench_compile.py}; do
    timeout ${BENCH_TIMEOUT:-240} python3 "$b" --out "$OUT/$(basename "$b" .py).json" > "$OUT/$(basename "$b" .py).log" 2>&1
    echo "== $b rc=$?"; tail -25 "$OUT/$(basename "$b" .py).log"
  done
fi
