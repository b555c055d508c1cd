"""Flipology's board clicks (``view.clicks``) land on what the picture draws: a position on
the card in the row its name counts from the seat to act (``r1``: the next seat's row, drawn
on each panel with the column and level numbers), a hand slot on the card in that slot (its
number under it), a Hermit crab's pick on that card of the discard pile, and skip / regrow /
keep / count face up / count face down on a chip drawn in the title bar only in the phases
where they are legal; ``view.result_text`` gives the rule and the final figures."""

from __future__ import annotations

import json
import random
import re
import xml.etree.ElementTree as ET

import numpy as np

import card_envs
from card_envs.core import kernels as K
from card_envs.flipology import view as V
from card_envs.flipology.layout import KIND_NAMES, SINGLES
from card_envs.flipology.manifest import MANIFEST
from card_envs.flipology.parts.cards import KIND_TEXT
from card_envs.flipology.parts.deck import card_table
from card_envs.flipology.parts.places import discard_layout, panel_xy, sizes
from card_envs.flipology.parts.scores import moon_up
from svg_views import SVG_NS, walk

CASES = (*MANIFEST.test_cases, {"num_players": 5}, {"num_players": 4, "variant": "great_tree"})


def _rects(svg: str) -> set[tuple[float, ...]]:
    return {tuple(round(float(e.get(k)), 2) for k in ("x", "y", "width", "height"))
            for e in ET.fromstring(svg).iter(f"{SVG_NS}rect")}


def _texts(svg: str) -> list[tuple[float, float, str]]:
    return [(float(e.get("x")), float(e.get("y")), e.text or "")
            for e in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def _r(box: tuple) -> tuple[float, ...]:
    return tuple(round(float(v), 2) for v in box)


def _inside(box: tuple, x: float, y: float) -> bool:
    bx, by, bw, bh = box
    return bx <= x <= bx + bw and by <= y <= by + bh


def _check_position(view: dict, name: str, box: tuple, rects: set, texts: list) -> None:
    """The box of ``position r<rel>[l<lv>]c<c>`` is a card drawn in the panel of the seat
    ``rel`` places after the seat to act, under its column number, beside its level number."""
    m = re.fullmatch(r"position r(\d)(?:l(\d))?c(\d)", name)
    rel, lv, c = int(m[1]), m[2], int(m[3])
    z = sizes(view)
    seat = (view["current_player"] + rel) % z["n"]
    px, py = panel_xy(seat, z)
    x, y, w, h = box
    assert px < x and x + w < px + z["pw"] and py < y and y + h < py + z["ph"]
    assert _r(box) in rects  # a card (or its back) is drawn exactly there
    in_panel = [(tx, ty, t) for tx, ty, t in texts
                if px <= tx <= px + z["pw"] and py <= ty <= py + z["ph"]]
    assert any(t == f"r{rel}" for _, _, t in in_panel)
    assert any(t == f"c{c}" and abs(tx - (x + w / 2)) < 1 and ty < y for tx, ty, t in in_panel)
    if lv is not None:
        assert any(t == f"l{lv}" and y <= ty <= y + h and tx < x for tx, ty, t in in_panel)


def test_every_move_lands_on_what_it_names() -> None:
    """Every legal move of random games, from the seat to act's view, on its own picture:
    one game of each case, then 5-seat games until every kind of move was seen (a Hermit
    crab picking a Sloth or Koala, which then counts it, is rare)."""
    kinds_seen: set[str] = set()
    games = [(opts, 21) for opts in CASES] + [({"num_players": 5}, s) for s in range(40)]
    for opts, seed in games:
        if len(kinds_seen) == 3 + len(SINGLES) and seed != 21:
            break
        for env in walk(MANIFEST.env_id, opts, seed=seed):
            d = env.state_dict()
            if d["current_player"] is None or (seed != 21 and not d["phase"].startswith("h")):
                continue  # (the further games: only their Hermit crab phases)
            view = env.state_dict(observer=d["current_player"])
            svg = V.draw(view, "light")
            rects, texts = _rects(svg), _texts(svg)
            kinds, _ = card_table(view)
            shown = [t for _, _, t in texts if t in SINGLES]
            legal = env.legal_actions()
            for a, (box,) in V.clicks(view, legal).items():
                name = env.action_to_str(a)
                x, y, w, h = box
                if name.startswith("position"):
                    _check_position(view, name, box, rects, texts)
                    kinds_seen.add("position")
                elif name.startswith("hand slot"):
                    j = int(name.split()[-1])
                    assert view["hands"][view["current_player"]][j] not in ("empty", None)
                    assert _r(box) in rects
                    assert any(t == str(j) and abs(tx - (x + w / 2)) < 1 and ty > y + h
                               for tx, ty, t in texts)
                    kinds_seen.add("hand")
                elif name.startswith("pick card"):
                    c = int(name.split()[2])
                    assert c in view["discard"] and _r(box) in rects
                    label = KIND_TEXT[KIND_NAMES[kinds[c]]][0]
                    assert any(t == label and _inside(box, tx, ty) for tx, ty, t in texts)
                    kinds_seen.add("pick")
                else:
                    assert name in SINGLES and _r(box) in rects
                    assert any(t == name and abs(tx - (x + w / 2)) < 1 and _inside(box, tx, ty)
                               for tx, ty, t in texts)
                    kinds_seen.add(name)
            # the chips drawn are those of the single moves legal here
            assert sorted(shown) == sorted(env.action_to_str(a) for a in legal
                                           if env.action_to_str(a) in SINGLES)
    assert kinds_seen == {"position", "hand", "pick", *SINGLES}


def test_the_engine_plays_a_move_where_its_box_is() -> None:
    """A turn flip turns the card in its box; a hand slot's card leaves the box's slot (the
    first of each in a game of each variant)."""
    for opts in ({}, {"num_players": 3, "variant": "great_tree"}):
        todo = {"turn", "setup"}
        for env in walk(MANIFEST.env_id, opts, seed=5):
            d = env.state_dict()
            if d["phase"] not in todo:
                continue
            todo.discard(d["phase"])
            cur = d["current_player"]
            a = min(env.legal_actions())
            (box,) = V.clicks(d, [a])[a]
            z = sizes(d)
            env.step(a)
            after = env.state_dict()
            if d["phase"] == "turn":
                lv, c = d["levels"] - 1, a % z["rl"]
                assert after["face_up"][cur][lv][c] != d["face_up"][cur][lv][c]
                assert box == V.cell_box(cur, lv, c, z)
            else:
                j = a - z["n"] * z["rl"] * z["nl"]
                assert after["hands"][cur][j] == "empty" != d["hands"][cur][j]
                assert box == V.hand_box(cur, j, z)
            if not todo:
                break
        assert not todo


def test_picks_another_seat_does_not_know_split_the_unknown_back() -> None:
    found = 0
    for seed in range(12):
        for env in walk(MANIFEST.env_id, {"num_players": 5}, seed=seed):
            d = env.state_dict()
            if d["phase"] != "hermit":
                continue
            view = env.state_dict(observer=(d["current_player"] + 1) % 5)
            z = sizes(view)
            back = dict(discard_layout(view, z)).get(None)
            legal = env.legal_actions()
            paths = V.clicks(view, legal)
            hidden = [a for a in legal if env.action_to_str(a).startswith("pick card")
                      and int(env.action_to_str(a).split()[2]) not in view["discard"]]
            if back is None or not hidden:
                continue
            boxes = [paths[a][0] for a in hidden]
            assert len(set(boxes)) == len(boxes)
            assert all(back[0] <= x and x + w <= back[0] + back[2] + 1e-9 and (y, h) ==
                       (back[1], back[3]) for x, y, w, h in boxes)
            alone = V.clicks(view, hidden[:1])[hidden[0]][0]
            assert alone == back  # asked alone: the whole back
            found += 1
    assert found


def test_an_overfull_discard_pile_overlaps_and_keeps_every_card_clickable() -> None:
    env = card_envs.make_raw(MANIFEST.env_id, num_players=3)
    env.reset(seed=0)
    view = json.loads(json.dumps(env.state_dict()))
    kinds, _ = card_table(view)
    view["discard"] = list(range(len(kinds)))  # every card: far more than fit side by side
    z = sizes(view)
    boxes = dict(discard_layout(view, z))
    ix, iy, iw, ih = z["info"]
    assert len(boxes) == len(kinds) and len(set(boxes.values())) == len(kinds)
    assert all(ix <= x and x + w <= ix + iw and iy <= y and y + h <= iy + ih
               for x, y, w, h in boxes.values())
    svg = V.draw(view, "light")
    starts = {(round(x, 2), round(y, 2)) for x, y, _, _ in boxes.values()}
    assert starts <= {r[:2] for r in _rects(svg)}  # each card is drawn where its box starts


def test_result_text_states_the_rule_then_the_figures() -> None:
    for opts, seed in (({"num_players": 3}, 1), ({"num_players": 4, "moon": True}, 2),
                       ({"num_players": 3, "series": True, "max_games": 3}, 3)):
        env = card_envs.make_raw(MANIFEST.env_id, **opts)
        env.reset(seed=seed)
        start = V.result_text(env.state_dict())
        assert ("A series" in start) == bool(opts.get("series"))
        assert ("the Moon lies face up" in start) == bool(opts.get("moon"))
        rnd = random.Random(seed)
        while not env.state_array[K.DONE]:
            env.step(rnd.choice(env.legal_actions()))
        points, winners = env.game.outcome(env.state_array)
        d = env.state_dict(observer=0)
        text = V.result_text(d)
        assert text.startswith(start)
        head, figures = text[len(start):].split("Total:" if opts.get("series") else "Points:")
        for q in range(opts["num_players"]):
            assert f"player_{q} {int(points[q])}" in figures
            assert (f"player_{q}" in head) == bool(winners[q])
        assert ("The Moon is face up" in head) == (moon_up(d) and not opts.get("series"))


def test_result_text_gives_the_species_when_they_broke_a_tie() -> None:
    broken = 0
    for seed in range(40):
        env = card_envs.make_raw(MANIFEST.env_id, num_players=4)
        env.reset(seed=seed)
        rnd = random.Random(seed)
        while not env.state_array[K.DONE]:
            env.step(rnd.choice(env.legal_actions()))
        points, winners = env.game.outcome(env.state_array)
        best = points[int(np.flatnonzero(winners)[0])]
        tied = [q for q in range(4) if points[q] == best]
        text = V.result_text(env.state_dict(observer=seed % 4))
        assert ("Tie broken by face-up animal species" in text) == (len(tied) > sum(winners))
        if len(tied) > sum(winners):
            counts = {int(q): int(k) for q, k in re.findall(r"player_(\d) (\d+)",
                                                            text.split("species:")[1])}
            assert sorted(counts) == tied
            assert all((counts[q] == max(counts.values())) == bool(winners[q]) for q in tied)
            broken += 1
    assert broken
