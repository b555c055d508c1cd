"""The command line's agent-list syntax, shared by ``card-envs arena`` / ``play`` / ``record``
and the play server's ``vs`` field (the ui layer sits below the CLI, so it lives here)."""

from __future__ import annotations

import re

__all__ = ["split_agents"]

_PARAM = re.compile(r"\s*[A-Za-z_]\w*\s*=")
_PARAM_SEP = re.compile(r"\s*[;+]\s*(?=[A-Za-z_]\w*\s*=)")


def split_agents(text: str) -> list[str]:
    """``"random,heuristic,mcts:ms=50+c=0.7"`` -> ``["random", "heuristic",
    "mcts:ms=50,c=0.7"]``: commas separate agents; ``+`` or ``;`` before ``key=`` separate a
    spec's parameters, and so does a comma when the previous spec already has parameters."""
    specs: list[str] = []
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        if specs and ":" in specs[-1] and _PARAM.match(item) and \
                ":" not in item.partition("=")[0]:
            specs[-1] += f",{item}"
        else:
            specs.append(item)
    out = []
    for s in specs:
        name, colon, rest = s.partition(":")
        out.append(name + colon + _PARAM_SEP.sub(",", rest))
    return out
