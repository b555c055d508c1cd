"""Helpers of the viewer tests: walk a random game, read an SVG's texts and size."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import card_envs
from card_envs.core import kernels as K

SVG_NS = "{http://www.w3.org/2000/svg}"


def walk(env_id: str, opts: dict, seed: int, max_steps: int = 10**6) -> Iterator[Any]:
    """The env after reset(seed) and after every random legal move (the same env object)."""
    env = card_envs.make_raw(env_id, **opts)
    env.reset(seed=seed)
    rnd = random.Random(seed)
    yield env
    for _ in range(max_steps):
        if env.state_array[K.DONE]:
            return
        env.step(rnd.choice(env.legal_actions()))
        yield env


def texts(svg: str) -> list[str]:
    """Every ``<text>`` element's text."""
    return [e.text or "" for e in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def size_of(svg: str) -> tuple[int, int]:
    """``(height, width)`` of an ``<svg>`` root."""
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG_NS}svg"
    return int(float(root.get("height"))), int(float(root.get("width")))
