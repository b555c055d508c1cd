"""Agent parameters: every parameter of every agent is declared (kind, range) and checked
before anything is built, in the constructor and in the spec parser shared by the CLI, the
arena, the play server and the results-file loader."""

from __future__ import annotations

import math

import numpy as np
import pytest

import card_envs
from card_envs import OptionError
from card_envs.agents.params import check_params, class_params
from card_envs.agents.registry import (
    GENERIC,
    SEARCH_DEFAULT,
    TRAINED,
    check_spec,
    init_parameters,
    make_agent,
    parse_spec,
)
from card_envs.core.manifest import load
from card_envs.core.registry import env_ids, manifest


def agent_classes() -> list[type]:
    paths = {*GENERIC.values(), *TRAINED.values(), SEARCH_DEFAULT}
    for env_id in env_ids():
        m = manifest(env_id)
        paths |= {p for p in (m.heuristic, m.search) if p}
    return sorted((load(p) for p in paths), key=lambda c: c.__name__)


CLASSES = agent_classes()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_constructor_parameter_is_declared(cls: type) -> None:
    assert set(init_parameters(cls)) == set(class_params(cls)), cls


def _numeric(cls: type) -> list[tuple[str, object]]:
    return [(k, p) for k, p in class_params(cls).items() if p.kind in ("int", "float")]


BAD = [math.nan, math.inf, -math.inf, 10**40, -(10**40), True, False, "1", "nan", [1], None]


@pytest.mark.parametrize("cls", [c for c in CLASSES if _numeric(c)], ids=lambda c: c.__name__)
def test_numeric_parameters_refuse_nan_inf_huge_and_wrong_types(cls: type) -> None:
    for name, p in _numeric(cls):
        for value in BAD:
            if value is None and p.optional:
                continue
            with pytest.raises(OptionError, match=rf"{name} must be .* in \[") as e:
                check_params(cls, {name: value})
            assert len(str(e.value)) < 300
        # the closed range: both ends accepted, just outside refused
        assert check_params(cls, {name: p.lo})[name] == p.lo
        assert check_params(cls, {name: p.hi})[name] == p.hi
        step = 1 if p.kind == "int" else 1e-9 * max(1.0, abs(p.hi))
        for outside in (p.lo - step, p.hi + step):
            with pytest.raises(OptionError, match=name):
                check_params(cls, {name: outside})
        if p.kind == "int":
            with pytest.raises(OptionError, match=name):
                check_params(cls, {name: float(p.lo)})  # 1.0 is not an int
            assert check_params(cls, {name: np.int64(p.lo)})[name] == p.lo


def test_search_constructor_checks_before_building() -> None:
    from card_envs.agents.search import SearchAgent

    for kw in ({"c": math.nan}, {"points_weight": math.inf}, {"iterations": 10**12},
               {"ms": 0}, {"max_nodes": 2**40}, {"determinizations": 0}, {"horizon": -2}):
        with pytest.raises(OptionError, match=next(iter(kw))):
            SearchAgent("slide_v0", **kw)


def test_spec_values_are_scalars_and_bounded() -> None:
    assert parse_spec("mcts:c=0.5,iterations=7") == ("mcts", {"c": 0.5, "iterations": 7})
    assert parse_spec("ppo:runs/x.zip") == ("ppo", {"path": "runs/x.zip"})
    assert parse_spec("mcts:c=nan") == ("mcts", {"c": "nan"})  # text, refused by check_spec
    for spec, words in (("mcts:c=[1]", "parameter values are"),
                        ("mcts:c={'a': 1}", "parameter values are"),
                        ("mcts:c=(1, 2)", "key=value"),
                        ("mcts:c=1,c=2", "given twice"),
                        ("mcts:1c=2", "name as key"),
                        ("mcts:" + "x" * 2000, "at most 1000 characters"),
                        ("", "non-empty"),
                        ("mcts:c=" + "[" * 300, None)):
        with pytest.raises(OptionError, match=words):
            check_spec(spec, "slide_v0")
    with pytest.raises(OptionError, match="model"):  # a Python object cannot come from a spec
        check_spec("ppo:model=3", "slide_v0")


def test_limits_and_files() -> None:
    with pytest.raises(OptionError, match="ms is capped at 100 here, got 200"):
        check_spec("mcts:ms=200", "slide_v0", limits={"ms": 100})
    assert check_spec("mcts:ms=100", "slide_v0", limits={"ms": 100})[2] == {"ms": 100.0}
    with pytest.raises(OptionError, match="not allowed here"):
        check_spec("ppo:/etc/passwd", "slide_v0", allow_files=False)
    assert check_spec("ppo", "slide_v0", allow_files=False)[1] == "ppo"  # the baseline


@pytest.mark.parametrize("env_id", sorted(env_ids()))
def test_boundary_values_play_legal_moves(env_id: str) -> None:
    """The extremes of the accepted ranges run and return a legal move (never a crash)."""
    env = card_envs.make_raw(env_id)
    env.reset(seed=5)
    for spec in ("mcts:iterations=1", "mcts:c=0,iterations=20", "mcts:c=100,iterations=20",
                 "mcts:points_weight=100,iterations=20,horizon=0",
                 "mcts:ms=1,max_nodes=2,determinizations=1",
                 "mcts:widening=1000,anchor=1000,iterations=20"):
        a = make_agent(spec, env_id, seed=1)
        assert env.legal_actions().count(a.act_env(env)) == 1, spec
