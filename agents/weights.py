"""Weights files in the ``safetensors`` format, read and written with numpy alone (no pickle,
no code run on load).

The format (https://huggingface.co/docs/safetensors): 8 bytes little-endian ``N``, ``N`` bytes
of JSON ``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str:
str}}``, then the tensors' bytes (little-endian, C order). Files written here are read by the
``safetensors`` library and the other way round (tested). A file is treated as hostile: its
header is bounded, every entry is checked (known dtype, non-negative shape, offsets inside the
data and matching the shape, no overlap), and any defect raises :class:`WeightsError`.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["WeightsError", "read_weights", "write_weights"]

MAX_HEADER = 1 << 20        # bytes of JSON header
MAX_FILE = 64 << 20         # bytes: a policy of this project is well under 2 MB

_DTYPES = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "F64": np.dtype("<f8"),
           "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"),
           "I8": np.dtype("i1"), "U8": np.dtype("u1"), "BOOL": np.dtype("?")}
_NAMES = {v: k for k, v in _DTYPES.items()}


class WeightsError(ValueError):
    """A weights file that is not a valid safetensors file of the expected content."""


def write_weights(path: str | Path, tensors: dict[str, np.ndarray],
                  metadata: dict[str, str] | None = None) -> None:
    """Write ``tensors`` (name -> array) and string ``metadata`` to ``path`` atomically."""
    header: dict[str, Any] = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("metadata must map str to str")
        header["__metadata__"] = dict(metadata)
    blobs = []
    pos = 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        dt = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
        if np.dtype(dt) not in _NAMES:
            raise TypeError(f"tensor {name!r}: dtype {a.dtype} is not supported")
        b = a.astype(dt, copy=False).tobytes()
        header[name] = {"dtype": _NAMES[np.dtype(dt)], "shape": list(a.shape),
                        "data_offsets": [pos, pos + len(b)]}
        blobs.append(b)
        pos += len(b)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # the data starts 8-aligned, as the library writes it
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(len(head).to_bytes(8, "little"))
            f.write(head)
            for b in blobs:
                f.write(b)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_weights(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``(tensors, metadata)`` of a safetensors file; :class:`WeightsError` for anything that
    is not one (module docstring)."""
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_FILE:
        raise WeightsError(f"{p}: {size} bytes, more than a policy file may hold ({MAX_FILE})")
    data = p.read_bytes()
    if len(data) < 8:
        raise WeightsError(f"{p}: not a safetensors file (too short)")
    n = int.from_bytes(data[:8], "little")
    if n > MAX_HEADER or 8 + n > len(data):
        raise WeightsError(f"{p}: not a safetensors file (header length {n})")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise WeightsError(f"{p}: not a safetensors file (header: {e})") from None
    if not isinstance(header, dict):
        raise WeightsError(f"{p}: not a safetensors file (header is not an object)")
    meta = header.pop("__metadata__", {}) or {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                             for k, v in meta.items()):
        raise WeightsError(f"{p}: __metadata__ must map strings to strings")
    body = memoryview(data)[8 + n:]
    spans = []
    out: dict[str, np.ndarray] = {}
    for name, e in header.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise WeightsError(f"{p}: tensor {name!r}: bad entry")
        dt = _DTYPES.get(e["dtype"]) if isinstance(e["dtype"], str) else None
        shape, offs = e["shape"], e["data_offsets"]
        if dt is None:
            raise WeightsError(f"{p}: tensor {name!r}: unsupported dtype {e['dtype']!r}")
        if not isinstance(shape, list) or len(shape) > 8 or not all(
                type(d) is int and 0 <= d < 1 << 31 for d in shape):
            raise WeightsError(f"{p}: tensor {name!r}: bad shape {shape!r}")
        if not isinstance(offs, list) or len(offs) != 2 or not all(
                type(o) is int for o in offs) or not 0 <= offs[0] <= offs[1] <= len(body):
            raise WeightsError(f"{p}: tensor {name!r}: bad data_offsets {offs!r}")
        count = int(np.prod(shape, dtype=np.int64))
        if offs[1] - offs[0] != count * dt.itemsize:
            raise WeightsError(f"{p}: tensor {name!r}: {offs[1] - offs[0]} bytes for shape "
                               f"{shape} of {e['dtype']}")
        spans.append((offs[0], offs[1], name))
        out[name] = np.frombuffer(body[offs[0]:offs[1]], dt).reshape(shape).copy()
    spans.sort()
    for (_, end, a), (begin, _, b) in zip(spans, spans[1:]):
        if begin < end:
            raise WeightsError(f"{p}: tensors {a!r} and {b!r} overlap")
    return out, meta
