"""The progress-bar class for arena runs and training."""

from __future__ import annotations

from typing import Any


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
