"""If It Fits kernels against plain references: the observation (its packed planes, the card
rows precomputed in the config, the relative seats) rebuilt in numpy from the state, the
sleeping-cat queries against their per-direction form, and the batched engine's kernels free
of memory leaks (they work on aliases without reference counting)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import card_envs
from card_envs.core import kernels as K
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.parts.arrays import card_rows
from card_envs.if_it_fits.parts.deck import card_table
from card_envs.if_it_fits.queries import (
    cat_allowed,
    find,
    neighbour,
    sleep_cell_ok,
    sleep_dir_ok,
    sleep_joins,
)
from if_it_fits_ref import DECK, ENV, PROPS, make


def reference_observation(g: Any, state: np.ndarray, seat: int) -> np.ndarray:
    """``seat``'s observation built in numpy from the state (the layout in env.py)."""
    n, T, S, C = g.num_players, g.T, g.S, g.cols
    X = L.obs_public(g.rows, g.cols, g.nt)
    obs = np.zeros(g.obs_size, np.int64)
    obs[:X] = L.unpack_public(state[g.lay["obsc"]:g.lay["disc"]], g.rows, g.cols, g.nt)
    for q in range(n):
        for k in range(L.CATS_EACH):
            loc = int(state[L.S_CATLOC + q * L.CATS_EACH + k])
            if loc >= 0:
                at = L.NPLANES * T + loc if loc < S else L.PK_OWNER * T + loc - S
                obs[at] = (q - seat) % n + 1
    table = card_table(g.deck).reshape(-1, L.FIELDS)

    def row(x: int, kind: int, cid: int | None) -> None:
        obs[x + L.CR_KIND] = kind
        if cid is not None:
            for d in range(4):
                obs[x + L.CR_SIDES + d] = table[cid, L.F_OPEN] >> d & 1
            obs[x + L.CR_TOYS:x + L.CR_TOYS + 3] = table[cid, L.F_BALL:L.F_BALL + 3]
            obs[x + L.CR_SPRAY] = table[cid, L.F_SPRAY]

    for h, cid in enumerate(g.hand(state, seat)):
        x = X + L.O_HAND + h * L.CARD_REC
        if cid == g.nc:
            row(x, L.HK_PRINCESS, None)
        else:
            row(x, L.HK_BOX, cid)
    over = state[L.S_STARTN] >= n
    for k in range(L.NUM_START):
        used = over or state[L.S_STARTUSED] >> k & 1
        row(X + L.O_STARTS + k * L.CARD_REC, 0 if used else 1, g.nb + k)
    toy = int(state[L.S_TOY])
    if toy >= 0:
        obs[X + L.O_TOY:X + L.O_TOY + 3] = table[toy, L.F_BALL:L.F_BALL + 3]
    x = X + L.O_SEATS
    for r in range(n):
        obs[x + r] = state[L.S_SUPPLY + (seat + r) % n]
        obs[x + n + r] = state[L.S_HANDN + (seat + r) % n]
    y = x + 2 * n
    ph, cur = int(state[K.PHASE]), int(state[K.CUR])
    obs[y + L.Y_PILE] = state[L.S_PN]
    obs[y + L.Y_PHASE] = ph
    obs[y + L.Y_CUR] = -1 if cur < 0 else (cur - seat) % n
    obs[y + L.Y_ENDTRIG] = state[L.S_ENDTRIG]
    obs[y + L.Y_SEL] = state[L.S_SEL] if ph in (L.P_CELL, L.P_ROT, L.P_PRINCESS) else -1
    obs[y + L.Y_SELSTART] = state[L.S_SELSTART]
    for field, at in ((L.S_SELCELL, L.Y_SELCELL), (L.S_PLAYED, L.Y_PLAYED)):
        i = int(state[field])
        obs[y + at:y + at + 2] = (i // C, i % C) if i >= 0 else (-1, -1)
    obs[y + L.Y_RELAX] = state[L.S_RELAX]
    obs[y + L.Y_FIRST] = (state[L.S_FIRST] - seat) % n
    return obs


def sleeping_cells(g: Any, state: np.ndarray, p: int) -> list[bool]:
    """Per cell: seat ``p`` may lay a sleeping cat there, from the per-direction query (the
    neighbour found with its edge tests)."""
    out = []
    for i in range(g.T):
        empty = state[g.lay["cell"] + i] == 0
        out.append(bool(empty and any(sleep_dir_ok(state, g.cfg, p, i, d) for d in range(4))))
    return out


@PROPS
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 5), adv=st.booleans(),
       small=st.booleans())
def test_observation_matches_the_numpy_reference(seed: int, n: int, adv: bool,
                                                small: bool) -> None:
    opts: dict[str, Any] = {"num_players": n, "advanced": adv}
    if small:
        opts["table"] = (5, 7)
    env = make(**opts)
    env.reset(seed=seed)
    rnd = random.Random(seed)
    g = env.game
    while True:
        s = env.state_array
        for seat in range(n):
            got = env.observe(f"player_{seat}")["observation"]
            assert np.array_equal(got, reference_observation(g, s, seat)), \
                (g.phase_name(s), seat)
        if s[K.DONE]:
            break
        env.step(rnd.choice(env.legal_actions()))


@PROPS
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 5), small=st.booleans())
def test_sleeping_cat_queries_agree(seed: int, n: int, small: bool) -> None:
    """``sleep_cell_ok`` and ``sleep_joins`` (directions from the open-neighbour bits, no edge
    tests) give the cells the per-direction query gives, and ``sleep_dir_ok`` is the cat rule
    on the box of the card found with the edge-tested neighbour."""
    env = make(num_players=n, **({"table": (5, 7)} if small else {}))
    env.reset(seed=seed)
    rnd = random.Random(seed)
    g = env.game
    steps = 0
    while not env.state_array[K.DONE]:
        steps += 1
        if steps % 4:
            env.step(rnd.choice(env.legal_actions()))
            continue
        s = env.state_array.copy()
        for p in range(n):
            want = sleeping_cells(g, s, p)
            assert [bool(sleep_cell_ok(s, g.cfg, p, i)) for i in range(g.T)] == want
            on = (s[g.lay["nbr"]:g.lay["nbr"] + g.T] >> L.NBR_OPEN) & L.ALL_OPEN
            joins = [bool(on[i] and s[g.lay["cell"] + i] == 0
                          and sleep_joins(s, g.cfg, p, i, on[i])) for i in range(g.T)]
            assert joins == want
            for i in np.flatnonzero(on).tolist():
                for d in range(4):
                    j = neighbour(g.cfg, i, d)
                    ok = bool(on[i] >> d & 1) and cat_allowed(s, g.cfg, p, find(s, g.cfg, j))
                    assert bool(sleep_dir_ok(s, g.cfg, p, i, d)) == ok
        env.step(rnd.choice(env.legal_actions()))


def test_card_rows_are_the_card_table_as_observed() -> None:
    """The config's precomputed card rows (``CF_O_ROWS``): each card's sides, toys and
    sprayers as an observation card row shows them, for the default deck and a changed one."""
    deck = {**DECK, "box_cards": [dict(c) for c in DECK["box_cards"]]}
    for k, c in enumerate(deck["box_cards"][:6]):
        c["toys"] = {"ball": k % 4, "yarn": 9 - k} if k % 2 else {"mouse": k}
        c["sprayer"] = k % 3
    for d in (DECK, deck):
        table = card_table(d).reshape(-1, L.FIELDS)
        words = card_rows(table.ravel()).reshape(-1, 3)
        rows = words.astype("<i4").view(np.uint8).reshape(len(table), 12)
        assert np.all(rows[:, L.CARD_REC:] == 0) and np.all(rows[:, L.CR_KIND] == 0)
        for d_ in range(4):
            assert np.array_equal(rows[:, L.CR_SIDES + d_], table[:, L.F_OPEN] >> d_ & 1)
        assert np.array_equal(rows[:, L.CR_TOYS:L.CR_TOYS + 3], table[:, L.F_BALL:L.F_BALL + 3])
        assert np.array_equal(rows[:, L.CR_SPRAY], table[:, L.F_SPRAY])
        game = card_envs.make_raw(ENV, deck=d).game
        at = int(game.cfg[L.CF_O_ROWS])
        assert np.array_equal(game.cfg[at:at + words.size], words.ravel())


LEAKS = """
import numpy as np, card_envs.vector as V
from numba.core.runtime import rtsys
for B in (64, 256):  # the serial and the parallel driver
    vec = V.make("if_it_fits_v0", num_envs=B, seed=1)
    vec.step(vec.sample_actions())
    a = rtsys.get_allocation_stats()
    ends = 0
    for _ in range(400):
        ends += int(vec.step(vec.sample_actions())[4].sum())
    b = rtsys.get_allocation_stats()
    assert ends > 0, "no game ended"
    assert b.alloc - a.alloc > 0 and b.alloc - a.alloc == b.free - a.free, (a, b)
    assert b.mi_alloc - a.mi_alloc == b.mi_free - a.mi_free, (a, b)
print("balanced")
"""


def test_batched_kernels_leak_nothing() -> None:
    """Every array the kernels allocate (deals, final scores) is freed again: numba's
    allocation counters balance over 400 batched steps with many finished games."""
    out = subprocess.run([sys.executable, "-c", LEAKS], capture_output=True, text=True,
                         timeout=900, env={**os.environ, "NUMBA_NRT_STATS": "1"})
    assert out.returncode == 0 and "balanced" in out.stdout, out.stdout + out.stderr[-3000:]
