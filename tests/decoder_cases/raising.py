# Kernels with `assert`: kept out of test modules, whose asserts pytest rewrites.


def checked(x):
    assert x > 0, "x must be positive"  # L:assert
    if x > 10:
        raise ValueError("too big")  # L:value
    if x > 5:
        raise IndexError
    return x


def bare_assert(x):
    assert x
    return x
