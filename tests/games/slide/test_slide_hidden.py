"""Slide (``slide_v0``) hidden information: face-down values and other seats' pending reveals
never reach an observation or an observer's state dict; determinization (``resample``) keeps
what the observer knows (rules: ``docs/rules/slide.md``, "Information").

The checks do not trust the engine: the rules are re-implemented in plain Python
(``ref_*`` / ``RefSlide`` in ``tests/games/slide/slide_ref.py``) and compared with the engine.
"""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from card_envs import Engine
from card_envs.core import kernels as K
from card_envs.slide import layout as L
from card_envs.slide.layout import (
    FACE_DOWN_CODE,
    NUM_VALUES,
    OBS_CUR,
    OBS_OWN_REVEAL,
    OBS_UNSEEN,
    obs_tail,
)
from slide_ref import (
    ENV_ID,
    full_counts,
    hyp,
    make,
    random_action,
)


# =============================================================================================
# 7. Hidden information
# =============================================================================================
def _scramble_hidden(state: np.ndarray, n: int, observer: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Change every face-down value arbitrarily and every other seat's unresolved reveal."""
    out = state.copy()
    for i in range(16 * n):
        if out[L.GRID + i] > 0 and out[L.FACE + i] == 0:
            out[L.GRID + i] = rng.integers(1, 11)
    if out[K.PHASE] == L.P_REVEAL:
        for q in range(n):
            if q != observer and out[L.REVEAL + q] >= 0:
                down = [s for s in range(16) if out[L.FACE + L.SLOTS * q + s] == 0]
                out[L.REVEAL + q] = rng.choice(down)
    return out


def _play(env, k: int, rng: np.random.Generator) -> None:
    for _ in range(k):
        if all(env.terminations.values()):
            return
        env.step(random_action(env, rng))


@hyp(30)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 6), frac=st.floats(0, 1))
def test_observation_and_observer_dict_ignore_hidden_information(seed, n, frac):
    env = make(n)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    _play(env, int(frac * 32 * n), rng)
    full = env.state_dict()
    eng = Engine(ENV_ID, num_players=n)
    for s in range(n):
        agent = f"player_{s}"
        obs = env.observe(agent)["observation"]
        osd = env.state_dict(observer=s)
        assert env.state_dict(observer=agent) == osd
        # the observer dict: no face-down value, other seats' pending reveals hidden
        assert "rng" not in osd and osd["observer"] == s
        for q in range(n):
            for r in range(4):
                for c in range(4):
                    v, up = full["grids"][q][r][c], full["face_up"][q][r][c]
                    assert osd["grids"][q][r][c] == (v if (up or v == 0) else None)
            if full["phase"] == "reveal" and q != s:
                assert osd["reveals"][q] is None
            else:
                assert osd["reveals"][q] == full["reveals"][q]
        for key in ("face_up", "middle", "round", "first_player", "phase", "current_player",
                    "steps"):
            assert osd[key] == full[key]
        # arbitrary changes of hidden information do not change what the seat sees
        for _t in range(3):
            other = _scramble_hidden(env.state_array, n, s, rng)
            assert eng.observe(other, s).tolist() == obs.tolist()
            assert env.game.state_dict(other, s) == osd
            assert env.game.render(other, s) == env.game.render(env.state_array, s)
            e2 = env.clone()
            e2.state_array[:] = other
            assert e2.observe(agent)["observation"].tolist() == obs.tolist()
            assert e2.state_dict(observer=s) == osd
        # determinization keeps the observer's view and the card counts
        for _t in range(2):
            rs = env.resample(s, np.random.default_rng(rng.integers(2**32)))
            assert rs.observe(agent)["observation"].tolist() == obs.tolist()
            assert (rs.observe(agent)["action_mask"] == env.observe(agent)["action_mask"]).all()
            assert rs.state_dict(observer=s) == osd
            rsd = rs.state_dict()
            assert all(c <= 10 for c in full_counts(rsd).values())
            assert sum(full_counts(rsd).values()) == 16 * n
            env.game.check_state(rs.state_array)
            assert rsd["face_up"] == full["face_up"]
            assert rsd["reveals"][s] == full["reveals"][s]
            assert env.state_dict() == full  # the original is untouched
    # the resampled game is playable to the end
    rs = env.resample(0, 123)
    _play(rs, 10**6, rng)
    assert all(rs.terminations.values())


def test_face_down_cards_unknown_to_their_owner():
    env = make(3)
    env.reset(seed=5)
    t = obs_tail(3)  # the 3 grids come first
    assert t == 48
    for s in range(3):
        obs = env.observe(f"player_{s}")["observation"]
        assert obs[:t].tolist() == [FACE_DOWN_CODE] * t
        unseen = obs[t + OBS_UNSEEN:t + OBS_UNSEEN + NUM_VALUES]
        assert unseen.tolist() == [10] * 10  # nothing seen yet
        assert all(v is None for g in env.state_dict(observer=s)["grids"]
                   for row in g for v in row)


def test_pending_reveal_hidden_until_resolved():
    n = 3
    env = make(n)
    env.reset(seed=11)
    obs0 = {a: env.observe(a)["observation"].copy() for a in env.possible_agents}
    env.step(5)  # seat 0 chooses r1c1
    o = {a: env.observe(a)["observation"] for a in env.possible_agents}
    own, cur = obs_tail(n) + OBS_OWN_REVEAL, obs_tail(n) + OBS_CUR
    assert o["player_0"][own] == 5  # own choice visible
    assert o["player_1"][own] == -1 and o["player_2"][own] == -1
    for a in ("player_1", "player_2"):  # only the seat to act changed
        diff = np.flatnonzero(o[a] != obs0[a]).tolist()
        assert diff == [cur]
    assert env.state_dict(observer=1)["reveals"] == [None, None, None]
    assert env.state_dict(observer=0)["reveals"] == [5, None, None]
    env.step(0)
    # other choice of seat 0 -> identical observation for seats 1, 2
    alt = make(n)
    alt.reset(seed=11)
    alt.step(9)
    alt.step(0)
    for a in ("player_1", "player_2"):
        assert (alt.observe(a)["observation"] == env.observe(a)["observation"]).all()
    # resampling for seat 2 redraws seat 0's and 1's pending choices among face-down slots
    seen = {tuple(env.resample(2, r).state_dict()["reveals"][:2]) for r in range(40)}
    assert len(seen) > 1
    assert all(env.resample(0, r).state_dict()["reveals"][0] == 5 for r in range(10))
    env.step(15)  # resolution: everyone sees everything that was chosen
    sd = env.state_dict(observer=1)
    assert sd["phase"] == "pick" and sd["reveals"] == [5, 0, 15]
    assert sorted(sd["middle"]) == sd["middle"] and len(sd["middle"]) == 3


def test_resample_redraws_face_down_values():
    env = make(2)
    env.reset(seed=3)
    grids = {json.dumps(env.resample(0, r).state_dict()["grids"]) for r in range(5)}
    assert len(grids) == 5
