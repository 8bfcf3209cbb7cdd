"""``ByTarget``: a kernel option whose value depends on the GPU generation
(cuTile's ``ct.ByTarget``): ``@ct.kernel(occupancy=ct.ByTarget(sm_90=2, default=1))``."""

_UNSET = object()


class ByTarget:
    """A value per GPU architecture, ``sm_<major><minor>=value``, and an optional
    ``default`` for the architectures not named."""

    def __init__(self, *, default=_UNSET, **value_by_target):
        for sm in value_by_target:
            if not (sm.startswith("sm_") and sm[3:].isdigit()):
                raise ValueError(f"ByTarget: {sm!r} is not an architecture name (sm_<major><minor>, e.g. sm_90)")
        self.default = default
        self.values = dict(value_by_target)

    def values_given(self):
        """Every value it may resolve to (for checking an option)."""
        return list(self.values.values()) + ([] if self.default is _UNSET else [self.default])

    def resolve(self, arch, fallback=None):
        """The value for compute capability ``arch`` (an int: 90 for sm_90),
        else the default, else ``fallback``."""
        value = self.values.get(f"sm_{int(arch)}", self.default)
        return fallback if value is _UNSET else value

    def __repr__(self):
        items = [f"{sm}={v!r}" for sm, v in self.values.items()]
        if self.default is not _UNSET:
            items.append(f"default={self.default!r}")
        return f"ByTarget({', '.join(items)})"

    def __eq__(self, other):
        return isinstance(other, ByTarget) and (self.default, self.values) == (other.default, other.values)

    def __hash__(self):
        return hash((repr(self),))
