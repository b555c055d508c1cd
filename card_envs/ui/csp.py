"""Content-Security-Policy for the pages card-envs serves or writes.

The pages are self-contained: one inline ``<style>`` and one inline ``<script>`` (plus, in a
replay page, a data block of ``type="application/octet-stream"``, which is not executed). The
policy allows exactly that script, by its SHA-256 hash, and nothing else that could run or
load: no other script (an injected ``<script>`` or ``onclick=`` would not run), no external
resource, no ``<base>``, no form posts, no plugins.

``policy(script)`` is the header value (or the ``<meta http-equiv>`` content) for a page whose
only script is ``script``; ``meta_tag(script)`` the ``<meta>`` element for a page opened from a
disk (where there is no header). Styles are allowed inline (``style-src 'unsafe-inline'``):
the SVG pictures set colours in attributes and CSS cannot run code.
"""

from __future__ import annotations

import base64
import hashlib
import html

__all__ = ["SECURITY_HEADERS", "meta_tag", "policy", "script_hash"]

#: headers every response of the play server carries (the page also gets the CSP)
SECURITY_HEADERS: dict[str, str] = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def script_hash(script: str) -> str:
    """The CSP source ``'sha256-...'`` of an inline script's exact text."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def policy(script: str, connect: str = "'self'", frame_ancestors: bool = True) -> str:
    """The CSP of a page whose one inline script is ``script``. ``connect``: where the page
    may ``fetch`` (``'self'`` for the play page's API, ``'none'`` for a replay page);
    ``frame_ancestors``: include ``frame-ancestors 'none'`` (ignored in a ``<meta>`` tag, so
    :func:`meta_tag` leaves it out)."""
    parts = [
        "default-src 'none'",
        f"script-src {script_hash(script)}",
        "style-src 'unsafe-inline'",
        "img-src data:",
        f"connect-src {connect}",
        "base-uri 'none'",
        "form-action 'none'",
        "object-src 'none'",
    ]
    if frame_ancestors:
        parts.append("frame-ancestors 'none'")
    return "; ".join(parts)


def meta_tag(script: str) -> str:
    """``<meta http-equiv="Content-Security-Policy" ...>`` for a page opened from a file: the
    policy of :func:`policy` with no network at all."""
    value = policy(script, connect="'none'", frame_ancestors=False)
    return f'<meta http-equiv="Content-Security-Policy" content="{html.escape(value)}">'
