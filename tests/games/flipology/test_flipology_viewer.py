"""Flipology's SVG picture (``card_envs/flipology/view.py``): random positions of every
manifest test case draw, parse and rasterise in both themes; what the pictures show changes
with the position; a seat's picture never shows what it cannot know (``resample`` leaves it
byte-identical); the scores the picture prints agree with the engine's."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import card_envs
from card_envs.core import kernels as K
from card_envs.draw import THEMES, to_rgb_array
from card_envs.flipology.manifest import MANIFEST
from card_envs.flipology.parts.scores import game_points, public_score, result
from card_envs.flipology.queries import game_result as k_game_result
from card_envs.flipology.queries import public_score as k_public_score
from card_envs.flipology.view import draw
from svg_views import size_of, texts
from svg_views import walk as svg_walk

CASES = MANIFEST.test_cases
LIGHT, DARK = THEMES["light"], THEMES["dark"]


def walk(opts: dict, seed: int, max_steps: int = 10**6):
    return svg_walk(MANIFEST.env_id, opts, seed, max_steps)


def pictured(view: dict) -> str:
    """The fields a picture must reflect: a change in any of them must change the SVG."""
    keys = ("phase", "current_player", "rows", "face_up", "hands", "discard", "picked",
            "effect_stack", "round", "totals", "regrow_used", "start_player", "levels")
    return json.dumps({k: view[k] for k in keys})


@pytest.mark.parametrize("opts", CASES, ids=[str(i) for i in range(len(CASES))])
def test_pictures_parse_and_rasterise(opts: dict) -> None:
    """Start, middle and end of a random game, omniscient and from the seat to act, in both
    themes: valid SVG of the declared size; RGB arrays of that size, far from blank."""
    states = [json.dumps(e.state_dict()) for e in walk(opts, seed=7)]
    env = card_envs.make_raw(MANIFEST.env_id, **opts)
    for k, d in enumerate((states[0], states[len(states) // 2], states[-1])):
        env.load_state_dict(json.loads(d))
        cur = env.state_dict()["current_player"]
        for obs in (None, 0 if cur is None else cur):
            for th in (LIGHT, DARK):
                svg = draw(env.state_dict(observer=obs), th)
                h, w = size_of(svg)
                if (k, obs is None) in ((1, False), (2, True)) and th is (LIGHT, DARK)[k - 1]:
                    arr = to_rgb_array(svg)  # rasterising is the slow part: twice per case
                    assert arr.shape == (h, w, 3) and arr.dtype == np.uint8
                    assert len(np.unique(arr.reshape(-1, 3), axis=0)) > 100
                    assert np.asarray(arr == arr[0, 0]).all(axis=2).mean() < 0.9


@pytest.mark.parametrize("opts", CASES, ids=[str(i) for i in range(len(CASES))])
def test_every_position_of_a_game_draws(opts: dict) -> None:
    """Every position of a game (up to 400 moves) draws valid SVG of one size; a change of
    anything pictured changes the picture; the seat named by the view is marked "YOU"."""
    sizes, seen = set(), set()
    prev_key, prev_svg = None, None
    for env in walk(opts, seed=3, max_steps=400):
        d = env.state_dict()
        seen.add(d["phase"])
        obs = d["steps"] % env.game.num_players
        svg = draw(d, LIGHT)
        sizes.add(size_of(svg))
        words = texts(svg)
        assert "view: omniscient" in " ".join(words) and "YOU" not in words
        key = pictured(d)
        if prev_key is not None and key != prev_key:
            assert svg != prev_svg
        prev_key, prev_svg = key, svg
        seat_svg = draw(env.state_dict(observer=obs), DARK)
        sizes.add(size_of(seat_svg))
        assert texts(seat_svg).count("YOU") == 1 and f"view: player_{obs}" in seat_svg
    assert len(sizes) == 1
    want = {"setup", "turn"} | ({"regrow"} if opts.get("variant") == "great_tree" else set())
    assert want <= seen


def test_two_positions_give_different_rasters() -> None:
    env = card_envs.make_raw(MANIFEST.env_id)
    env.reset(seed=1)
    a = to_rgb_array(draw(env.state_dict(), LIGHT))
    rnd = random.Random(1)
    for _ in range(20):
        env.step(rnd.choice(env.legal_actions()))
    b = to_rgb_array(draw(env.state_dict(), LIGHT))
    assert a.shape == b.shape and (a != b).any(axis=2).sum() > 1000


@pytest.mark.parametrize("opts", CASES, ids=[str(i) for i in range(len(CASES))])
def test_a_seat_sees_nothing_hidden(opts: dict) -> None:
    """For every seat: redrawing what it cannot know (``resample``) leaves its picture
    byte-identical, while the omniscient picture does change at least sometimes."""
    changed = checked = 0
    for i, env in enumerate(walk(opts, seed=11, max_steps=300)):
        if i % 7:
            continue
        full = draw(env.state_dict(), LIGHT)
        for seat in range(env.game.num_players):
            if (i // 7 + seat) % 2 and env.game.num_players > 4:
                continue  # many seats: every other seat per position
            mine = draw(env.state_dict(observer=seat), LIGHT)
            other = env.resample(seat, rng=100 * i + seat)
            assert draw(other.state_dict(observer=seat), LIGHT) == mine
            changed += draw(other.state_dict(), LIGHT) != full
            checked += 1
    assert checked and changed


@pytest.mark.parametrize("opts", CASES, ids=[str(i) for i in range(len(CASES))])
def test_scores_agree_with_the_engine(opts: dict) -> None:
    """The visible scores of every position equal the engine's public scores; at the end the
    printed points and winners equal the engine's outcome (and the last game's points its
    game result), from every seat's view."""
    g = None
    for seed in (5, 6):
        for env in walk(opts, seed=seed, max_steps=2000):
            g = env.game
            st = env.state_array
            d = env.state_dict(observer=int(st[K.STEPS]) % g.num_players)
            if d["phase"] != "end":
                assert result(d) is None
                for s in range(g.num_players):
                    assert public_score(d, s) == k_public_score(st, g.cfg, s)
        assert st[K.DONE]
        pts, win = g.outcome(st)
        want = ([int(p) for p in pts], [bool(w) for w in win])
        gp, gw = np.zeros(g.num_players), np.zeros(g.num_players, np.int64)
        k_game_result(st, g.cfg, gp, gw)  # the last game's own points (a series: its last)
        for obs in (None, *range(g.num_players)):
            assert result(env.state_dict(observer=obs)) == want
            assert game_points(env.state_dict(observer=obs)) == \
                ([int(p) for p in gp], [bool(w) for w in gw])
        words = " ".join(texts(draw(env.state_dict(), LIGHT)))
        assert "game over" in words and " : ".join(map(str, want[0])) in words
