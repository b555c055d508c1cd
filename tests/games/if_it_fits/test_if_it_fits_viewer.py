"""If It Fits' SVG viewer (``card_envs/if_it_fits/view.py``): random positions of every
manifest test case draw, parse and rasterise in both themes; what the pictures show changes
with the position; a seat's picture never shows what it cannot know (``resample`` leaves it
byte-identical); the boxes and scores the picture prints agree with the engine's."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import card_envs
from card_envs.core import kernels as K
from card_envs.draw import THEMES, to_rgb_array
from card_envs.if_it_fits.manifest import MANIFEST
from card_envs.if_it_fits.queries import score as k_score
from card_envs.if_it_fits.view import boxes, draw, result, scores
from if_it_fits_ref import boxes as engine_boxes
from svg_views import size_of, texts
from svg_views import walk as svg_walk

CASES = MANIFEST.test_cases
LIGHT, DARK = THEMES["light"], THEMES["dark"]


def walk(opts: dict, seed: int, max_steps: int = 10**6):
    return svg_walk(MANIFEST.env_id, opts, seed, max_steps)


def pictured(view: dict) -> str:
    """The fields a picture must reflect: a change in any of them must change the SVG."""
    keys = ("phase", "current_player", "table", "slots", "hands", "supplies", "discarded",
            "end_triggered", "start_cards_used", "selected_cell", "played_cell",
            "selected_start", "drawn_toy")
    return json.dumps({k: view[k] for k in keys}) + str(len(view["draw_pile"]))


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
    """Every position of a game draws valid SVG of one size; a change of anything pictured
    changes the picture; the seat named by the view is marked "YOU"."""
    sizes, seen = set(), set()
    for seed in (3,):
        prev_key, prev_svg = None, None
        for env in walk(opts, seed=seed):
            d = env.state_dict()
            seen.add(d["phase"])
            svg = draw(d, LIGHT)
            sizes.add(size_of(svg))
            words = texts(svg)
            assert "view: omniscient" in " ".join(words) and "YOU" not in words
            key = pictured(d)
            if prev_key is not None and key != prev_key:
                assert svg != prev_svg
            prev_key, prev_svg = key, svg
            obs = d["steps"] % env.game.num_players
            seat_svg = draw(env.state_dict(observer=obs), DARK)
            sizes.add(size_of(seat_svg))
            assert texts(seat_svg).count("YOU") == 1 and f"view: player_{obs}" in seat_svg
    assert len(sizes) == 1
    assert {"start_card", "start_rotation", "turn", "play", "cell", "rotation", "end"} <= seen


def test_two_positions_give_different_rasters() -> None:
    env = card_envs.make_raw(MANIFEST.env_id)
    env.reset(seed=1)
    a = to_rgb_array(draw(env.state_dict(), LIGHT))
    rnd = random.Random(1)
    for _ in range(12):
        env.step(rnd.choice(env.legal_actions()))
    b = to_rgb_array(draw(env.state_dict(), LIGHT))
    assert a.shape == b.shape and (a != b).any(axis=2).sum() > 1000


@pytest.mark.parametrize("opts", CASES, ids=[str(i) for i in range(len(CASES))])
def test_a_seat_sees_nothing_hidden(opts: dict) -> None:
    """For every seat: redrawing what it cannot know (``resample``) leaves its picture
    byte-identical, while the omniscient picture does change at least sometimes."""
    changed = checked = 0
    for seed in (11, 12):
        for i, env in enumerate(walk(opts, seed=seed)):
            if i % 5:
                continue
            full = draw(env.state_dict(), LIGHT)
            for seat in range(env.game.num_players):
                mine = draw(env.state_dict(observer=seat), LIGHT)
                other = env.resample(seat, rng=1000 * seed + 10 * i + seat)
                assert draw(other.state_dict(observer=seat), LIGHT) == mine
                changed += draw(other.state_dict(), LIGHT) != full
                checked += 1
    assert checked and changed


@pytest.mark.parametrize("opts", CASES, ids=[str(i) for i in range(len(CASES))])
def test_boxes_and_scores_agree_with_the_engine(opts: dict) -> None:
    """The viewer's boxes (cells, closed, toys, sprayers, value, cats) equal the engine's at
    every position; the "now" scores equal the engine's score kernel run on that position;
    at the end the printed points and winners equal the engine's outcome from every view."""
    for seed in (5, 6):
        for env in walk(opts, seed=seed):
            g, st = env.game, env.state_array
            d = env.state_dict(observer=int(st[K.STEPS]) % g.num_players)
            mine = boxes(d)
            ref = engine_boxes(g, st)
            assert [b["cells"] for b in mine] == [[tuple(c) for c in b["cells"]] for b in ref]
            for a, b in zip(mine, ref):
                assert (a["closed"], a["toys"], a["sprayers"], a["value"], a["princesses"]) \
                    == (b["closed"], b["toys"], b["sprayers"], b["value"], b["princesses"])
                assert [[a["awake"][q], a["asleep"][q]] for q in range(g.num_players)] == \
                    [b["cats"][q] for q in range(g.num_players)]
            pts, minus = np.zeros(g.num_players), np.zeros(g.num_players)
            k_score(st.copy(), g.cfg, pts, minus)
            assert scores(d, mine) == ([int(p) for p in pts], [int(m) for m in minus])
            if d["phase"] != "end":
                assert result(d) is None
        pts, win = g.outcome(st)
        want = ([int(p) for p in pts], [bool(w) for w in win])
        for obs in (None, *range(g.num_players)):
            assert result(env.state_dict(observer=obs)) == want
        words = " ".join(texts(draw(env.state_dict(), LIGHT)))
        assert "game over" in words and "points " + " : ".join(map(str, want[0])) in words
