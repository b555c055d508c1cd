"""Op Glad IJs' rule queries (``card_envs.op_glad_ijs.queries``) against the engine: the judge
against the reference rules, the best correct slaps against every legal slap, the gain of a
lone slap against a played window, the scores against ``outcome``; and the heuristic asks the
queries instead of judging on its own."""

from __future__ import annotations

import functools
import inspect
import random

import numpy as np
import pytest

from card_envs.core import kernels as K
from card_envs.op_glad_ijs import queries as Q
from card_envs.op_glad_ijs import view
from card_envs.op_glad_ijs.layout import (
    A_ONE,
    A_PASS,
    CHOICE,
    GAIN,
    J_FAULT,
    J_PASS,
    MAX_TYPES,
    MCOUNT,
    MLEN,
    NA,
    NH,
    NRIGHT,
    NUM_ANIMALS,
    OBS_MIDDLE,
    PLEN,
    PLIST,
    WLEN,
)
from card_envs.op_glad_ijs.parts.linked import middle
from op_glad_ijs_ref import card, raw, ref_judge

CASES = ({}, {"num_players": 3, "two_animals": True}, {"num_players": 4, "advanced": True})
CLASS = {"pass": 0, "right": 1, "animals": 2, "habitats": 3, "pair": 4, "fault": 5}


@functools.cache
def _positions(ci: int) -> tuple:
    """The env of case ``ci`` and the running states of a few random games (every step)."""
    env = raw(max_turned=60, **CASES[ci])
    rnd = random.Random(ci)
    states, ends = [], []
    for g in range(3):
        env.reset(seed=10 * ci + g)
        while not env.state_array[K.DONE]:
            states.append(env.state_array.copy())
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(rnd.choice(np.flatnonzero(mask).tolist()))
        ends.append(env.state_array.copy())
    return env, states[::3], ends


def _legal(game, state) -> list[int]:
    return [a for a in game.legal_actions(state) if a != A_PASS]


@pytest.mark.parametrize("ci", range(len(CASES)))
def test_judge_and_visible_follow_the_reference_rules(ci: int) -> None:
    env, states, _ = _positions(ci)
    g = env.game
    for state in states[::4]:
        mid = [g.codes[t] for t in middle(state)]
        va, vh = Q.visible(state)
        normal = [card(c) for c in mid if card(c)[0] == "normal"]
        assert va == sum(1 << a for a in {x for _, an, _ in normal for x in an})
        assert vh == sum(1 << h for h in {x for _, _, hb in normal for x in hb})
        for a in [A_PASS] + _legal(g, state):
            slap = tuple(g.codes[t] for t in g.action_types(a) if t >= 0)
            assert Q.judge(state, g.cfg, a, va, vh) == CLASS[ref_judge(mid, slap)]


@pytest.mark.parametrize("ci", range(len(CASES)))
def test_best_slaps_are_the_best_legal_class(ci: int) -> None:
    env, states, _ = _positions(ci)
    g = env.game
    for state in states:
        acts, cls = Q.best_slaps(state, g.cfg)
        va, vh = Q.visible(state)
        classes = {a: Q.judge(state, g.cfg, a, va, vh) for a in _legal(g, state)}
        best = min(classes.values(), default=J_FAULT)
        assert cls == best
        assert (cls != J_FAULT) == Q.target_exists(state, g.cfg)
        want = sorted(a for a, j in classes.items() if j == best != J_FAULT)
        assert acts.tolist() == want


@pytest.mark.parametrize("ci", range(len(CASES)))
def test_middle_from_counts_rebuilds_the_middle(ci: int) -> None:
    env, states, _ = _positions(ci)
    g = env.game
    for state in states[::2]:
        mid = Q.middle_from_counts(state[MCOUNT:MCOUNT + g.T], g.cfg)
        # MLEN; NRIGHT, NA, NH, PLEN (adjacent); PLIST; MCOUNT
        assert NRIGHT < NA < NH < PLEN == NH + NUM_ANIMALS
        for lo, hi in ((MLEN, MLEN + 1), (NRIGHT, PLEN + 1), (PLIST, PLIST + MAX_TYPES),
                       (MCOUNT, MCOUNT + g.T)):
            assert np.array_equal(mid[lo:hi], state[lo:hi])
        assert Q.best_slaps(mid, g.cfg)[0].tolist() == Q.best_slaps(state, g.cfg)[0].tolist()


@pytest.mark.parametrize("ci", range(len(CASES)))
def test_pairs_available_counts_the_middle(ci: int) -> None:
    env, states, _ = _positions(ci)
    g = env.game
    for state in states[::4]:
        mid = middle(state)
        for a in _legal(g, state):
            t, u = g.action_types(a)
            if u < 0:
                continue
            want = mid.count(t) // 2 if t == u else min(mid.count(t), mid.count(u))
            assert Q.pairs_available(state, t, u) == want >= 1


@pytest.mark.parametrize("ci", range(len(CASES)))
def test_slap_gain_is_what_a_lone_slap_wins(ci: int) -> None:
    env, states, _ = _positions(ci)
    g = env.game
    n = g.num_players
    rewards = np.zeros(n, np.float64)
    seen = set()
    for state in states[::3]:
        if state[K.CUR] != 0:
            continue
        va, vh = Q.visible(state)
        for a in [A_PASS] + _legal(g, state)[:12]:
            s = state.copy()
            g.k_step(s, g.cfg, a, rewards)
            for _ in range(1, n):
                g.k_step(s, g.cfg, A_PASS, rewards)
            j = Q.judge(state, g.cfg, a, va, vh)
            seen.add(j)
            assert s[GAIN] == Q.slap_gain(state, j, int(state[WLEN])), (a, j)
    assert {J_PASS, J_FAULT} <= seen and len(seen) >= 3  # and a correct slap


@pytest.mark.parametrize("ci", range(len(CASES)))
def test_scores_are_the_outcome(ci: int) -> None:
    env, _, ends = _positions(ci)
    g = env.game
    for state in ends:
        points, winners = g.outcome(state)
        won = state[WLEN:WLEN + g.num_players].copy()
        p2 = np.zeros(g.num_players)
        w2 = np.zeros(g.num_players, np.int64)
        Q.scores(won, p2, w2)
        assert np.array_equal(points, p2) and np.array_equal(winners, w2)
        d = env.game.state_dict(state)
        assert view._winners(d) == set(np.flatnonzero(winners).tolist())


def test_pending_hidden_are_the_hidden_choices() -> None:
    env, states, _ = _positions(1)
    g = env.game
    for state in states[:60]:
        cur = int(state[K.CUR])
        for seat in range(g.num_players):
            hidden = Q.pending_hidden(state, seat)
            assert hidden == [q for q in range(cur) if q != seat]
            d = g.state_dict(state, seat)
            assert [q for q in range(g.num_players) if d["choices"][q] is None and
                    state[CHOICE + q] >= 0] == hidden


def test_queries_are_documented_functions() -> None:
    for name in Q.__all__:
        fn = getattr(Q, name)
        assert callable(fn) and inspect.getdoc(getattr(fn, "py_func", fn)), name


def test_the_heuristic_asks_the_queries() -> None:
    from card_envs.agents import op_glad_ijs as H

    assert H.best_slaps is Q.best_slaps and H.middle_from_counts is Q.middle_from_counts
    assert H.pending_hidden is Q.pending_hidden
    src = inspect.getsource(H)
    for rule in ("CT_KIND", "CT_AM", "CT_HM", "KIND_", "MCOUNT", "PLIST", "pair_base"):
        assert rule not in src, f"the heuristic reads the rules' tables itself ({rule})"
    assert not {"judge", "visible", "target_exists"} & set(vars(H))
    env, states, _ = _positions(2)
    g = env.game
    agent = H.OpGladIJsHeuristicAgent(env.game.env_id, seed=0, **CASES[2])
    rng = np.array([99], np.uint64)
    for state in states[::3]:
        best = Q.best_slaps(state, g.cfg)[0].tolist()
        obs = np.zeros(g.obs_size, np.int8)
        g.k_observe(state, g.cfg, int(state[K.CUR]), obs)
        assert agent.targets(obs[OBS_MIDDLE:OBS_MIDDLE + g.T]) == best
        mask = np.zeros(g.num_actions, np.int8)
        g.k_legal_mask(state, g.cfg, mask)
        a = H.heuristic_policy(state, g.cfg, int(state[K.CUR]), mask, obs, rng)
        assert a in best if best else a == A_PASS
        assert a == A_PASS or a >= A_ONE
