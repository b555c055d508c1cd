"""Flipology's rule queries (``card_envs.flipology.queries``) against the engine.

Random positions of a few option sets: the scores equal the engine's ``outcome`` at the end of
every game and the independent reference (``flipology_ref.ref_points``) at every position; a
flip, each choice of a pending effect and the chain it starts do what ``flip_face``,
``effect_role``, ``swap_faces`` and ``flip_chains`` say, applied by the rules' own kernels;
``moon_seen`` on an observation equals ``moon_up`` on the state; the Hermit crab's legal picks
are the ``animal`` s. And the heuristic decides through these queries, with no rule of its own.
"""

from __future__ import annotations

import inspect
import random
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest

import card_envs
from card_envs.agents import flipology as heuristic
from card_envs.agents import make_agent
from card_envs.core import kernels as K
from card_envs.core.env import CardEnv
from card_envs.flipology import layout as L
from card_envs.flipology import queries as Q
from card_envs.flipology.parts.effects import abs_pos, apply_effect
from flipology_ref import ANIMALS, COPYABLE, EFFECT_KINDS, ENV_ID, KINDS, obs_sections, ref_points

GAMES = 8
CASES = ({}, {"num_players": 3, "variant": "great_tree", "moon": True},
         {"num_players": 4, "moon": True, "series": True, "max_games": 2})


def positions(opts: dict, games: int, seed: int) -> Iterator[CardEnv]:
    """Every position of ``games`` random games (the env itself: clone it to change it)."""
    env = card_envs.make_raw(ENV_ID, **opts)
    rnd = random.Random(seed)
    for g in range(games):
        env.reset(seed=1000 * seed + g)
        while not env.state_array[K.DONE]:
            yield env
            env.step(rnd.choice(env.legal_actions()))
        yield env


def test_card_kinds_follow_the_rules_text() -> None:
    """The per-kind queries name the kinds the rules list."""
    for k, name in enumerate(KINDS):
        assert Q.animal(k) == (name in ANIMALS)
        assert Q.has_effect(k) == (name in EFFECT_KINDS)
        assert Q.copyable(k) == (name in COPYABLE)
        assert Q.scores_face_down(k) == (name in ("sloth", "koala"))
        for pts in (0, 1, 7, 31):
            up, down = Q.card_value(k, pts, 1), Q.card_value(k, pts, 0)
            assert (up, down) == ((-pts, pts) if name in ("sloth", "koala") else (pts, 0))


@pytest.mark.parametrize("opts", CASES, ids=str)
def test_scores_equal_the_engine(opts: dict) -> None:
    """``seat_points`` equals the reference at every position, ``public_score`` the points of
    the face-up cards alone; at the end ``game_result`` (a series: ``series_outcome``) equals
    the engine's ``outcome``, winners included; ``moon_seen`` reads ``moon_up`` off every
    observation."""
    ends = 0
    for env in positions(opts, 3, seed=1):
        g, st = env.game, env.state_array
        n = g.num_players
        d = env.state_dict()
        assert [Q.seat_points(st, g.cfg, s) for s in range(n)] == ref_points(g, d)
        up_only = st.copy()
        down = (up_only[L.FACE:L.FACE + L.MAXPOS] == 0)
        up_only[L.POS:L.POS + L.MAXPOS][down] = -1
        assert [Q.public_score(st, g.cfg, s) for s in range(n)] == \
            [Q.seat_points(up_only, g.cfg, s) for s in range(n)]
        moon = Q.moon_up(st, g.cfg)
        for seat in range(n):
            obs = env.observe(f"player_{seat}")["observation"]
            o = obs_sections(g)
            assert Q.moon_seen(obs[o.board:o.hand], g.npos) == moon
        if not st[K.DONE]:
            continue
        ends += 1
        pts, win = g.outcome(st)
        qp, qw = np.zeros(n), np.zeros(n, np.int64)
        if opts.get("series"):
            Q.series_outcome(st, g.cfg, qp, qw)
        else:
            assert Q.game_result(st, g.cfg, qp, qw) == moon
        assert np.array_equal(qp, pts) and np.array_equal(qw, win)
    assert ends == 3


def test_flips_and_effect_choices_do_what_the_queries_say() -> None:
    """Turn flips (stepped) and every legal choice of a pending effect (applied by the kernel
    ``apply_effect`` to a copy) change the position as ``flip_face`` / ``effect_role`` /
    ``swap_faces`` say; a flip starts the flipped card's effect iff ``flip_chains``."""
    roles: Counter = Counter()
    for env in (e for opts in CASES[:2] for e in positions(opts, GAMES, seed=2)):
        g, st = env.game, env.state_array
        ph, cur = int(st[K.PHASE]), int(st[K.CUR])
        if ph == L.P_TURN:
            for a in env.legal_actions():
                p = abs_pos(g.cfg, cur, a)
                k, up = _kind(g, st, p), int(st[L.FACE + p])
                if up == 0 and Q.has_effect(k):
                    continue  # its effect may flip it again
                after = env.clone()
                after.step(a)
                assert after.state_array[L.FACE + p] == Q.flip_face(k, up, False)
                roles["turn"] += 1
        if ph != L.P_EFFECT:
            continue
        k, step, src = int(st[L.EF_KIND]), int(st[L.EF_STEP]), int(st[L.EF_SRC])
        role = Q.effect_role(k, step)
        for a in env.legal_actions():
            if a >= g.npos:
                continue
            q = abs_pos(g.cfg, cur, a)
            s = st.copy()
            apply_effect(s, g.cfg, a)
            _check_choice(g, st, s, k, step, src, q, role)
            roles[L.CHOICE_ROLES[role]] += 1
    assert set(roles) == {"turn", *L.CHOICE_ROLES}, roles


def _kind(g, st: np.ndarray, p: int) -> int:
    """Kind of the card at position ``p`` (a null left by the Wolves: ``NULL``)."""
    c = int(st[L.POS + p])
    return L.NULL if c == g.ncards else g.kinds[c]


def _check_choice(g, st: np.ndarray, s: np.ndarray, k: int, step: int, src: int, q: int,
                  role: int) -> None:
    """One applied choice ``q`` of the pending effect ``k`` (state before ``st``, after
    ``s``) against its role."""
    c = int(st[L.POS + q])
    kq = _kind(g, st, q)
    up = int(st[L.FACE + q])
    if role == L.ROLE_SWAP:
        assert (s[L.POS + q], s[L.POS + src]) == (st[L.POS + src], c)
        assert (s[L.FACE + src], s[L.FACE + q]) == Q.swap_faces(st[L.FACE + src], up)
    elif role == L.ROLE_REMOVE:
        assert s[L.POS + q] == g.ncards and s[L.DISC + c] == 1
    elif role == L.ROLE_COPY:
        assert s[L.EF_COPY] == 1 and s[L.EF_KIND] == kq
    elif role == L.ROLE_PEEK:
        assert s[L.EF_PEEK + step] == q
        assert np.array_equal(s[L.FACE:L.FACE + L.MAXPOS], st[L.FACE:L.FACE + L.MAXPOS])
    elif role == L.ROLE_CHOOSE:
        assert s[L.EF_SRC] == q and s[L.EF_KIND] == kq
    elif k == L.MONKEY and step == 0:
        assert s[L.EF_A] == q and s[L.FACE + q] == up  # the flip comes with the second choice
    else:
        assert s[L.FACE + q] == Q.flip_face(kq, up, True)
        if up == 0 and Q.has_effect(kq) and st[L.CHAIN] < L.CHAIN_LIMIT:
            chained = (s[L.CHAIN] > st[L.CHAIN] and s[L.EF_SRC] == q) or \
                (k == L.MONKEY and s[L.EF_STEP] == L.MONKEY_CHOOSE)
            assert chained == Q.flip_chains(k)


def test_hermit_picks_are_the_discarded_animals() -> None:
    """In the Hermit crab phase the legal picks are the discarded, unpicked ``animal`` s."""
    seen = 0
    for env in positions({"num_players": 4}, 6, seed=3):
        g, st = env.game, env.state_array
        if st[K.PHASE] != L.P_HERMIT:
            continue
        want = {g.disc0 + c for c in range(g.ncards) if st[L.DISC + c] and
                not st[L.PICK + c] and Q.animal(g.kinds[c])}
        assert set(env.legal_actions()) - {g.skip} == want
        seen += 1
    assert seen


def test_the_heuristic_decides_through_the_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The heuristic reads the rules from ``queries`` (no kind tests, no card values of its
    own) and every query it names is asked while it plays."""
    src = inspect.getsource(heuristic)
    assert heuristic.Q is Q
    for own in ("SLOTH", "KOALA", "CAT", "MOON", "FLIPPED_BY_EFFECT", "def _value"):
        assert own not in src, own
    calls: Counter = Counter()
    for name in ("card_value", "flip_face", "effect_role", "flip_chains", "swap_faces",
                 "moon_seen"):
        fn = getattr(Q, name)
        monkeypatch.setattr(Q, name, lambda *a, _f=fn, _n=name: calls.update([_n]) or _f(*a))
    env = card_envs.make_raw(ENV_ID, num_players=3)
    agent = make_agent("heuristic", ENV_ID, seed=0, num_players=3)
    rnd = random.Random(0)
    for seed in range(4):  # the heuristic decides at every step; half its moves are random
        env.reset(seed=seed)
        while not env.state_array[K.DONE]:
            obs = env.observe(env.agent_selection)
            a = agent.act(obs["observation"], obs["action_mask"])
            env.step(a if rnd.random() < 0.5 else rnd.choice(env.legal_actions()))
    assert set(calls) == {"card_value", "flip_face", "effect_role", "flip_chains",
                          "swap_faces", "moon_seen"}, calls
