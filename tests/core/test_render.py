"""Pictures of every game (issue 18): ``render_mode="svg"`` / ``"rgb_array"``, ``env.picture()``,
both themes, a seat's view hiding what the seat cannot know, and the env plumbing around them
(``render_observer``, ``render_theme``, the parallel env, PettingZoo's wrappers)."""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from card_envs import draw
from card_envs.core.env import ResetNeededError
from card_envs.core.errors import NoViewerError, OptionError
from card_envs.core.registry import env_class, env_ids, make, make_raw, manifest

SVG_NS = "{http://www.w3.org/2000/svg}"

DRAWN = list(env_ids())  # every registered game has a viewer (the toy too)


def _positions(env_id: str, options: dict, seed: int, count: int) -> list:
    """Clones of a random game at ``count`` random steps, plus its end."""
    env = make_raw(env_id, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trail = []
    while not env._over:
        trail.append(env.clone())
        env.step(int(rng.choice(env.legal_actions())))
    picks = sorted(rng.choice(len(trail), size=min(count, len(trail)), replace=False))
    return [trail[i] for i in picks] + [env]


def _size(svg: str) -> tuple[int, int]:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG_NS}svg" and root.find(f"{SVG_NS}title") is not None
    return int(float(root.get("height"))), int(float(root.get("width")))


@pytest.mark.parametrize("env_id", DRAWN)
def test_svg_parses_in_both_themes_and_every_view(env_id: str) -> None:
    for k, options in enumerate(manifest(env_id).test_cases):
        for env in _positions(env_id, options, seed=k, count=3):
            sizes = set()
            for observer in (None, *range(env.game.num_players)):
                for name in draw.THEMES:
                    svg = env.picture(observer, name).svg
                    sizes.add(_size(svg))
            assert len(sizes) == 1, f"one picture size per configuration, got {sizes}"


@pytest.mark.parametrize("env_id", DRAWN)
def test_rgb_array_is_the_picture_not_blank(env_id: str) -> None:
    env = _positions(env_id, {}, seed=3, count=1)[0]
    for name in draw.THEMES:
        pic = env.picture(0, name)
        arr = pic.rgb_array()
        assert arr.dtype == np.uint8 and arr.ndim == 3 and arr.shape[2] == 3
        assert arr.shape[:2] == _size(pic.svg)
        colours = np.unique(arr.reshape(-1, 3), axis=0)
        assert len(colours) > 50, f"{env_id} {name}: only {len(colours)} colours"
        assert pic.png().startswith(b"\x89PNG")
    light, dark = (env.picture(None, t).rgb_array() for t in ("light", "dark"))
    assert light.mean() > dark.mean() + 40  # the themes are what they say


@pytest.mark.parametrize("env_id", DRAWN)
def test_different_states_give_different_pictures(env_id: str) -> None:
    env = make_raw(env_id)
    env.reset(seed=0)
    first = env.picture(None).svg
    other = make_raw(env_id)
    other.reset(seed=1)
    assert other.picture(None).svg != first
    env.step(env.legal_actions()[0])
    assert env.picture(None).svg != first
    a = env.picture(None).rgb_array()
    b = draw.to_rgb_array(first)
    assert a.shape == b.shape and not np.array_equal(a, b)


@pytest.mark.parametrize("env_id", DRAWN)
def test_a_seat_view_shows_nothing_it_cannot_know(env_id: str) -> None:
    """Redrawing what seat s cannot know (``env.resample(s)``) leaves s's picture byte-identical;
    the omniscient picture of the redrawn state does change (in games with hidden cards)."""
    rng = np.random.default_rng(7)
    changed = 0
    for k, options in enumerate(manifest(env_id).test_cases):
        for env in _positions(env_id, options, seed=10 + k, count=4):
            if env._over:
                continue
            everything = env.picture(None).svg
            for seat in range(env.game.num_players):
                mine = env.picture(seat).svg
                for _ in range(2):
                    other = env.resample(seat, rng)
                    assert other.picture(seat).svg == mine
                    changed += other.picture(None).svg != everything
    if not env.game.perfect_information:
        assert changed > 0, "the omniscient view never showed a redrawn card"


@pytest.mark.parametrize("env_id", DRAWN)
def test_render_modes_through_make(env_id: str) -> None:
    env = make(env_id, render_mode="svg", render_observer="current", render_theme="dark")
    env.reset(seed=2)
    svg = env.render()
    assert isinstance(svg, str) and svg.startswith("<svg")
    cur = env.agent_selection
    assert svg == env.picture(cur, "dark").svg
    assert env._repr_svg_() == svg
    arr_env = make(env_id, render_mode="rgb_array", render_observer=1)
    arr_env.reset(seed=2)
    arr = arr_env.render()
    assert isinstance(arr, np.ndarray) and arr.dtype == np.uint8 and arr.shape[2] == 3
    assert np.array_equal(arr, arr_env.picture(1).rgb_array())
    # a finished game still renders; "current" is then the omniscient view
    rng = np.random.default_rng(0)
    while not env._over:
        env.step(int(rng.choice(env.legal_actions())))
    assert env.render() == env.picture(None, "dark").svg


@pytest.mark.parametrize("env_id", DRAWN)
def test_pettingzoo_render_test(env_id: str, capsys) -> None:
    """PettingZoo's own ``render_test`` over every mode in the env's metadata."""
    from pettingzoo.test import render_test

    def env_fn(render_mode: str | None = None) -> object:
        return make(env_id, render_mode=render_mode)

    assert {"svg", "rgb_array"} <= set(env_fn("svg").metadata["render_modes"])
    render_test(env_fn, custom_tests={"svg": lambda s: isinstance(s, str) and
                                      s.startswith("<svg")})


def test_render_options_are_checked() -> None:
    for bad in (2, -1, "player_2", "everyone", True, 1.5):
        with pytest.raises(OptionError, match="render_observer"):
            make("slide_v0", render_mode="svg", render_observer=bad)
    for bad in ("blue", None, 3):
        with pytest.raises(OptionError, match="theme"):
            make("slide_v0", render_mode="svg", render_theme=bad)
    with pytest.raises(OptionError, match="render_mode"):
        make("slide_v0", render_mode="png")
    env = make("slide_v0", render_mode="rgb_array")
    with pytest.raises(ResetNeededError):
        env.render()
    assert env._repr_svg_() is None  # Jupyter falls back to the text repr
    env.reset(seed=0)
    with pytest.raises(OptionError, match="observer"):
        env.picture(5)
    with pytest.raises(OptionError, match="theme"):
        env.picture(None, "sepia")
    assert env.picture("player_1").svg == env.picture(1).svg
    assert env.picture("current").svg == env.picture(0).svg
    quiet = make("slide_v0")
    quiet.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert quiet.render() is None
    assert "svg" in env.metadata["render_modes"] and "rgb_array" in env.metadata["render_modes"]
    assert env.metadata["render_fps"] > 0  # video recorders read it


def test_a_game_without_a_viewer_fails_clearly() -> None:
    """A game whose ``view`` module has text only (no ``draw``): the picture modes are refused
    by name, the text works."""
    import types

    from toy_cards.env import ToyEnv
    from toy_cards.game import ToyGame
    from toy_cards.view import render

    text_only = types.ModuleType("text_only_view")
    text_only.render = render
    game = type("TextOnlyGame", (ToyGame,), {"view": text_only})
    cls = type("TextOnlyEnv", (ToyEnv,), {"game_class": game})
    with pytest.raises(NoViewerError, match="has no viewer"):
        cls(render_mode="svg")
    env = cls(render_mode="ansi")
    assert env.metadata["render_modes"] == ["ansi", "human"]  # what it can do
    env.reset(seed=0)
    assert env._repr_svg_() is None and "seat 0" in env.render()
    with pytest.raises(OptionError, match="has no viewer"):
        env.picture()


def test_the_parallel_env_renders_each_window() -> None:
    cls = env_class("op_glad_ijs_v0")
    env = cls.parallel_env(render_mode="rgb_array", render_observer=0, max_turned=3)
    obs, _ = env.reset(seed=4)
    frames = [env.render()]
    rng = np.random.default_rng(0)
    while env.agents and len(frames) < 6:
        obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(o["action_mask"])))
                            for a, o in obs.items()})
        frames.append(env.render())
    assert len({f.shape for f in frames}) == 1 and frames[0].dtype == np.uint8
    assert any(not np.array_equal(frames[0], f) for f in frames[1:])
    svg_env = cls.parallel_env(render_mode="svg")
    svg_env.reset(seed=4)
    assert svg_env.render() == svg_env.picture(None).svg


def test_pettingzoo_wrappers_pass_frames_through() -> None:
    """What video recording sees: PettingZoo's wrappers forward ``render()``'s array."""
    from pettingzoo.utils import wrappers
    from pettingzoo.utils.conversions import parallel_to_aec

    env = wrappers.OrderEnforcingWrapper(make_raw("slide_v0", render_mode="rgb_array"))
    env.reset(seed=0)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.ndim == 3 and frame.dtype == np.uint8
    assert np.array_equal(frame, env.unwrapped.picture(None).rgb_array())
    aec = parallel_to_aec(env_class("op_glad_ijs_v0").parallel_env(render_mode="rgb_array"))
    aec.reset(seed=0)
    frame = aec.render()
    assert isinstance(frame, np.ndarray) and frame.ndim == 3 and frame.dtype == np.uint8


def test_draw_primitives() -> None:
    svg = draw.Svg(300, 120, draw.theme("light"))
    for i, s in enumerate(draw.SUITS):
        svg.suit(20 + 30 * i, 20, 16, s)
    svg.playing_card(150, 10, 40, 56, "10", "H")
    svg.back_stack(200, 10, 40, 56, 12, label="draw")
    svg.badge(260, 100, "you")
    svg.star(280, 20, 8, "#e8a317")
    svg.title_bar("t", ["a", "b"], right="r")
    ET.fromstring(svg.to_string())
    with pytest.raises(ValueError, match="suit"):
        svg.suit(0, 0, 10, "X")
    assert draw.fan_offsets(3, 500, 40, 5) == [0, 45, 90]
    xs = draw.fan_offsets(20, 200, 40)
    assert xs[0] == 0 and abs(xs[-1] + 40 - 200) < 1e-9
    assert draw.mix("#000000", "#ffffff", 0.5) == "#808080"
    assert draw.view_note({"observer": 2}) == "player_2's view"
