"""Random and hostile launch arguments (issue 15) on the mock driver: every
one launches or raises a Python exception; the process never dies. Objects
with broken __cuda_array_interface__ dicts (missing keys, negative or huge
shapes, odd strides, unknown typestrs, null pointers), read-only arrays,
wrong Python types, and random mixtures of them."""
import textwrap

CODE = """
import random

class CAI:
    def __init__(self, d):
        self.__cuda_array_interface__ = d

good = {"shape": (4,), "typestr": "<f4", "data": (1 << 20, False), "version": 3, "strides": None}

def variants(rng):
    out = []
    for key in list(good):
        d = dict(good); d.pop(key); out.append(CAI(d))
    for shape in [(-1,), (2**62,), (2**31, 2**31), (), (0,), ("x",), None, (1, 2, 3, 4, 5, 6, 7, 8, 9)]:
        d = dict(good); d["shape"] = shape; out.append(CAI(d))
    for strides in [(-4,), (0,), (2**62,), (4, 4), ("a",), (3,)]:
        d = dict(good); d["strides"] = strides; out.append(CAI(d))
    for typestr in ["<f3", "|V20", ">f4", "", 5, "<c8", "<m8"]:
        d = dict(good); d["typestr"] = typestr; out.append(CAI(d))
    for data in [(0, False), None, (1 << 20,), ("p", False), (-5, True)]:
        d = dict(good); d["data"] = data; out.append(CAI(d))
    ro = np.zeros(4, np.float32); ro.flags.writeable = False
    out += [ro, "text", b"bytes", {}, [1.0, 2.0], object(), 2**80, float("nan"), None,
            np.zeros((2, 2), np.float32), np.zeros(4, np.float64), np.zeros(0, np.float32),
            np.zeros(4, np.float32)[::-1], np.zeros(3, dtype=[("a", "f4")]), CAI("notadict")]
    rng.shuffle(out)
    return out

@cuda.jit
def k(a, b):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = b[i] + 1.0

install(lambda params: None)
rng = random.Random(11)
ok = raised = 0
kinds = set()
vs = variants(rng)
good_arr = cuda.device_array(4, np.float32)
for trial in range(300):
    a = rng.choice(vs + [good_arr])
    b = rng.choice(vs + [good_arr])
    try:
        k[1, 4](a, b)
        ok += 1
    except Exception as e:
        raised += 1
        kinds.add(type(e).__name__)
print(ok, raised, sorted(kinds))
"""


def test_hostile_launch_arguments_raise_and_never_crash(run_python, mock_driver, tmp_path, monkeypatch):
    from test_runtime import MOCK_PRELUDE
    monkeypatch.setenv("CUDAJIT_CACHE_DIR", str(tmp_path))
    out = run_python(MOCK_PRELUDE + textwrap.dedent(CODE), driver=mock_driver).split(maxsplit=2)
    ok, raised, kinds = int(out[0]), int(out[1]), out[2]
    assert ok + raised == 300 and raised > 200 and ok > 0
    assert "SystemError" not in kinds   # an exception a C extension raises when it lost track
