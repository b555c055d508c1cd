"""If It Fits' rule queries (``card_envs/if_it_fits/queries.py``) against the engine on random
games of three variants: the scores and boxes are the outcome, the placement queries are the
action mask, a card's predicted box is the box the engine builds, the cat rule on a box record
is the engine's; and the heuristic asks the queries instead of keeping copies of the rules."""

from __future__ import annotations

import inspect
import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

import card_envs
from card_envs.core import kernels as K
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits import queries as Q
from if_it_fits_ref import ENV, Model

CASES = ({}, {"num_players": 3, "advanced": True, "table": (7, 9)},
         {"num_players": 5, "table": (5, 7)})
IDS = ("basic", "advanced3", "small5")


def walk(opts: dict, seed: int, games: int = 2) -> list[Any]:
    """Clones of every position of random games (a turn draws 9 times in 10)."""
    rng = random.Random(seed)
    out = []
    for k in range(games):
        env = card_envs.make_raw(ENV, **opts)
        env.reset(seed=seed * 100 + k)
        draw = env.game.B + L.A_DRAW
        while True:
            out.append(env.clone())
            if env.state_array[K.DONE]:
                break
            legal = env.legal_actions()
            env.step(draw if draw in legal and rng.random() < 0.9 else rng.choice(legal))
    return out


_CACHE: dict[int, list[Any]] = {}


def positions(k: int) -> list[Any]:
    if k not in _CACHE:
        _CACHE[k] = walk(CASES[k], seed=k + 1)
    return _CACHE[k]


def records(state: np.ndarray, cfg: np.ndarray, spare: int = 1) -> np.ndarray:
    """The box records of a state (``spare`` rows more, for a box to come)."""
    T = int(cfg[L.CF_ROWS] * cfg[L.CF_COLS])
    W = np.zeros((T + spare, L.BOX_ROW), np.int32)
    Q.box_counters(state.copy(), cfg, W)
    return W


@pytest.mark.parametrize("k", range(len(CASES)), ids=IDS)
def test_scores_and_boxes_are_the_outcome(k: int) -> None:
    """``score`` and the boxes' points and minus points equal the model's score on every
    position and the engine's ``outcome`` at the end (winners: most points, then fewest
    minus points)."""
    ends = 0
    for env in positions(k):
        g, st = env.game, env.state_array
        pts, minus = np.zeros(g.num_players), np.zeros(g.num_players)
        Q.score(st.copy(), g.cfg, pts, minus)
        bxs = Q.boxes(st, g.cfg)
        assert [sum(b["points"][q] for b in bxs) for q in range(g.num_players)] == pts.tolist()
        assert [sum(b["minus"][q] for b in bxs) for q in range(g.num_players)] == minus.tolist()
        for b in bxs:
            assert b["value"] == (max(b["toys"]) - b["sprayers"]) * (2 if b["closed"] else 1)
        if st[K.STEPS] % 5 == 0:
            assert (pts.tolist(), minus.tolist()) == Model(env.state_dict()).score()
        if st[K.DONE]:
            ends += 1
            out_pts, won = g.outcome(st)
            assert out_pts.tolist() == pts.tolist()
            key = list(zip(pts.tolist(), (-minus).tolist(), strict=True))
            assert won.tolist() == [int(x == max(key)) for x in key]
    assert ends == 2


@pytest.mark.parametrize("k", range(len(CASES)), ids=IDS)
def test_placement_queries_are_the_mask(k: int) -> None:
    """Where a card, a special toy card and a sleeping cat may go, and when the advanced rule
    is lifted, as the action mask and the kernels have it."""
    seen: Counter[str] = Counter()
    for env in positions(k):
        g, st, cfg = env.game, env.state_array.copy(), env.game.cfg
        if st[K.DONE]:
            continue
        ph, p, T, B = g.phase_name(st), int(st[K.CUR]), g.T, g.B
        legal = set(env.legal_actions())
        strict = bool(g.options["advanced"]) and not st[L.S_RELAX]
        free = Q.free_cells(st, cfg).tolist()
        assert free == sorted(i for i in range(T) if Q.card_cell_ok(st, cfg, i, 0, False))
        if ph in ("cell", "rotation"):
            cid = g.hand(st, p)[int(st[L.S_SEL])]
            assert int(st[L.S_RELAX]) == int(g.options["advanced"] and
                                              not Q.any_fit(st, cfg, cid))
            if ph == "cell":
                assert legal == {i for i in free if Q.card_cell_ok(st, cfg, i, cid, strict)}
            else:
                i = int(st[L.S_SELCELL])
                assert legal == {B + L.A_ROT + r for r in range(2) if not strict or
                                 Q.fits(st, cfg, i, Q.card_open(cfg, cid, r))}
        elif ph == "toy_slot":
            assert legal == {T + s for s in range(g.S) if Q.toy_slot_ok(st, cfg, p, s)}
        elif ph == "toy_cell":
            assert legal == set(free)
        elif ph == "sleep_cell":
            assert legal == {i for i in range(T) if Q.sleep_cell_ok(st, cfg, p, i)}
        elif ph == "sleep_dir":
            i = int(st[L.S_SELCELL])
            assert legal == {B + L.A_DIR + d for d in range(4) if Q.sleep_dir_ok(st, cfg, p, i, d)}
        elif ph == "start_end":
            lifted = g.options["advanced"] and not Q.start_fit(st, cfg, int(st[L.S_SELSTART]))
            assert int(st[L.S_RELAX]) == int(lifted)
            assert legal <= {B + L.A_END + e for e in range(2)
                             if Q.start_end_cell(st, cfg, e) >= 0}
        seen[ph] += 1
    assert {"cell", "rotation", "start_end"} <= set(seen)


@pytest.mark.parametrize("k", range(len(CASES)), ids=IDS)
def test_card_box_is_the_box_the_engine_builds(k: int) -> None:
    """For every legal rotation of a card being laid (and every cell of a special toy card):
    ``around`` + ``card_box`` predict the box record of the box the engine then builds, and
    ``slots_opened`` the cat slots it makes; the cat rule on the records is ``cat_allowed``."""
    checked = 0
    for env in positions(k):
        g, st, cfg = env.game, env.state_array, env.game.cfg
        T, B = g.T, g.B
        ph = g.phase_name(st) if not st[K.DONE] else "end"
        W = records(st, cfg)
        for r in range(T):  # the cat rule on the records
            if W[r, L.B_CARDS]:
                for q in range(g.num_players):
                    assert Q.box_allows(W, r, q, g.num_players) == \
                        Q.cat_allowed(st.copy(), cfg, q, r)
        if ph == "rotation":
            cid = g.hand(st, int(st[K.CUR]))[int(st[L.S_SEL])]
            moves = [(int(st[L.S_SELCELL]), Q.card_open(cfg, cid, a - B - L.A_ROT), cid, a)
                     for a in env.legal_actions()]
        elif ph == "toy_cell":
            moves = [(a, L.ALL_OPEN, int(st[L.S_TOY]), a) for a in env.legal_actions()]
        else:
            continue
        for i, o, cid, a in moves:
            tb = L.CF_TABLE + cid * L.FIELDS
            near = np.zeros((T, L.NEAR_ROW), np.int32)
            Q.around(st.copy(), cfg, W, i, near)
            Q.card_box(W, near, i, o, *(int(cfg[tb + L.F_BALL + t]) for t in range(3)),
                       int(cfg[tb + L.F_SPRAY]), T)
            after = env.clone()
            after.step(a)
            st2 = after.state_array.copy()
            assert records(st2, cfg)[Q.find(st2, cfg, i)].tolist() == W[T].tolist()
            opened = sum(int(Q.slot_ok(st2, cfg, s)) - int(Q.slot_ok(st, cfg, s))
                         for s in (i - g.cols, i) if 0 <= s < g.S)
            assert Q.slots_opened(st, cfg, i, o) == opened
            checked += 1
    assert checked > 10


def test_geometry() -> None:
    """``neighbour``, ``rot_open`` and ``card_open`` on a 5 x 7 table."""
    g = card_envs.make_raw(ENV, table=(5, 7)).game
    for i in range(g.T):
        r, c = divmod(i, 7)
        for d, (dr, dc) in enumerate(((-1, 0), (0, 1), (1, 0), (0, -1))):
            want = (r + dr) * 7 + c + dc if 0 <= r + dr < 5 and 0 <= c + dc < 7 else -1
            assert Q.neighbour(g.cfg, i, d) == want
    for bits in range(16):
        assert Q.rot_open(bits, 0) == bits
        assert Q.rot_open(Q.rot_open(bits, 1), 1) == bits
        assert all((Q.rot_open(bits, 1) >> ((d + 2) % 4)) & 1 == (bits >> d) & 1
                   for d in range(4))
    for cid in range(g.nc):
        bits = int(g.cfg[L.CF_TABLE + cid * L.FIELDS + L.F_OPEN])
        assert [Q.card_open(g.cfg, cid, r) for r in range(2)] == \
            [bits, Q.rot_open(bits, 1)]


def test_the_heuristic_asks_the_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The heuristic keeps no copy of a rule (no neighbour, fit, slot or rotation helper of its
    own, no flood fill): its box evaluation is built on the queries and, playing, it asks
    ``fits``, ``slots_opened``, ``free_cells`` and ``rot_open``."""
    from card_envs.agents import if_it_fits as H

    for name in ("around", "box_allows", "box_counters", "box_value", "card_box", "cat_count",
                 "find", "fits", "free_cells", "rot_open", "slots_opened"):
        assert getattr(H, name) is getattr(Q, name)
    assert not {"_nb", "_fits", "_slot_near", "_rot", "_frontier", "_card"} & set(vars(H)) \
        and not {"_nb", "_fits", "_slot_near", "_rot", "_frontier"} & \
        set(vars(H.IfItFitsHeuristicAgent))
    src = inspect.getsource(H.box_eval.py_func)
    assert all(f"{q}(" in src for q in ("around", "card_box", "box_value", "box_allows",
                                        "cat_count", "find"))
    assert "stack" not in inspect.getsource(H)  # no flood fill of its own
    calls: Counter[str] = Counter()

    def counted(name: str) -> Any:
        query = getattr(Q, name)

        def call(*args: Any) -> Any:
            calls[name] += 1
            return query(*args)
        return call

    for name in ("fits", "slots_opened", "free_cells", "rot_open"):
        monkeypatch.setattr(H, name, counted(name))
    opts = {"advanced": True, "table": (7, 9)}
    env = card_envs.make_raw(ENV, **opts)
    env.reset(seed=3)
    agent = H.IfItFitsHeuristicAgent(seed=3, **opts)
    for _ in range(150):
        if env.state_array[K.DONE]:
            break
        obs = env.observe(env.agent_selection)
        env.step(agent.act(obs["observation"], obs["action_mask"]))
    assert all(calls[n] > 0 for n in ("fits", "slots_opened", "free_cells", "rot_open"))
