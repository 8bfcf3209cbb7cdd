"""A transform-reduce with cudajit.compute: the sum of squares of a vector (its
squared norm), without a temporary array.

    python examples/transform_reduce.py [--n 16777216]

A TransformIterator squares each item as the reduction reads it (the square
is inlined into the reduction's kernel by cudajit's compiler), reduce_into
adds them with a user operator written in Python. The same program runs on
NVIDIA's cuda.compute by changing the import (cuda.compute takes keyword
arguments, as here). Checked against numpy; without a GPU, the algorithm's
kernels are compiled for sm_90 instead (compute.compile_for).
"""
import argparse
import sys

import numpy as np

import cudajit as cuda
import cudajit.compute as compute


def add(a, b):
    return a + b


def square(v):
    return v * v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1 << 24)
    a = ap.parse_args()
    h_init = np.zeros(1, np.float64)

    if not cuda.is_available():
        print("No usable CUDA GPU here; compiling the algorithm's kernels for sm_90 only.")
        reducer = compute.make_reduce_into(
            d_in=compute.TransformIterator(compute.ProxyArray(np.float64), square),
            d_out=compute.ProxyArray(np.float64), op=add, h_init=h_init)
        for name, cubin in compute.compile_for(reducer.launches()):
            print(f"  {name}: cubin {len(cubin)} bytes")
        return 0

    x_host = np.random.default_rng().standard_normal(a.n)
    x = cuda.to_device(x_host)
    out = cuda.device_array(1, np.float64)
    compute.reduce_into(d_in=compute.TransformIterator(x, square), d_out=out, op=add,
                        num_items=a.n, h_init=h_init)
    got = out.copy_to_host()[0]
    want = float(np.dot(x_host, x_host))
    ok = abs(got - want) <= 1e-9 * want
    print(f"sum of squares of {a.n} float64: {got:.10g} (numpy {want:.10g}) {'OK' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
