#!/usr/bin/env bash
# Before/after benchmarks in one call on the GPU machine: installs the base
# revision (a `git archive` tarball in .base/base.tar, carried) and this tree
# side by side, then runs each benchmark for both, taking turns, so that
# both sets of figures come from the same machine in the same run.
#   bash scripts/gpu_compare.sh            # BENCHES, ROUNDS to override
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
start=$(date +%s)
rm -rf /tmp/src_base && mkdir -p /tmp/src_base && tar -xf .base/base.tar -C /tmp/src_base
build() {  # $1 = source dir, $2 = target dir
  python3 -m pip install --no-build-isolation --no-deps -q --target "$2" "$1" > "$OUT/build_$(basename "$2").log" 2>&1 \
    || { tail -40 "$OUT/build_$(basename "$2").log"; echo "BUILD FAILED: $1"; exit 1; }
}
build /tmp/src_base /tmp/site_base &
build "$PWD" /tmp/site_new &
wait
echo "builds: $(( $(date +%s) - start )) s"
for round in $(seq 1 "${ROUNDS:-2}"); do
  for which in base new; do
    for b in ${BENCHES:-bench_launch bench_compile bench_kernels}; do
      log="$OUT/${b}_${which}_${round}.log"
      PYTHONPATH=/tmp/site_$which timeout ${BENCH_TIMEOUT:-300} python3 "benchmarks/$b.py" \
        ${BENCH_ARGS:-} --out "$OUT/${b}_${which}_${round}.json" > "$log" 2>&1
      echo "== $b [$which, round $round] rc=$? ($(( $(date +%s) - start )) s)"
      grep -E "cudajit|ratio|PASS|FAIL|floor" "$log" | head -${LINES_PER:-14}
    done
  done
done
