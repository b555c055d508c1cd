"""Arrays without reference counting for the kernels' entry points.

numba counts the references to an array's memory with atomic operations: every function that
receives an array may add and drop a reference on entry and exit (the compiler removes the
pairs only in simple control flow), about 5 ns each and a cache line shared by every thread
that works on the same batch. The kernels (``step``, ``legal_mask``, ``observe``, ``init``)
call :func:`noref` on their array arguments first: the helpers below them then get aliases
whose reference counting is a no-op. The caller keeps the arrays alive for the whole call, so
nothing is freed early; the aliases must not be stored or returned.
"""

from __future__ import annotations

from typing import Any

from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["noref"]


def _noref_py(arr: Any) -> Any:
    """``arr`` itself (plain Python, ``NUMBA_DISABLE_JIT=1``: no reference counting)."""
    return arr


@intrinsic
def _noref_jit(typingctx: Any, arr: Any) -> Any:
    """``arr`` (an array) as an alias without reference counting (no memory owner, no parent
    object): valid while the original array is."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()

    return arr(arr), codegen


#: ``noref(arr)``: ``arr`` without reference counting (compiled code; itself in plain Python)
noref = _noref_py if config.DISABLE_JIT else _noref_jit
