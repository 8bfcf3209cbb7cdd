"""cudajit.tile (issue 11, groundwork): the public API with cuTile's names and
signatures, the not-yet-compiled error, and the tile type of compiler/types
through the _core bindings (text form, interning, parse round trip, shape rules).

No GPU needed: nothing here launches a kernel.
"""

import inspect
import math
import pickle
import typing

import numpy as np
import pytest

import cudajit
import cudajit.tile as ct
from cudajit import _core
from cudajit.errors import CompileError, DeviceOnlyError

# ---- the API surface --------------------------------------------------------------

# The names issue 11 asks for, grouped as docs/tiles.md lists them.
ISSUE_NAMES = {
    "launch": ["kernel", "launch", "Constant", "cdiv"],
    "grid": ["bid", "num_blocks", "num_tiles"],
    "memory": ["load", "store", "gather", "scatter", "PaddingMode", "TiledView", "Array"],
    "factories": ["full", "zeros", "ones", "arange"],
    "dtypes": ["DType", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "float16", "bfloat16", "float32", "float64", "tfloat32"],
    "shape": ["astype", "reshape", "permute", "transpose", "expand_dims", "broadcast_to", "where"],
    "math": ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "abs", "floor",
             "ceil", "minimum", "maximum", "pow", "add", "sub", "mul", "truediv", "floordiv"],
    "reductions": ["sum", "max", "min", "prod", "argmax", "argmin", "reduce", "cumsum", "cumprod",
                   "scan"],
    "matmul": ["matmul", "mma"],
    "atomics": ["atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
                "atomic_xchg", "atomic_cas"],
    "debug": ["printf", "print"],
}


@pytest.mark.parametrize("group", sorted(ISSUE_NAMES))
def test_issue_names_exist_and_are_exported(group):
    for name in ISSUE_NAMES[group]:
        assert hasattr(ct, name), name
        assert name in ct.__all__, name


def test_every_export_resolves():
    missing = [name for name in ct.__all__ if not hasattr(ct, name)]
    assert missing == []


OPS = [name for name in ct.__all__ if callable(getattr(ct, name)) and
       hasattr(getattr(ct, name), "__wrapped__")]


def test_there_are_many_ops():
    assert len(OPS) > 80
    assert "cdiv" not in OPS   # cdiv is a real host function


@pytest.mark.parametrize("name", OPS)
def test_op_stub_is_a_compiler_symbol_and_device_only(name):
    op = getattr(ct, name)
    assert op._cudajit_symbol_ == f"cudajit.tile.{name}"
    assert op.__name__ == name
    assert op.__doc__ and op.__doc__.strip()
    with pytest.raises(DeviceOnlyError, match=rf"cudajit\.tile\.{name} can only be used in tile code"):
        op(1, 2, 3)


def test_module_is_a_compiler_symbol():
    assert ct._cudajit_symbol_ == "cudajit.tile"
    assert ct.cdiv._cudajit_symbol_ == "cudajit.tile.cdiv"


def _params(fn):
    return [(p.name, p.kind.name, p.default) for p in inspect.signature(fn).parameters.values()]


P, K, KW, VAR = "POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY", "VAR_POSITIONAL"
E = inspect.Parameter.empty


def test_signatures_are_cutiles():
    # Written out from cuTile Python 1.x's documentation, so a drift shows here.
    assert _params(ct.load) == [
        ("array", P, E), ("index", K, E), ("shape", K, E), ("order", KW, "C"),
        ("padding_mode", KW, ct.PaddingMode.UNDETERMINED), ("check_bounds", KW, True),
        ("latency", KW, None), ("allow_tma", KW, None), ("memory_order", KW, ct.MemoryOrder.WEAK),
        ("memory_scope", KW, ct.MemoryScope.NONE)]
    assert [p[0] for p in _params(ct.store)] == [
        "array", "index", "tile", "order", "check_bounds", "latency", "allow_tma", "memory_order",
        "memory_scope"]
    assert _params(ct.mma) == [("x", P, E), ("y", P, E), ("acc", K, E), ("use_fast_acc", KW, False)]
    assert _params(ct.sum)[:3] == [("x", P, E), ("axis", K, None), ("keepdims", KW, False)]
    assert _params(ct.cumsum)[:3] == [("x", P, E), ("axis", K, 0), ("reverse", KW, False)]
    assert _params(ct.arange) == [("size", P, E), ("dtype", KW, E), ("start", KW, 0), ("step", KW, 1)]
    assert _params(ct.full) == [("shape", K, E), ("fill_value", K, E), ("dtype", K, E)]
    assert _params(ct.atomic_add)[:3] == [("array", P, E), ("indices", P, E), ("update", P, E)]
    assert _params(ct.gather)[:4] == [("array", P, E), ("indices", P, E), ("mask", KW, None),
                                      ("padding_value", KW, 0)]
    assert _params(ct.where) == [("cond", P, E), ("x", P, E), ("y", P, E)]
    assert _params(ct.printf) == [("format", K, E), ("args", VAR, E)]
    assert _params(ct.bid) == [("axis", K, E)]


def test_enums_have_cutiles_values():
    assert {m.name: m.value for m in ct.PaddingMode} == {
        "UNDETERMINED": "undetermined", "ZERO": "zero", "NEG_ZERO": "neg_zero", "NAN": "nan",
        "POS_INF": "pos_inf", "NEG_INF": "neg_inf"}
    assert [m.name for m in ct.MemoryOrder] == ["WEAK", "RELAXED", "ACQUIRE", "RELEASE", "ACQ_REL"]
    assert [m.name for m in ct.MemoryScope] == ["NONE", "BLOCK", "CLUSTER", "DEVICE", "SYS"]
    assert ct.RoundingMode.RN.value == "nearest_even"
    assert ct.PaddingMode.ZERO._cudajit_symbol_ == "cudajit.tile.PaddingMode.ZERO"
    assert ct.MemoryOrder.ACQ_REL._cudajit_symbol_ == "cudajit.tile.MemoryOrder.ACQ_REL"


# ---- cdiv on the host -----------------------------------------------------------------

def test_cdiv_matches_ceil_division():
    for x in range(0, 200):
        for y in range(1, 40):
            assert ct.cdiv(x, y) == math.ceil(x / y), (x, y)
    assert ct.cdiv(9, 4) == 3 and ct.cdiv(8, 4) == 2   # cuTile's own example
    big = 2**62 + 1
    assert ct.cdiv(big, 2**31) == -(-big // 2**31)     # exact for ints past float precision


def test_cdiv_by_zero_raises():
    with pytest.raises(ZeroDivisionError):
        ct.cdiv(5, 0)


# ---- dtypes ---------------------------------------------------------------------------

def test_dtypes():
    assert str(ct.float32) == "float32" and repr(ct.bfloat16) == "<DType 'bfloat16'>"
    assert isinstance(ct.float16, ct.DType)
    assert [ct.int8.bitwidth, ct.float64.bitwidth, ct.tfloat32.bitwidth, ct.bool_.bitwidth] == \
        [8, 64, 32, 8]
    assert ct.tfloat32.category == "restricted_float" and ct.uint16.category == "uint"
    assert ct.float32._cudajit_symbol_ == "numpy.float32"      # the compiler's dtype symbol
    assert ct.bfloat16._cudajit_symbol_ == "cudajit.tile.bfloat16"
    assert ct.bfloat16.ir_name == "bf16" and ct.tfloat32.ir_name == "tf32" and ct.int64.ir_name == "i64"
    assert pickle.loads(pickle.dumps(ct.float16)) is ct.float16
    with pytest.raises(AttributeError):
        ct.float32._name = "float64"
    with pytest.raises(DeviceOnlyError):
        ct.float32(1.0)


@pytest.mark.parametrize("name", ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                  "uint32", "uint64", "float16", "float32", "float64"])
def test_every_dtype_with_an_ir_name_is_a_tile_dtype(name):
    dtype = getattr(ct, name)
    assert _core.tile_type(dtype.ir_name, (4,)) == f"tile({dtype.ir_name}, 4)"


# ---- Constant -------------------------------------------------------------------------

def test_constant_annotation():
    hint = ct.Constant[int]
    assert typing.get_origin(hint) is typing.Annotated
    assert typing.get_args(hint)[0] is int
    assert isinstance(hint.__metadata__[0], ct.ConstantAnnotation)
    assert ct.Constant[int] == ct.Constant[int]


def test_kernel_finds_constant_parameters():
    @ct.kernel
    def k(x, out, TILE: ct.Constant[int], ANY: ct.Constant, plain: int, n=3):
        pass
    assert k.parameters == ("x", "out", "TILE", "ANY", "plain", "n")
    assert k.constant_parameters == ("TILE", "ANY")


def test_kernel_finds_constant_parameters_in_string_annotations():
    namespace = {"ct": ct}
    exec("from __future__ import annotations\n"
         "def k(x, TILE: ct.Constant[int], M: Constant[int], other: int, N: tile.Constant,\n"
         "      C: ConstantLike[int]):\n"
         "    pass\n", namespace)
    assert ct.kernel(namespace["k"]).constant_parameters == ("TILE", "M", "N")


# ---- @ct.kernel and launch: compiled by the tile pipeline ------------------------------------

@ct.kernel
def segment_sums(x, out, TILE: ct.Constant[int]):
    seg = ct.bid(0)
    t = ct.load(x, index=(seg, 0), shape=(1, TILE))
    ct.store(out, index=(seg,), tile=ct.sum(t, axis=1))


SEGMENT_SIG = "void(float32[:, ::1], float32[::1], int64)"


def test_compile_ptx_of_a_tile_kernel():
    ptx, resty = cudajit.compile_ptx(segment_sums, SEGMENT_SIG, constants={"TILE": 1024})
    assert resty == "none"
    assert ".reqntid 128, 1, 1" in ptx            # 1024 elements: 4 warps, the compiler's choice
    assert "ld.global.v4" in ptx and "shfl.sync.bfly" in ptx and "bar.sync" in ptx
    small, _ = cudajit.compile_ptx(segment_sums, SEGMENT_SIG, constants={"TILE": 64})
    assert ".reqntid 32, 1, 1" in small           # each Constant value compiles its own kernel
    assert small != ptx


def test_constant_values_are_required_and_checked():
    with pytest.raises(TypeError, match="TILE"):
        cudajit.compile_ptx(segment_sums, SEGMENT_SIG)
    with pytest.raises(TypeError, match="takes 3 argument"):
        segment_sums[4](None, None)
    with pytest.raises(TypeError, match="must be an int, float or bool"):
        ct.launch(None, (4,), segment_sums, (None, None, "1024"))


def test_simt_entry_points_refuse_tile_kernels():
    with pytest.raises(TypeError, match="cannot be applied to a @cudajit.tile.kernel"):
        cudajit.jit(segment_sums)
    with pytest.raises(TypeError, match="cannot be applied to a @cudajit.tile.kernel"):
        cudajit.jit(device=True)(segment_sums)


def test_a_bad_tile_shape_names_the_line():
    @ct.kernel
    def bad(x, out):
        t = ct.load(x, index=(0,), shape=(12,))
        ct.store(out, index=(0,), tile=t)
    with pytest.raises(CompileError) as info:
        cudajit.compile_ptx(bad, "void(float32[::1], float32[::1])")
    err = info.value
    assert err.file == __file__ and "ct.load" in str(err) and "power of two" in str(err)
    assert err.line == bad.py_func.__code__.co_firstlineno + 2


def test_compile_error_is_cudajits():
    assert issubclass(CompileError, Exception) and CompileError is cudajit.CompileError


def test_kernel_keeps_the_function_and_options():
    assert segment_sums.__name__ == "segment_sums" and segment_sums.py_func.__name__ == "segment_sums"
    assert segment_sums.options["opt_level"] == 3 and segment_sums.options["num_warps"] is None
    k8 = segment_sums.replace_hints(num_warps=8)
    assert k8.options["num_warps"] == 8 and k8.py_func is segment_sums.py_func
    assert segment_sums.options["num_warps"] is None
    with pytest.raises(TypeError, match="unknown option"):
        segment_sums.replace_hints(block=128)


def test_kernel_with_options():
    @ct.kernel(num_warps=8, occupancy=2, num_ctas=2)
    def k(x):
        pass
    assert isinstance(k, ct.TileKernel)
    assert k.options["num_warps"] == 8 and k.options["occupancy"] == 2
    ptx, _ = cudajit.compile_ptx(k, "void(float32[::1])")
    assert ".reqntid 256, 1, 1" in ptx             # num_warps=8


@pytest.mark.parametrize("options", [{"num_warps": 3}, {"num_warps": 64}, {"num_ctas": 32},
                                     {"occupancy": 0}, {"opt_level": 4}, {"num_worker_warps": 2},
                                     {"num_warps": True}])
def test_bad_kernel_options_are_rejected(options):
    with pytest.raises(ValueError, match="cudajit.tile.kernel: " + next(iter(options))):
        ct.kernel(**options)(lambda x: None)


def test_kernel_misuse():
    with pytest.raises(TypeError, match="Python functions"):
        ct.kernel(len)
    with pytest.raises(TypeError, match="cannot be called directly"):
        segment_sums(None, None, 1024)
    # numba's [blocks, threads, ...] would run silently wrong as a grid: refused.
    for config in [((4,), (128,)), (4, 128), (4, 128, 0), (1, 2, 3, 4)]:
        with pytest.raises(TypeError, match="grid only"):
            segment_sums[config]
    with pytest.raises(TypeError, match="grid"):
        segment_sums[(1, 2, 3, 4),]
    for grid in [0, (1, 2, 3, 4), (), (2.0,), (-1,)]:
        with pytest.raises(TypeError, match="grid"):
            ct.launch(None, grid, segment_sums, (None, None, 1024))
    with pytest.raises(TypeError, match="takes 3 argument"):
        ct.launch(None, (1,), segment_sums, (None, None))
    with pytest.raises(TypeError, match="must be a tuple"):
        ct.launch(None, (1,), segment_sums, [None, None, 1024])

    @cudajit.jit
    def simt(x):
        pass
    with pytest.raises(TypeError, match="launches @cudajit.tile.kernel"):
        ct.launch(None, (1,), simt, (None,))


def test_type_stub_classes_cannot_be_made_on_the_host():
    for cls in (ct.Tile, ct.Array, ct.TiledView):
        with pytest.raises(TypeError, match="only inside tile code"):
            cls()


def test_tile_ops_in_a_simt_kernel_need_its_block_shape():
    # ct.bid is the block index in any kernel (no block shape needed); other
    # tile operations in a SIMT kernel are lowered for its launch block shape
    # (tests/test_tile_simt.py), so without one they are a compile error.
    def simt(out):
        out[0] = ct.bid(0)
    ptx, _ = cudajit.compile_ptx(simt, "void(int32[::1])", arch="sm_80")
    assert "%ctaid.x" in ptx

    def tiles(x, out):
        t = ct.load(x, index=(0,), shape=(32,))
        ct.store(out, index=(0,), tile=t)
    with pytest.raises(CompileError, match="compiled for its launch block shape") as info:
        cudajit.compile_ptx(tiles, "void(float32[::1], float32[::1])", arch="sm_80")
    assert info.value.line == tiles.__code__.co_firstlineno + 1 and info.value.construct == "ct.load"
    assert "ld.global" in cudajit.compile_ptx(tiles, "void(float32[::1], float32[::1])", arch="sm_80",
                                              block=(32,))[0]


# ---- the tile type (compiler/types) through _core -------------------------------------------

def test_tile_type_text():
    assert _core.tile_type("float32", (16, 64)) == "tile(f32, 16x64)"
    assert _core.tile_type("f16", [128]) == "tile(f16, 128)"
    assert _core.tile_type("int32", ()) == "tile(i32)"             # 0-d: cuTile's scalar tile
    assert _core.tile_type("bool", (1, 2, 4)) == "tile(b1, 1x2x4)"
    assert _core.type_numba_string("tile(f32, 16x64)") == "Tile[float32,(16,64)]"
    assert _core.type_numba_string("tile(i64)") == "Tile[int64,()]"


@pytest.mark.parametrize("text", ["tile(f32, 16x64)", "tile(f64, 1)", "tile(u8, 2x1x4x8)", "tile(b1)",
                                  "tile(i64, 1024)", "tuple(tile(f32, 16), i64)",
                                  "tuple(tile(f16, 64x64), tile(f32, 64x64))",
                                  "optional(tile(f32, 4))", "array(f32, 2d, C)"])
def test_type_text_round_trips(text):
    assert _core.type_text(text) == text
    assert _core.type_identity(_core.type_text(text)) == _core.type_identity(text)


def test_tile_type_text_tolerates_spaces():
    assert _core.type_text("tile( f32 ,16x64 )") == "tile(f32, 16x64)"
    assert _core.parse_tile_type("tile(float32, 16x64)") == ("f32", (16, 64))
    assert _core.parse_tile_type("tile(i32)") == ("i32", ())


def test_tile_types_are_interned():
    a = _core.type_identity("tile(f32, 16x64)")
    assert a == _core.type_identity("tile(float32, 16x64)")
    assert a == _core.type_identity(_core.tile_type("float32", (16, 64)))
    others = ["tile(f32, 64x16)", "tile(f64, 16x64)", "tile(f32, 16x64x1)", "tile(f32, 1024)",
              "tile(f32)", "f32", "array(f32, 2d, C)", "tuple(tile(f32, 16x64))"]
    ids = {_core.type_identity(t) for t in others}
    assert a not in ids and len(ids) == len(others)


@pytest.mark.parametrize("shape, why", [
    ((12,), "dimension 0 of \\(12,\\) is 12, not a power of two"),
    ((16, 3), "dimension 1 of \\(16, 3\\) is 3, not a power of two"),
    ((0,), "is 0, not a power of two"),
    ((-4,), "is -4, not a power of two"),
    ((1,) * 9, "at most 8 dimensions"),
    ((4096, 8192), "more than 16777216 elements"),
    ((2**40, 2**40), "more than 16777216 elements"),
])
def test_bad_tile_shapes_are_rejected(shape, why):
    with pytest.raises(ValueError, match=why):
        _core.tile_type("float32", shape)


def test_tile_limits():
    assert _core.MAX_TILE_RANK == 8 and _core.MAX_TILE_ELEMENTS == 2**24
    assert _core.tile_type("f32", (1,) * 8) == "tile(f32, 1x1x1x1x1x1x1x1)"
    assert _core.tile_type("f32", (4096, 4096)) == "tile(f32, 4096x4096)"


@pytest.mark.parametrize("text, why", [
    ("tile(f32, 12x64)", "dimension 0 of \\(12, 64\\) is 12, not a power of two"),
    ("tile(f32, 0)", "is 0, not a power of two"),
    ("tile(c64, 16)", "complex64 is not a tile dtype"),
    ("tile(f33, 16)", "unknown dtype 'f33'"),
    ("tile(f32, 16x)", "expected the shape"),
    ("tile(f32, -16)", "expected the shape"),
    ("tile(f32, 16x64", "expected '\\)'"),
    ("tile(f32, 16) x", "unexpected text after"),
    ("tile(f32, 99999999999999999999)", "expected the shape"),
    ("tiles(f32, 16)", "expected 'tile\\('"),
])
def test_bad_tile_text_is_rejected_with_the_reason(text, why):
    with pytest.raises(ValueError, match=why):
        _core.parse_tile_type(text)
    with pytest.raises(ValueError):
        _core.type_text(text)


def test_complex_is_not_a_tile_dtype():
    with pytest.raises(ValueError, match="complex128 is not a tile dtype"):
        _core.tile_type("complex128", (4,))
    with pytest.raises(ValueError, match="unknown dtype"):
        _core.tile_type("float8", (4,))


# ---- cuTile's dtype promotion (compiler/types/tile_promotion.cpp) ----------------------------

# cuTile's promotion table for the dtypes cudajit's scalar table has (rows and
# columns in this order); "--" where cuTile asks for an explicit astype.
_ORDER = "b1 u8 u16 u32 u64 i8 i16 i32 i64 f16 f32 f64 bf16 tf32".split()
# cuda.tile 1.7's table (cuda.tile._datatype's promotion table); "--": signed
# with unsigned, "XX": any other refusal (float16 with bfloat16, tfloat32).
_CUTILE_PROMOTION = """
b1   u8   u16  u32  u64  i8   i16  i32  i64  f16  f32  f64  bf16 XX
u8   u8   u16  u32  u64  --   --   --   --   f16  f32  f64  bf16 XX
u16  u16  u16  u32  u64  --   --   --   --   f16  f32  f64  bf16 XX
u32  u32  u32  u32  u64  --   --   --   --   f16  f32  f64  bf16 XX
u64  u64  u64  u64  u64  --   --   --   --   f16  f32  f64  bf16 XX
i8   --   --   --   --   i8   i16  i32  i64  f16  f32  f64  bf16 XX
i16  --   --   --   --   i16  i16  i32  i64  f16  f32  f64  bf16 XX
i32  --   --   --   --   i32  i32  i32  i64  f16  f32  f64  bf16 XX
i64  --   --   --   --   i64  i64  i64  i64  f16  f32  f64  bf16 XX
f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f64  XX   XX
f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  f32  XX
f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  XX
bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 XX   f32  f64  bf16 XX
XX   XX   XX   XX   XX   XX   XX   XX   XX   XX   XX   XX   XX   tf32
"""


def test_tile_promotion_is_cutiles_table():
    rows = [line.split() for line in _CUTILE_PROMOTION.strip().splitlines()]
    assert len(rows) == len(_ORDER) and all(len(r) == len(_ORDER) for r in rows)
    for a, row in zip(_ORDER, rows):
        for b, expected in zip(_ORDER, row):
            if expected == "--":
                with pytest.raises(ValueError, match="signed with unsigned"):
                    _core.tile_promote(a, b)
            elif expected == "XX":
                with pytest.raises(ValueError, match="is not supported"):
                    _core.tile_promote(a, b)
            else:
                assert _core.tile_promote(a, b) == expected, (a, b)


def test_tile_promotion_differs_from_numba():
    # numba widens (int64 + float16 -> float64, int32 + uint32 -> int64); cuTile does not.
    assert _core.tile_promote("int64", "float16") == "f16"
    assert _core.binary_result_type("add", "int64", "float16") == "f64"
    with pytest.raises(ValueError, match="int32 and uint32 .*use astype"):
        _core.tile_promote("int32", "uint32")
    with pytest.raises(ValueError, match="complex64 is not a tile dtype"):
        _core.tile_promote("complex64", "float32")


# ---- tile layouts (compiler/types/tile_layout.cpp) ------------------------------------------

def test_blocked_layout_text_and_rules():
    assert _core.tile_layout([1, 4], [8, 4], [4, 1], [1, 0]) == "blocked<1x4, 8x4, 4x1, 1x0>"
    assert _core.tile_layout([4], [32], [1], [0]) == "blocked<4, 32, 1, 0>"
    bad = [
        (([1, 4], [8, 8], [4, 1], [1, 0]), "multiply to 64, not 32"),
        (([1, 3], [8, 4], [4, 1], [1, 0]), "power of two, not 3"),
        (([1, 4], [8, 4], [4, 1], [1, 1]), "not a permutation"),
        (([1, 4], [8, 4], [4], [1, 0]), "one entry per dimension"),
        (([1], [32], [64], [0]), "multiply to 64 \\(at most 32\\)"),
        (([], [], [], []), "1 to 8 dimensions"),
    ]
    for args, why in bad:
        with pytest.raises(ValueError, match=why):
            _core.tile_layout(*args)


@pytest.mark.parametrize("shape, element_bytes, warps, expected", [
    ((1, 1024), 4, 4, "blocked<1x4, 1x32, 1x4, 1x0>"),      # docs/tiles.md's example
    ((64, 64), 2, 8, "blocked<1x8, 4x8, 8x1, 1x0>"),
    ((128, 64), 4, 4, "blocked<1x4, 2x16, 4x1, 1x0>"),
    ((16,), 4, 4, "blocked<4, 32, 4, 0>"),                   # smaller than a warp: replicated
    ((8, 2, 32), 8, 2, "blocked<1x1x2, 1x2x16, 2x1x1, 2x1x0>"),
])
def test_default_layout(shape, element_bytes, warps, expected):
    assert _core.default_tile_layout(shape, element_bytes, warps) == expected


def test_default_layout_refusals():
    assert _core.default_tile_layout((), 4, 4) is None          # a 0-d tile is a scalar
    assert _core.default_tile_layout((16,), 4, 3) is None
    assert _core.default_tile_layout((16,), 4, 64) is None
    assert _core.default_tile_layout((12,), 4, 4) is None


def test_default_num_warps():
    # 8 elements a thread up to 2048, then 16 (a 4096 row: 8 warps, as Triton)
    assert [_core.default_num_warps(n) for n in (0, 1, 511, 512, 600, 1024, 2048, 4096, 8192, 2**20)] == \
        [1, 1, 1, 2, 2, 4, 8, 8, 16, 16]


LAYOUT_CASES = [
    ("blocked<1x4, 1x32, 1x4, 1x0>", (1, 1024)),
    ("blocked<1x4, 1x32, 1x4, 1x0>", (4, 64)),        # tile narrower than the coverage
    ("blocked<1x8, 4x8, 8x1, 1x0>", (64, 64)),
    ("blocked<2x2, 4x8, 2x2, 0x1>", (16, 32)),        # column-major order
    ("blocked<4, 32, 4, 0>", (16,)),
    ("blocked<1x1x2, 1x2x16, 2x1x1, 2x1x0>", (8, 2, 32)),
    ("blocked<2x1, 16x2, 1x2, 1x0>", (2, 8)),         # replicated along both dimensions
]


@pytest.mark.parametrize("layout, shape", LAYOUT_CASES)
def test_layout_covers_every_element_and_owner_inverts(layout, shape):
    held = _core.tile_layout_map(layout, shape)
    holders = {}
    for w, lanes in enumerate(held):
        assert len(lanes) == 32
        for lane, regs in enumerate(lanes):
            for r, element in enumerate(regs):
                holders.setdefault(element, []).append((w, lane, r))
    elements = set(np.ndindex(*shape))
    assert set(holders) == elements
    copies = {len(h) for h in holders.values()}
    assert len(copies) == 1                              # every element replicated alike
    regs = len(held[0][0])
    assert copies.pop() * len(elements) == len(held) * 32 * regs
    owners = {element: _core.tile_layout_owner(layout, shape, element) for element in elements}
    for element, owner in owners.items():
        assert owner in holders[element]
    assert len(set(owners.values())) == len(elements)     # one writer per element (stores)


def test_default_layout_coalesces():
    # f32 (1, 1024), 4 warps: lane l's registers 0..3 are elements 4l..4l+3 (one 16-byte
    # vector; a warp covers 512 contiguous bytes), and registers 4..7 repeat 512 further on.
    held = _core.tile_layout_map("blocked<1x4, 1x32, 1x4, 1x0>", (1, 1024))
    for w in range(4):
        for lane in range(32):
            base = w * 128 + lane * 4
            assert held[w][lane] == [(0, base + r) for r in range(4)] + \
                [(0, 512 + base + r) for r in range(4)]


def test_tile_type_with_layout():
    layout = "blocked<1x4, 8x4, 4x1, 1x0>"
    text = _core.tile_type("float32", (16, 64), layout)
    assert text == f"tile(f32, 16x64, {layout})"
    assert _core.type_text(text) == text
    assert _core.type_text("tile(f32,16x64,blocked<1x4,8x4,4x1,1x0>)") == text
    assert _core.type_identity(text) != _core.type_identity("tile(f32, 16x64)")
    assert _core.type_identity(text) == _core.type_identity(_core.type_text(text))
    assert _core.type_numba_string(text) == "Tile[float32,(16,64)]"
    assert _core.type_text(f"tuple({text}, i64)") == f"tuple({text}, i64)"
    with pytest.raises(ValueError, match="has 1 dimension\\(s\\), the tile \\(16, 64\\) 2"):
        _core.tile_type("float32", (16, 64), "blocked<4, 32, 4, 0>")
    with pytest.raises(ValueError, match="has 1 dimension\\(s\\)"):
        _core.parse_tile_type("tile(f32, 16x64, blocked<4, 32, 4, 0>)")
    with pytest.raises(ValueError, match="multiply to 16, not 32"):
        _core.parse_tile_type("tile(f32, 16x64, blocked<1x4, 4x4, 4x1, 1x0>)")
    with pytest.raises(ValueError, match="expected a layout"):
        _core.parse_tile_type("tile(f32, 16x64, blocked)")
    with pytest.raises(ValueError, match="expected the shape"):
        _core.parse_tile_type("tile(f32, blocked<4, 32, 4, 0>)")    # a 0-d tile has no layout


# ---- the tile shape algebra (compiler/types/tile_shapes.cpp), against numpy -------------------

SHAPES = [(), (1,), (8,), (4, 1), (1, 16), (4, 16), (2, 1, 8), (2, 4, 8)]


def _numpy_shape(fn):
    try:
        return tuple(fn())
    except ValueError:   # numpy's AxisError is one too
        return None


@pytest.mark.parametrize("a", SHAPES)
@pytest.mark.parametrize("b", SHAPES)
def test_broadcast_shapes_match_numpy(a, b):
    expected = _numpy_shape(lambda: np.broadcast_shapes(a, b))
    if expected is None:
        with pytest.raises(ValueError, match="do not broadcast"):
            _core.tile_broadcast_shapes(a, b)
    else:
        assert _core.tile_broadcast_shapes(a, b) == expected
        assert _core.tile_broadcast_to(a, expected) == expected
    if expected != b:
        with pytest.raises(ValueError, match="cannot broadcast"):
            _core.tile_broadcast_to(a, b)


def test_broadcast_message_and_size_limit():
    with pytest.raises(ValueError, match=r"shapes \(16, 64\) and \(32,\) do not broadcast: 64 against 32"):
        _core.tile_broadcast_shapes((16, 64), (32,))
    with pytest.raises(ValueError, match="more than 16777216 elements"):
        _core.tile_broadcast_shapes((4096, 1), (1, 8192))


@pytest.mark.parametrize("shape", [s for s in SHAPES if s])
def test_reduce_shape_matches_numpy(shape):
    rank = len(shape)
    choices = [None] + [(a,) for a in range(-rank, rank)] + [(0, rank - 1)] if rank > 1 else \
        [None, (0,), (-1,)]
    for axes in choices:
        for keepdims in (False, True):
            expected = np.zeros(shape).sum(axis=axes, keepdims=keepdims).shape
            got = _core.tile_reduce_shape(shape, None if axes is None else list(axes), keepdims)
            assert got == expected, (shape, axes, keepdims)
    with pytest.raises(ValueError, match=f"axis {rank} is out of range for a {rank}-d tile"):
        _core.tile_reduce_shape(shape, [rank])
    with pytest.raises(ValueError, match="given twice"):
        _core.tile_reduce_shape(shape, [0, -rank])


def test_reshape_matches_numpy():
    cases = [((16, 2), (8, -1)), ((16, 2), (32,)), ((2, 4, 8), (-1,)), ((8,), (2, 2, 2)),
             ((), (1, 1)), ((4, 16), (1, -1, 4)), ((1,), ())]
    for shape, target in cases:
        assert _core.tile_reshape(shape, target) == np.zeros(shape).reshape(target).shape
    for shape, target, why in [((16, 2), (8, 8), r"cannot reshape \(16, 2\) \(32 elements\) into \(8, 8\)"),
                               ((16, 2), (-1, -1), "only one extent may be -1"),
                               ((16, 2), (0, 32), "extents are positive"),
                               ((16, 2), (3, -1), "cannot reshape"),
                               ((16, 4), (2**40, 2**40), "cannot reshape"),
                               ((4, 8), (32, 1, 1, 1, 1, 1, 1, 1, 1), "at most 8 dimensions")]:
        with pytest.raises(ValueError, match=why):
            _core.tile_reshape(shape, target)


def test_permute_transpose_expand_cat_match_numpy():
    z = np.zeros((2, 4, 8))
    for axes in [(0, 1, 2), (2, 0, 1), (1, -1, 0), (-3, -2, -1)]:
        assert _core.tile_permute(z.shape, axes) == np.transpose(z, axes).shape
    for bad in [(0, 1), (0, 0, 1), (0, 1, 3)]:
        with pytest.raises(ValueError):
            _core.tile_permute(z.shape, bad)
    assert _core.tile_transpose((4, 16)) == (16, 4)
    assert _core.tile_transpose(z.shape, 0, 2) == np.swapaxes(z, 0, 2).shape
    assert _core.tile_transpose(z.shape, -1, 1) == np.swapaxes(z, -1, 1).shape
    with pytest.raises(ValueError, match="3-d tile needs axis0 and axis1"):
        _core.tile_transpose(z.shape)
    with pytest.raises(ValueError, match="both axis0 and axis1, or neither"):
        _core.tile_transpose(z.shape, 0)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        _core.tile_transpose((8,))
    for axis in range(-4, 4):
        assert _core.tile_expand_dims(z.shape, axis) == np.expand_dims(z, axis).shape
    with pytest.raises(ValueError, match="out of range"):
        _core.tile_expand_dims(z.shape, 4)
    assert _core.tile_expand_dims((), 0) == (1,)
    for axis in range(-3, 3):
        assert _core.tile_cat(z.shape, z.shape, axis) == np.concatenate([z, z], axis).shape
    with pytest.raises(ValueError, match=r"same shape .* got \(2, 4\) and \(2, 8\)"):
        _core.tile_cat((2, 4), (2, 8), 1)


MATMUL_SHAPES = [(4,), (8,), (2, 4), (4, 8), (8, 4), (2, 2, 4), (2, 4, 8), (1, 4, 8), (2, 8, 4),
                 (4, 4, 8)]


@pytest.mark.parametrize("x", MATMUL_SHAPES)
@pytest.mark.parametrize("y", MATMUL_SHAPES)
def test_matmul_shape_matches_numpy(x, y):
    expected = _numpy_shape(lambda: np.matmul(np.zeros(x), np.zeros(y)).shape)
    if expected is None:
        with pytest.raises(ValueError):
            _core.tile_matmul_shape(x, y)
    else:
        assert _core.tile_matmul_shape(x, y) == expected


def test_matmul_shape_messages():
    with pytest.raises(ValueError, match=r"matmul of \(64, 32\) and \(16, 64\): the inner extents 32 and 16"):
        _core.tile_matmul_shape((64, 32), (16, 64))
    with pytest.raises(ValueError, match="1-d to 3-d"):
        _core.tile_matmul_shape((2, 2, 4, 8), (8, 4))
    with pytest.raises(ValueError, match="1-d to 3-d"):
        _core.tile_matmul_shape((), (8, 4))


def test_shape_algebra_rejects_non_tile_inputs():
    with pytest.raises(ValueError, match="not a power of two"):
        _core.tile_broadcast_shapes((12,), (1,))


# ---- mma layouts: the tensor cores' accumulator fragments ------------------------------------



@pytest.mark.parametrize("layout, shape", [
    ("mma<v2, 1x1, n8>", (16, 8)),          # one mma.sync: c0 c1 (row g), c2 c3 (row g + 8)
    ("mma<v2, 2x2, n16>", (64, 64)),        # repeated over the tile
    ("mma<v3, 4x1, n64>", (64, 64)),        # one wgmma m64n64: a warpgroup's accumulator
    ("mma<v3, 4x2, n128>", (128, 256)),     # two warpgroups side by side, two m64 rows
    ("mma<v3, 8x1, n256>", (128, 256)),     # two warpgroups along M, each m64n256
    ("mma<v3, 8x2, n64>", (256, 128)),      # two warpgroups along M, two along N
])
def test_mma_layout_is_the_fragment_layout(layout, shape):
    wm, wn = [int(v) for v in layout.split(", ")[1].split("x")]
    n = int(layout.split(", n")[1][:-1])
    rows, cols = shape
    m = _core.tile_layout_map(layout, list(shape))
    reps_m, ntiles = rows // (16 * wm), (n // 8) * (cols // (n * wn))
    seen = set()
    for warp in range(wm * wn):
        for lane in range(32):
            held = m[warp][lane]
            assert len(held) == reps_m * ntiles * 4
            for im in range(reps_m):
                for jn in range(ntiles):
                    for i in range(2):
                        for b in range(2):
                            r = (2 * jn + b) + 2 * ntiles * (2 * im + i)
                            row = 16 * (warp % wm) + 16 * wm * im + lane // 4 + 8 * i
                            col = (n * (warp // wm) + 8 * (jn % (n // 8)) + (jn // (n // 8)) * n * wn
                                   + 2 * (lane % 4) + b)
                            assert held[r] == (row, col), (warp, lane, im, jn, i, b)
                            assert _core.tile_layout_owner(layout, list(shape), [row, col]) == (warp, lane, r)
                            seen.add((row, col))
    assert len(seen) == rows * cols   # every element once: no replicas


def test_mma_layout_text_and_rules():
    text = "tile(f32, 128x128, mma<v3, 4x1, n128>)"
    assert _core.tile_type("float32", (128, 128), "mma<v3,4x1,n128>") == text
    assert _core.type_text(text) == text
    for text, why in [("tile(f32, 32x64, mma<v3, 4x1, n64>)", "covers at least 64x64"),
                      ("tile(f32, 64x64, mma<v3, 2x2, n32>)", "whole warpgroups \\(4 warps each\\) along M"),
                      ("tile(f32, 64x64, mma<v2, 2x2, n4>)", "mma_n is a power of two from 8"),
                      ("tile(f32, 64x64, mma<v5, 2x2, n8>)", "version 2 \\(mma.sync\\) or 3")]:
        with pytest.raises(ValueError, match=why):
            _core.parse_tile_type(text)


def test_by_target_options_resolve_per_architecture():
    @ct.kernel(num_ctas=ct.ByTarget(sm_100=2), occupancy=ct.ByTarget(sm_90=2, default=1))
    def k(x, T: ct.Constant[int]):
        ct.store(x, index=(0,), tile=ct.full((T,), 1.0, dtype=ct.float32))
    sig = ["float32[::1]", "int64"]
    assert ".minnctapersm 2" in cudajit.compile_ptx(k, sig, constants={"T": 64}, arch="sm_90")[0]
    assert ".minnctapersm 1" in cudajit.compile_ptx(k, sig, constants={"T": 64}, arch="sm_80")[0]
    assert repr(ct.ByTarget(sm_90=2, default=1)) == "ByTarget(sm_90=2, default=1)"
    assert ct.ByTarget(sm_90=2) == ct.ByTarget(sm_90=2) != ct.ByTarget(sm_90=3)
    with pytest.raises(ValueError, match="not an architecture name"):
        ct.ByTarget(hopper=2)
    with pytest.raises(ValueError, match="occupancy must be an int from 1 to 32, got 99"):
        ct.kernel(occupancy=ct.ByTarget(sm_90=99))(lambda x: None)


def test_torch_dtypes_in_kernels():
    # cuTile kernels write dtype=torch.int32: torch's dtypes stand for their
    # scalar types (a stand-in module here: the CPU test machine has no torch).
    import types as pytypes
    fake = pytypes.ModuleType("torch")

    class dtype:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return "torch." + self.name
    dtype.__module__ = "torch"
    fake.int32, fake.float16, fake.float8_e4m3fn = dtype("int32"), dtype("float16"), dtype("float8_e4m3fn")

    def body(a, c, TILE: ct.Constant[int]):
        i = ct.bid(0) * TILE + ct.arange(TILE, dtype=torch.int32)  # noqa: F821
        ct.scatter(c, i, ct.gather(a, i).astype(torch.float16))  # noqa: F821
    fn = pytypes.FunctionType(body.__code__, {"ct": ct, "torch": fake}, "k")
    fn.__annotations__ = body.__annotations__
    k = ct.kernel(fn)
    ptx = cudajit.compile_ptx(k, ["float32[::1]", "float16[::1]", "int64"], constants={"TILE": 64})[0]
    assert "cvt.rn.f16.f32" in ptx

    def bad(a):
        ct.arange(4, dtype=torch.float8_e4m3fn)  # noqa: F821
    kb = ct.kernel(pytypes.FunctionType(bad.__code__, {"ct": ct, "torch": fake}, "bad"))
    with pytest.raises(CompileError, match="PyTorch dtype 'torch.float8_e4m3fn'"):
        cudajit.compile_ptx(kb, ["float32[::1]"])


def test_constant_specialisations_are_bounded():
    import cudajit.cache
    # One dispatcher per set of Constant values, the most recently used kept
    # (cudajit.cache.set_memory_cache_limit); no GPU needed to make them.
    @ct.kernel
    def k(x, T: ct.Constant[int]):
        ct.store(x, index=(0,), tile=ct.full((T,), 1.0, dtype=ct.float32))
    before = cudajit.cache.memory_cache_limit()
    try:
        cudajit.cache.set_memory_cache_limit(3)
        x = np.zeros(8, np.float32)
        made = [k.dispatcher((x, 2 ** n)) for n in range(5)]
        assert len(k._dispatchers) == 3
        assert k.dispatcher((x, 16)) is made[4]            # kept
        assert k.dispatcher((x, 1)) is not made[0]         # dropped, made again
        cudajit.cache.set_memory_cache_limit(0)            # no bound
        for n in range(6):
            k.dispatcher((x, 2 ** (n + 5)))
        assert len(k._dispatchers) == 9
    finally:
        cudajit.cache.set_memory_cache_limit(before)


def test_cutile_exception_names():
    # cuTile's classes, so that ported except clauses work: every problem of a
    # kernel's source is one CompileError, the toolchain's a ToolchainError.
    for name in ("TileSyntaxError", "TileTypeError", "TileValueError", "TileUnsupportedFeatureError",
                 "TileStaticAssertionError"):
        assert getattr(ct, name) is CompileError and name in ct.__all__
    assert ct.TileCompilerExecutionError is cudajit.ToolchainError
    assert issubclass(ct.TileCompilerTimeoutError, cudajit.ToolchainError)

    @ct.kernel
    def k(x, T: ct.Constant[int]):
        ct.static_assert(T > 100, "T is too small")
        ct.store(x, index=(0,), tile=ct.full((T,), 1.0, ct.float32))

    with pytest.raises(ct.TileStaticAssertionError, match="Static assertion failed: T is too small"):
        cudajit.compile_ptx(k, ["float32[::1]", "int64"], constants={"T": 4})
