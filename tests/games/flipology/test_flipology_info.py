"""Flipology's hidden information: observations and views name only known cards,
determinization, knowledge; random-play invariants against the independent references
(``ref_mask``, ``ref_points``, ``ref_board_obs``, ``RefTurn`` in ``flipology_ref.py``).

Positions are set up by swapping chosen cards into place in a real dealt game (so every
card stays conserved), then the engine is driven through its public actions; helpers and
independent references: ``tests/games/flipology/flipology_ref.py``.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import card_envs
from card_envs.core import kernels as K
from card_envs.flipology import layout as L
from flipology_ref import (
    ENV_ID,
    RefTurn,
    act_pos,
    after_setup,
    all_down,
    arrange,
    obs_cell,
    obs_sections,
    ref_board_obs,
    ref_mask,
    ref_points,
)


def hyp(n: int = 20) -> settings:
    return settings(max_examples=n, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@hyp(15)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(0, 60),
       opts=st.sampled_from([{}, {"num_players": 4}, {"variant": "great_tree"}]))
def test_unknown_cards_do_not_change_observation(seed: int, k: int, opts: dict) -> None:
    env = card_envs.make_raw(ENV_ID, **opts)
    env.reset(seed=seed)
    rnd = random.Random(seed)
    for _ in range(k):
        if env.state_array[K.DONE]:
            break
        env.step(rnd.choice(env.legal_actions()))
    g = env.game
    s = env.state_array
    for seat in range(g.num_players):
        obs = env.observe(f"player_{seat}")["observation"]
        view = env.state_dict(observer=seat)
        hidden = [c for c in range(g.ncards) if not g.aside[c] and not s[L.KNOW + c] >> seat & 1]
        for _ in range(5):
            if len(hidden) < 2:
                break
            a, b = rnd.sample(hidden, 2)  # swap two unknown cards wherever they are
            alt = s.copy()
            for base, size in ((L.POS, g.npos), (L.HAND, L.MAX_PLAYERS * L.HANDMAX),
                               (L.DECK, int(s[L.DECKN]))):
                seg = alt[base:base + size]
                ia, ib = seg == a, seg == b
                seg[ia], seg[ib] = b, a
            alt[L.DISC + a], alt[L.DISC + b] = s[L.DISC + b], s[L.DISC + a]
            alt[L.KNOW + a], alt[L.KNOW + b] = s[L.KNOW + b], s[L.KNOW + a]
            o2 = np.empty_like(obs)
            g.k_observe(alt, g.cfg, seat, o2)
            assert np.array_equal(o2, obs)
            assert g.state_dict(alt, seat) == view
        text = json.dumps(view)
        for c in range(g.ncards):  # the view names exactly the cards the seat knows
            known = bool(s[L.KNOW + c] >> seat & 1)
            where = np.flatnonzero(s[L.POS:L.POS + g.npos] == c)
            if where.size:
                sp, i = divmod(int(where[0]), g.seatpos)
                cell = view["rows"][sp][i // g.rowlen][i % g.rowlen]
                assert cell == (c if known else None)
            if not known:
                assert c not in view["discard"] and all(c not in h for h in view["hands"])
        assert "deck" in text and all(x is None for x in view["deck"])


def test_resample_keeps_observation() -> None:
    env = after_setup(num_players=3)
    for seat in range(3):
        agent = f"player_{seat}"
        alt = env.resample(seat, np.random.default_rng(seat))
        assert np.array_equal(alt.observe(agent)["observation"],
                              env.observe(agent)["observation"])
        assert alt.state_dict(observer=seat) == env.state_dict(observer=seat)
        assert alt.state_dict() != env.state_dict()


# --- invariants ---------------------------------------------------------------------------
@hyp(80)
@given(seed=st.integers(0, 2**31 - 1),
       opts=st.sampled_from([{}, {"num_players": 3, "moon": True}, {"num_players": 6},
                             {"num_players": 8, "moon": True, "start_player": "random"},
                             {"variant": "great_tree", "num_players": 3},
                             {"variant": "great_tree", "num_players": 4, "series": True,
                              "max_games": 2, "moon": True},
                             {"series": True, "max_games": 2}]))
def test_random_play_invariants(seed: int, opts: dict) -> None:
    env = card_envs.make_raw(ENV_ID, **opts)
    env.reset(seed=seed)
    g = env.game
    rnd = random.Random(seed)
    for _ in range(5000):
        d = env.state_dict()
        s = env.state_array
        # 84 cards conserved, counting nulls: every real card once, nulls aside or placed
        places = [x for seat in d["rows"] for row in seat for x in row if isinstance(x, int)]
        places += [x for h in d["hands"] for x in h if isinstance(x, int)]
        places += d["deck"] + d["discard"]
        aside = [c for c in range(g.ncards) if g.aside[c]]
        assert sorted(places + aside) == list(range(84))
        nulls = sum(x == "null" for seat in d["rows"] for row in seat for x in row)
        assert nulls == d["nulls_placed"]
        assert env.legal_actions() == ref_mask(g, d)
        seat = int(s[K.CUR]) if not s[K.DONE] else 0
        assert ref_board_obs(g, env.state_dict(observer=seat), seat) == \
            env.observe(f"player_{seat}")["observation"][:obs_sections(g).hand].tolist()
        if s[K.DONE]:
            break
        a = rnd.choice(env.legal_actions())
        expect = RefTurn(g, d).step(a) if d["phase"] in ("turn", "effect") else None
        env.step(a)
        if expect is not None:
            assert env.state_dict() == expect
    else:
        pytest.fail("game did not end")
    pts, win = g.outcome(env.state_array)
    if not opts.get("series"):
        assert pts.tolist() == ref_points(g, env.state_dict())


def test_knowledge_setup_discards_and_cards_seen_face_up() -> None:
    env = after_setup()
    full = env.state_dict()["discard"]
    for seat in (0, 1):
        view = env.state_dict(observer=seat)["discard"]
        assert len(view) == 4 and sum(x is None for x in view) == 2  # own 2 known
        assert set(x for x in view if x is not None) <= set(full)
    arrange(env, {6: "dog", 7: "panda", 8: "platypus"}, all_down(env))
    env.step(act_pos(env, 6))
    env.step(act_pos(env, 7))  # my Dog turns seat 1's Panda up
    env.step(act_pos(env, 7))  # seat 1 turns it down again
    obs = env.observe("player_0")["observation"]
    assert obs_cell(obs, 7) == [0, L.PANDA, 9]  # still remembered (face, kind, points)
    assert obs_cell(obs, 8)[L.OBS_KIND] == -1  # never seen
