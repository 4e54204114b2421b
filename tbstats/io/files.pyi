"""Types of the compiled bulk reader of regular files (tbstats/io/files.pyx)."""

STEPS: dict[int, str]

def read_files(paths: list[bytes], one_read: int = ...) -> list[bytes | tuple[str, int]]: ...
