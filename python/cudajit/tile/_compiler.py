"""``compiler_timeout(seconds)``: cuTile's limit on one kernel's compile time,
as a context manager. Accepted and checked for a positive number; it has no
effect: cudajit compiles in this process, in milliseconds to seconds, and
does not stop a compile midway."""


class compiler_timeout:  # noqa: N801  (cuTile's name)
    def __init__(self, seconds):
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds <= 0:
            raise ValueError(f"compiler_timeout: seconds must be a positive number, got {seconds!r}")
        self.seconds = seconds

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
