"""Reading and writing the files card-envs makes (replays, pages): a JSON file read with
bounds, since anything from a file is hostile, and a text file written atomically, so that a
failure never leaves half a file behind."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from card_envs.core.checks import short_repr
from card_envs.core.errors import StateDictError

#: the longest integer a JSON file may hold (a seed below 2**64 has 20 digits)
MAX_INT_DIGITS = 40


class _Refused(Exception):
    """Raised inside the JSON parser's hooks; turned into the caller's error."""


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {len(text.lstrip('-'))} digits (at most "
                       f"{MAX_INT_DIGITS})")
    return int(text)


def _parse_constant(name: str) -> Any:
    raise _Refused(f"{name}, which is not standard JSON")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        keys = [k for k, _ in pairs]
        twice = next(k for i, k in enumerate(keys) if k in keys[:i])
        raise _Refused(f"the key {short_repr(twice)} twice in one object")
    return d


def parse_json(raw: bytes, what: str, error: type[Exception] = StateDictError,
               where: str = "") -> Any:
    """The JSON value of ``raw`` (UTF-8 bytes), parsed with bounds: ``error`` if it is not
    UTF-8, not JSON, nested deeper than the parser can go, or holds an integer of more than
    :data:`MAX_INT_DIGITS` digits, ``NaN`` / ``Infinity`` or a key twice in one object.
    ``what`` names the kind of data (``"replay"``), ``where`` starts the message (a path)."""
    cannot = f"{where}cannot read this {what}:"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{cannot} not UTF-8 text (byte {e.start})") from None
    try:
        return json.loads(text, parse_int=_parse_int, parse_constant=_parse_constant,
                          object_pairs_hook=_pairs)
    except json.JSONDecodeError as e:
        raise error(f"{where}not a JSON {what}: {e}") from None
    except _Refused as e:
        raise error(f"{cannot} it holds {e}") from None
    except RecursionError:
        raise error(f"{cannot} JSON nested too deeply") from None


def read_json(path: str | Path, max_bytes: int, what: str,
              error: type[Exception] = StateDictError) -> Any:
    """The JSON value in the file ``path``, read with bounds: ``error`` naming ``path`` if
    the file is larger than ``max_bytes`` (refused before it is read whole) or is refused by
    :func:`parse_json`. ``what`` names the kind of file (``"replay"``). A missing or
    unreadable file raises ``OSError``. The value is not otherwise checked: bound its nesting
    and size with :func:`card_envs.core.checks.check_nesting`."""
    cannot = f"{path}: cannot read this {what}:"
    with Path(path).open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise error(f"{cannot} {size} bytes, more than the {max_bytes} allowed")
        raw = f.read(max_bytes + 1)  # a pipe or a device reports no size
    if len(raw) > max_bytes:
        raise error(f"{cannot} more than the {max_bytes} bytes allowed")
    return parse_json(raw, what, error, where=f"{path}: ")


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder that
    replaces ``path`` only once it is complete: on any error ``path`` is as before (absent or
    the old file) and the temporary file is removed."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # mode: as the umask says
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
