"""Global device arrays captured by pointer (numba-cuda's "Global Variables
and Captured Values"): a kernel that reads a module-level CuPy / PyTorch /
cudajit device array bakes in its address, shape and strides, so later
writes to that memory are seen by later launches. Checked here on the IR,
the text form and the PTX, with objects that only have a
__cuda_array_interface__ (no GPU needed); tests/gpu/test_global_device_arrays_gpu.py
runs numba's example."""
import numpy as np
import pytest

import cudajit as cuda
from cudajit import _core
from cudajit.errors import CompileError


class Cai:
    """Stands for a device array: its __cuda_array_interface__ only."""

    def __init__(self, ptr, shape, typestr, strides=None, readonly=False, descr=None, mask=None):
        self.__cuda_array_interface__ = {"data": (ptr, readonly), "shape": shape, "typestr": typestr,
                                         "strides": strides, "version": 3}
        if descr is not None:
            self.__cuda_array_interface__["descr"] = descr
        if mask is not None:
            self.__cuda_array_interface__["mask"] = mask


PRICES = Cai(0x7F0000200000, (5,), "<f4")
MATRIX = Cai(0x7F0000300000, (4, 6), "<f8", strides=(96, 16))
READONLY = Cai(0x7F0000400000, (3,), "<i4", readonly=True)
REC = np.dtype([("x", np.float32), ("n", np.int32)], align=True)
RECORDS = Cai(0x7F0000500000, (8,), REC.str, descr=REC.descr)


def reads_and_writes(q, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = q[i] * PRICES[i] + MATRIX[i % 4, 2] + READONLY[i % 3] + RECORDS[i % 8].x
        PRICES[i] = 0
        RECORDS[i % 8].n = i


SIG = ["float32[::1]", "float64[::1]"]


def test_typed_ir_holds_the_arrays_by_address():
    text = _core.infer_ir(reads_and_writes, SIG)
    assert "const device_array(f32, (5,), (4,), 0x7f0000200000, rw)" in text
    # not C-contiguous strides: layout A
    assert "array(f64, 2d, A) = const device_array(f64, (4, 6), (96, 16), 0x7f0000300000, rw)" in text
    assert "array(i32, 1d, C, readonly) = const device_array(i32, (3,), (4,), 0x7f0000400000, ro)" in text
    assert "device_array(record{x: f32 @0, n: i32 @4; size 8" in text and "0x7f0000500000" in text


def test_the_addresses_reach_the_ptx():
    ptx, _ = cuda.compile_ptx(reads_and_writes, "void(float32[::1], float64[::1])", cc=(9, 0))
    for address in (0x7F0000200000, 0x7F0000300000, 0x7F0000400000, 0x7F0000500000):
        # the address itself, or with a constant offset folded into it
        assert any(str(address + off) in ptx for off in range(0, 4096, 4)), hex(address)


PADDED = np.dtype([("x", np.float64), ("n", np.int32)], align=True)   # 4 bytes of padding at the end
PADDED_RECORDS = Cai(0x7F0000800000, (8,), PADDED.str, descr=np.zeros(1, PADDED).__array_interface__["descr"])


def reads_padded(out):
    out[0] = PADDED_RECORDS[1].x + PADDED_RECORDS[2].n


def test_records_from_a_descr_with_padding():
    # numpy's descr names padding '' ('', '|V4'): the named fields keep their offsets
    text = _core.infer_ir(reads_padded, ["float64[::1]"])
    assert "device_array(record{x: f64 @0, n: i32 @8; size 16, align 8, aligned}, (8,), (16,), 0x7f0000800000, rw)" in text


def test_text_form_round_trips():
    line = "  v0:array(f64, 2d, A) = const device_array(f64, (4, 6), (96, 16), 0x7f0000300000, rw)\n"
    text = "func c() -> ?\nbb0:\n" + line + "  ret\n"
    assert _core.parse_print_ir(text) == text
    ro = text.replace("rw)", "ro)")
    assert _core.parse_print_ir(ro) == ro


def test_a_new_address_is_a_new_kernel():
    # Each address (and shape) is part of the kernel, as numba captures them at compile time.
    global PRICES
    old = PRICES
    try:
        a = cuda.compile_ptx(reads_and_writes, "void(float32[::1], float64[::1])", cc=(9, 0))[0]
        PRICES = Cai(0x7F0000A00000, (5,), "<f4")
        b = cuda.compile_ptx(reads_and_writes, "void(float32[::1], float64[::1])", cc=(9, 0))[0]
    finally:
        PRICES = old
    assert a != b and any(str(0x7F0000A00000 + off) in b for off in range(0, 4096, 4))


def write_readonly(out):
    READONLY[0] = 1   # L:ro


BAD_MASK = Cai(0x7F0000600000, (4,), "<f4", mask=object())
BAD_NULL = Cai(0, (0,), "<f4")
BAD_DTYPE = Cai(0x7F0000700000, (4,), "<M8[s]")
BAD_ENDIAN = Cai(0x7F0000900000, (4,), ">f4")


def use_mask(out):
    out[0] = BAD_MASK[0]   # L:mask


def use_null(out):
    out[0] = BAD_NULL[0]   # L:null


def use_dtype(out):
    out[0] = BAD_DTYPE[0]   # L:dtype


def use_endian(out):
    out[0] = BAD_ENDIAN[0]   # L:endian


@pytest.mark.parametrize("fn, label, text", [
    (write_readonly, "ro", "cannot assign to a readonly array"),
    (use_mask, "mask", "the device array with a mask"),
    (use_null, "null", "with a null data pointer"),
    (use_dtype, "dtype", "of dtype datetime64"),
    (use_endian, "endian", "that is not native-endian"),
])
def test_errors_name_the_line(fn, label, text):
    with pytest.raises(CompileError, match=text) as info:
        cuda.compile_ptx(fn, "void(float64[::1])", cc=(9, 0))
    line = next(n for n, t in enumerate(open(__file__), 1) if t.rstrip().endswith("# L:" + label))
    assert f"test_global_device_arrays.py:{line}" in str(info.value)


def test_cudajit_device_array_on_the_mock_driver(run_python, mock_driver):
    out = run_python("""
        import numpy as np, cudajit as cuda
        G = cuda.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
        def k(out):
            out[0] = G[1, 2]
        ptx, _ = cuda.compile_ptx(k, "void(float32[::1])", cc=(9, 0))
        addr = G.__cuda_array_interface__["data"][0]
        print("found" if any(str(addr + off) in ptx for off in range(0, 64, 4)) else "missing")
    """, driver=mock_driver)
    assert out.strip() == "found"
