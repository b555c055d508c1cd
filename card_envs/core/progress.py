"""What long runs show while they work: the progress-bar class for arena runs and training, and
:func:`compile_notice`, the line that says numba is compiling (a cache miss) and for how long.

Nothing here prints on import; the arena, the CLI, the examples and the benchmarks call these
when asked to show progress.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from numba.core import event


def tqdm_class() -> Any:
    """``tqdm.auto.tqdm`` (a widget in Jupyter) when ipywidgets is installed, else the text
    bar ``tqdm.std.tqdm``: ``tqdm.auto`` without ipywidgets warns "IProgress not found" in
    every notebook."""
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        from tqdm.std import tqdm
    else:
        from tqdm.auto import tqdm
    return tqdm


class CompileWatch(event.Listener):
    """Counts the numba compilations (cache misses: a kernel loaded from the on-disk cache is
    not one) that start while it is installed, and prints the opening of the notice at the
    first one."""

    def __init__(self, what: str, note: str, stream: TextIO | None) -> None:
        self.what, self.note, self.stream = what, note, stream
        self.compiles = 0  # kernels compiled (nested callees included)
        self._lock = threading.Lock()

    def on_start(self, ev: event.Event) -> None:
        with self._lock:
            self.compiles += 1
            if self.compiles == 1 and self.stream is not None:
                print(f"compiling {self.what} ({self.note}) ...", end="", file=self.stream,
                      flush=True)

    def on_end(self, ev: event.Event) -> None:
        pass


@contextmanager
def compile_notice(what: str, enabled: bool = True, note: str = "first run only",
                   stream: TextIO | None = None) -> Iterator[CompileWatch]:
    """Show that numba compiles inside the block: at the first compilation (a kernel missing
    from the cache) ``compiling <what> (<note>) ...`` goes to ``stream`` (stderr), and at the
    end of the block the seconds the block took (``... 41 s``). Nothing is printed when every
    kernel comes from the cache, or when ``enabled`` is false (the count is kept either way:
    ``watch.compiles``). Compilations in other threads during the block count too."""
    out = (stream or sys.stderr) if enabled else None
    watch = CompileWatch(what, note, out)
    t0 = time.perf_counter()
    try:
        with event.install_listener("numba:compile", watch):
            yield watch
    finally:
        if watch.compiles and out is not None:
            print(f" {time.perf_counter() - t0:.0f} s", file=out, flush=True)
