"""Fuzzing the doors for user data: state dicts, decks and options of every game and variant,
agent specs and arena results files.

Mutation strategies (hypothesis, driven through ``draw``) start from valid data -- state dicts
of random positions (random play from random seeds, finished games included, sometimes an
observer's view) and each game's full default options with its deck spelled out as data -- and
damage them: wrong types, missing and extra keys, out-of-range and huge integers, floats,
NaN, inf, bools for ints, negative counts, duplicated, moved or missing cards, wrong lengths,
other phases and seats, all of it also deep inside nested lists. The strategies are in
``fuzz_mutations.py``; the valid data they start from and the plausible values they draw (the
default decks as data, random decks, header and option values) in ``fuzz_inputs.py``.

The pass functions state the contract:

* a state dict is either rejected with a *precise* :class:`StateDictError` (not one of the
  loader's safety-net wrappers around a stray ``TypeError``/``KeyError``...) and the env
  keeps its old state (``card_envs.testing.snapshot``), or accepted, and then
  ``check_state`` holds, the dict round-trips, and random play to the end runs (masks
  non-empty while running, observations inside the observation space for every seat,
  bounded step count);
* a deck / option set is either rejected with :class:`OptionError` at env creation, or
  accepted, and then whole random games run with ``check_state`` holding along the way.

* an agent spec (random names, parameter names and values: each parameter's range ends and
  one past them, NaN, infinities, huge integers, unicode, nested brackets, paths) is either
  refused by ``check_spec`` with a short :class:`OptionError`, or accepted within the caps a
  server sets, and then the agent is built and plays a legal move (compiled search included);
* a real results file, mutated, is either refused by ``ArenaResult.from_json`` with a precise
  :class:`StateDictError`, or accepted, and then its run settings are game options only and a
  small run reruns with every replay inside the folder the caller named.

``transplant_sweep`` is the systematic complement of the random mutations: each top-level
field of a position replaced by the same field of another position (of the same phase or
not), one at a time -- every value valid, the whole inconsistent in exactly one place.

``python tests/support/fuzz.py --examples N`` prints the accepted / rejected counts per game and
variant; ``--boundscheck`` (run under ``NUMBA_BOUNDSCHECK=1`` with a fresh ``NUMBA_CACHE_DIR``,
see ``tests/core/test_boundscheck.py``) first proves that out-of-bounds indexing raises in this very
process, then runs random play, the batched engine and the fuzz passes.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, run as a script
import card_envs  # noqa: E402
import conftest  # noqa: E402, F401  (every test folder importable; registers the toy game)
from card_envs import OptionError, StateDictError  # noqa: E402
from card_envs.core import kernels as K  # noqa: E402
from card_envs.testing import Case, play_steps, snapshot  # noqa: E402
from fuzz_inputs import full_options, header_values, option_values, random_deck  # noqa: E402
from fuzz_mutations import Draw, mutate  # noqa: E402
from test_kit import CASES  # noqa: E402

LAST_LOG = ""  # what the last example did (for collected failures)


def _log(text: str) -> None:
    global LAST_LOG
    LAST_LOG = text
    note(text)


# --- the contract ----------------------------------------------------------------------------
def check_precise(e: StateDictError) -> None:
    """A rejection must name the problem: not a safety-net wrapper around a stray
    TypeError / KeyError / IndexError / OverflowError... (an OptionError of the dict's
    options is precise)."""
    cause = e.__cause__
    if cause is not None and not isinstance(cause, OptionError):
        raise AssertionError(f"imprecise StateDictError (the loader's safety net caught a "
                             f"{type(cause).__name__}): {e}") from e


def play_checked(env: Any, rnd: random.Random, max_steps: int, require_end: bool = True,
                 stride: int = 25, dense: int = 30) -> int:
    """Random play from ``env``'s position with the invariants checked: ``check_state``
    (every step for the first ``dense`` steps, then every ``stride``-th, and at the end),
    every seat's observation inside its space, a non-empty mask for the seat to act (equal to
    ``legal_actions``), zero masks for the others. Returns the steps played."""
    game = env.game
    space = env.observation_space(env.possible_agents[0])
    steps = 0
    while True:
        state = env.state_array
        if steps < dense or steps % stride == 0 or state[K.DONE]:
            game.check_state(state)
        for agent in env.possible_agents:
            obs = env.observe(agent)
            assert space.contains(obs), f"{agent}'s observation outside its space " \
                f"after {steps} steps: {_outside(space, obs['observation'])}"
            if agent != env.agent_selection or state[K.DONE]:
                assert not obs["action_mask"].any(), f"{agent} has legal actions off turn"
        if state[K.DONE]:
            break
        if steps >= max_steps:
            assert not require_end, f"game not over after {max_steps} steps"
            return steps
        mask = env.observe(env.agent_selection)["action_mask"]
        legal = np.flatnonzero(mask).tolist()
        assert legal, f"empty action mask while the game runs (after {steps} steps, phase " \
            f"{game.phase_name(state)!r})"
        assert legal == game.legal_actions(state)
        env.step(rnd.choice(legal))
        steps += 1
    game.outcome(env.state_array)
    assert all(env.terminations.values()) or all(env.truncations.values())
    return steps


def _outside(space: Any, obs: np.ndarray) -> str:
    box = space["observation"]
    bad = np.flatnonzero((obs < box.low) | (obs > box.high))[:5].tolist()
    return f"entries {bad}: {obs[bad].tolist()} not in {box.low[bad].tolist()}.." \
           f"{box.high[bad].tolist()}"


def round_trip(env: Any) -> None:
    """The env's state dict survives JSON and loading into a clone, unchanged."""
    d = env.state_dict()
    twin = env.clone()
    twin.load_state_dict(json.loads(json.dumps(d)))
    assert twin.state_dict() == d, "state dict changed by a JSON round trip"


def try_load(env: Any, d: Any, rnd: random.Random, max_steps: int) -> str:
    """Load ``d`` into ``env``; ``"rejected"`` (precise StateDictError, env unchanged) or
    ``"accepted"`` (consistent, round-trips, plays to the end)."""
    before, given_dict = snapshot(env), repr(d)
    try:
        env.load_state_dict(d)
    except StateDictError as e:
        assert snapshot(env) == before, "a rejected state dict changed the env"
        check_precise(e)
        return "rejected"
    finally:
        assert repr(d) == given_dict, "load_state_dict changed the dict it was given"
    env.game.check_state(env.state_array)
    round_trip(env)
    play_checked(env, rnd, max_steps)
    round_trip(env)
    return "accepted"


# --- state dicts ------------------------------------------------------------------------------
_ENVS: dict[tuple[str, str], Any] = {}


def _env(case: Case, role: str) -> Any:
    """One cached raw env per case and role (built once: configuring a game costs)."""
    key = (case.id, role)
    if key not in _ENVS:
        _ENVS[key] = case.raw()
    return _ENVS[key]


STEPS_BEFORE = st.one_of(st.integers(0, 12), st.integers(0, 300), st.integers(0, 3000),
                         st.just(10**7))
MAX_STEPS = 60_000  # a game from any accepted position ends within this many random steps


def state_dict_example(case: Case, draw: Draw) -> str:
    """One fuzz example: a random position's state dict, mutated, loaded into another env."""
    src, dst = _env(case, "src"), _env(case, "dst")
    seed = draw(st.integers(0, 2**20))
    src.reset(seed=seed)
    before = play_steps(src, random.Random(seed), draw(STEPS_BEFORE))
    observer = None
    if draw(st.integers(0, 9)) == 0:
        observer = draw(st.integers(0, src.game.num_players - 1))
    base = json.loads(json.dumps(src.state_dict(observer)))
    same_phase = draw(st.booleans())  # a donor in the same phase: deeper inconsistencies
    for _ in range(12 if same_phase else 1):
        seed2 = draw(st.integers(0, 2**20))
        src.reset(seed=seed2)
        before2 = play_steps(src, random.Random(seed2), draw(STEPS_BEFORE))
        if src.state_dict()["phase"] == base["phase"]:
            break
    values = {**header_values(src.game), "__donor__": [src.state_dict()]}
    bad, log = mutate(draw, base, values)
    _log(f"seed {seed}, {before} steps, observer {observer}, donor seed {seed2} after "
         f"{before2} steps, mutations: {log}")
    dst.reset(seed=seed + 1)
    play_steps(dst, random.Random(seed + 1), draw(st.integers(0, 10)))
    return try_load(dst, bad, random.Random(seed), MAX_STEPS)


def positions_by_phase(case: Case, games: int, seed: int, per_game: int = 200
                       ) -> dict[str, list[dict[str, Any]]]:
    """State dicts of the positions of ``games`` random games (at most ``per_game`` of each,
    evenly spread), grouped by phase."""
    env = _env(case, "src")
    out: dict[str, list[dict[str, Any]]] = {}
    for g in range(games):
        env.reset(seed=seed + g)
        rnd = random.Random(seed + g)
        game = [json.loads(json.dumps(env.state_dict()))]
        while not env.state_array[K.DONE]:
            play_steps(env, rnd, 1)
            game.append(json.loads(json.dumps(env.state_dict())))
        for d in game[::max(1, len(game) // per_game)]:
            out.setdefault(d["phase"], []).append(d)
    return out


def transplant_sweep(case: Case, pairs: int, seed: int = 0, games: int = 3,
                     counts: Counter | None = None, failures: list[str] | None = None) -> None:
    """Every top-level key, one at a time, taken from another position of the same phase
    (``pairs`` pairs per phase) or of any phase (as many again): each value valid, the whole
    inconsistent in one field. Each dict must be rejected or accepted as ``try_load`` says."""
    by_phase = positions_by_phase(case, games, seed)
    every = [d for ds in by_phase.values() for d in ds]
    rnd = random.Random(seed)
    dst = _env(case, "dst")
    for phase in sorted(by_phase):
        for i in range(2 * pairs):
            a = rnd.choice(by_phase[phase])
            b = rnd.choice(by_phase[phase] if i < pairs else every)
            for k in sorted(a):
                if k in ("game", "version", "options") or a[k] == b[k]:
                    continue
                bad = {**a, k: copy.deepcopy(b[k])}
                s = rnd.randrange(2**20)
                dst.reset(seed=s)
                try:
                    outcome = try_load(dst, bad, random.Random(s), MAX_STEPS)
                except Exception as e:
                    if failures is None:
                        raise AssertionError(f"{case.id}: phase {phase!r} dict with {k!r} of "
                                             f"another position: {type(e).__name__}: {e}") from e
                    outcome = "failed"
                    failures.append(f"{case.id} transplant: {type(e).__name__}: {e}\n    "
                                    f"{phase} <- {k}: {json.dumps(bad)[:3000]}")
                if counts is not None:
                    counts[outcome] += 1


# --- decks and options -------------------------------------------------------------------------
OPTION_GAMES = 2  # whole random games played with an accepted deck / option set
OPTION_MAX_STEPS = 4000  # per game (a max_turned of 10**6 would run for millions of steps)


def options_example(case: Case, draw: Draw, games: int = OPTION_GAMES) -> str:
    """One fuzz example: the case's full options (deck as data), mutated; the env is either
    refused with OptionError or plays ``games`` whole random games with the checks on."""
    base = full_options(case)
    if "deck" in base and draw(st.booleans()):
        base["deck"] = random_deck(draw, case.env_id)
        if draw(st.booleans()):  # the generated deck as it is
            base = {k: v for k, v in base.items() if k != "deck"} | {"deck": base["deck"]}
            bad, log = base, ["random deck"]
        else:
            bad, log = mutate(draw, base, option_values(case))
    else:
        bad, log = mutate(draw, base, option_values(case))
    bad = {k: v for k, v in bad.items() if isinstance(k, str)}  # **kwargs need str keys
    _log(f"option mutations: {log}")
    try:
        env = card_envs.make_raw(case.env_id, **bad)
    except OptionError:
        return "rejected"
    seed = draw(st.integers(0, 2**20))
    for g in range(games):
        env.reset(seed=seed + g)
        play_checked(env, random.Random(seed + g), OPTION_MAX_STEPS, require_end=False)
    round_trip(env)
    return "accepted"


# --- agent specs ----------------------------------------------------------------------------------
#: caps for accepted specs (as a server sets them), so that accepted agents play a move quickly
SPEC_LIMITS = {"ms": 20, "iterations": 300, "max_nodes": 2**12, "determinizations": 8}
SPEC_NAMES = ("mcts", "ismcts", "search", "heuristic", "random", "ppo", "rllib", " MCTS ",
              "mcts2", "", "\u00fc", "mcts\x00", "heuristic:")
SPEC_WORDS = ("nan", "NaN", "inf", "-inf", "1e999", "-1e999", "1e-999", "0", "-0.0", "1",
              "-1", "2", "0.5", "True", "False", "None", "'x'", "\"\"", "''", "10**9",
              "0x10", "1_000", "1j", "b'x'", "[1]", "(1, 2)", "{1: 2}", "{1}", "[" * 300,
              "(" * 50 + ")" * 50, "9" * 5000, str(2**63), str(-(2**63)), str(2**64),
              "\u00e9\u00e9", "\U0001f600", "/etc/passwd", "../model.zip", "=", "a=b")
BUDGETS = ("iterations", "ms", "max_nodes", "determinizations")


def spec_text(draw: Draw) -> str:
    """A random agent spec: a name (real, near-real or odd), then parameters whose names are
    declared ones or typos, whose values are each parameter's range ends and one past them,
    NaN, infinities, huge integers, unicode, nested brackets, paths..."""
    from card_envs.agents.params import class_params
    from card_envs.agents.search import SearchAgent

    declared = class_params(SearchAgent)
    good = draw(st.integers(0, 9)) < 6  # mostly well-formed: accepted ones reach the kernels
    name = draw(st.sampled_from(("mcts", "ismcts", "search", "random", "heuristic") if good
                                else SPEC_NAMES))
    parts = []
    if draw(st.integers(0, 9)) == 0:  # a bare first value: a path
        parts.append(draw(st.sampled_from(("model.zip", "/etc/passwd", "x" * 2000, "\u00e9"))))
    for _ in range(draw(st.integers(0, 4))):
        keys = tuple(declared) if good else (*declared, "miss_rate", "path", "deterministic",
                                              "module", "model", "iteration", "C", "1x", "",
                                              "k\u00e9")
        key = draw(st.sampled_from(keys))
        p = declared.get(key)
        if p is not None and p.kind in ("int", "float") and (good or draw(st.booleans())):
            lo, hi = p.lo, min(p.hi, SPEC_LIMITS.get(key, p.hi))
            ends = (lo, hi) if good else (lo, hi, lo - 1, hi + 1)
            if p.kind == "int":
                value = draw(st.one_of(st.sampled_from(ends), st.integers(int(lo), int(hi))))
            else:
                value = draw(st.one_of(st.sampled_from(ends), st.floats(lo, hi)))
            value = repr(value)
        else:
            value = draw(st.sampled_from(SPEC_WORDS))
        parts.append(f"{key}={value}")
    sep = draw(st.sampled_from((",", ",", ";", "+", ", ")))
    return name + (":" + sep.join(parts) if parts or draw(st.booleans()) else "")


def spec_example(case: Case, draw: Draw) -> str:
    """One fuzz example: a random spec is refused by ``check_spec`` with an ``OptionError``
    (a short message), or accepted within :data:`SPEC_LIMITS`, built, and plays a legal move
    from a random position (compiled search included: under ``--boundscheck`` an
    out-of-bounds access fails the example)."""
    from card_envs.agents.registry import check_spec, make_agent
    from card_envs.ui.specs import split_agents

    text = spec_text(draw)
    specs = split_agents(text) or [text]
    _log(f"spec {text!r}")
    out = "rejected"
    for spec in specs:
        try:
            cls, name, params = check_spec(spec, case.env_id, limits=SPEC_LIMITS,
                                           allow_files=False)
        except OptionError as e:
            assert 0 < len(str(e)) < 2500, f"an error message of {len(str(e))} characters"
            continue
        assert all(params.get(k) is None or params[k] <= SPEC_LIMITS[k] for k in BUDGETS
                   if k in params)
        if name in ("ppo", "rllib"):  # trained agents load torch models: checked only
            out = "accepted"
            continue
        if "iterations" not in params and "ms" not in params and name not in ("random",
                                                                                "heuristic"):
            spec += ",iterations=50"  # the default budget (1000) is slow under boundscheck
        env = _env(case, "src")
        seed = draw(st.integers(0, 2**20))
        env.reset(seed=seed)
        play_steps(env, random.Random(seed), draw(st.integers(0, 40)))
        if env.state_array[K.DONE]:
            env.reset(seed=seed)
        try:
            agent = make_agent(spec, case.env_id, seed=seed, **env.game.options)
        except OptionError as e:  # e.g. a heuristic without the parameter in this game
            assert 0 < len(str(e)) < 2500
            continue
        action = agent.act_env(env)
        assert action in env.legal_actions(), (spec, action)
        out = "accepted"
    return out


# --- results files -------------------------------------------------------------------------------
_RESULTS: dict[str, dict[str, Any]] = {}


def result_base(case: Case) -> dict[str, Any]:
    """A real results dict of a tiny run of ``case`` (cached): 2 games, random vs the pool."""
    from card_envs.arena import run_arena

    if case.id not in _RESULTS:
        env = _env(case, "src")
        pool = ["random", "heuristic" if card_envs.manifest(case.env_id).heuristic else "random",
                "mcts:iterations=5"]
        res = run_arena(case.env_id, pool[:env.game.num_players + 1], env.game.num_players,
                        progress=False, **{k: v for k, v in case.options.items()
                                          if k != "num_players"},
                        num_players=env.game.num_players)
        _RESULTS[case.id] = json.loads(json.dumps(res.to_json()))
    return copy.deepcopy(_RESULTS[case.id])


def result_values(base: dict[str, Any]) -> dict[str, list]:
    """Plausible (right type, maybe wrong) values of a results file's top-level keys."""
    return {
        "env_id": ["slide_v0", "isflak_v0", "../x", "", "SLIDE_V0"],
        "num_players": [0, 1, 2, 3, 8, 9, 2**63],
        "games": [0, 1, 2, 4, 10**7, 10**7 + 1, -1],
        "seed": [0, -1, 2**63, 2**64 - 1, 2**64],
        "workers": [0, 1, 2, 4096, 4097],
        "agent_specs": [["random"], ["mcts:c=nan", "random"], ["ppo:/etc/passwd"],
                        ["random", None], ["mcts:iterations=10**9"], [], ["grandmaster"]],
        "game_options": [{}, {"agents": ["random"]}, {"replays": "/tmp"}, {"num_players": 2},
                         {"start_player": "random"}, {"deck": "/etc/passwd"},
                         {"reward_mode": "points"}, {"max_turned": 3}],
        "options": [base["options"], {}, {"deck": "/etc/passwd"}],
        "__donor__": [base],
    }


def results_example(case: Case, draw: Draw) -> str:
    """One fuzz example: a real results dict, mutated, is refused by ``from_json`` with a
    precise, short ``StateDictError``, or accepted; then it reruns (small runs only) with
    every replay inside the folder the caller named."""
    import tempfile

    from card_envs.arena import ArenaResult, rerun

    base = result_base(case)
    bad, log = mutate(draw, base, result_values(base))
    _log(f"results mutations: {log}")
    given_dict = repr(bad)
    try:
        res = ArenaResult.from_json(bad)
    except StateDictError as e:
        check_precise(e)
        assert len(str(e)) < 2500, f"an error message of {len(str(e))} characters"
        return "rejected"
    finally:
        assert repr(bad) == given_dict, "from_json changed the dict it was given"
    if None in res.agent_specs:  # a run of agent instances: readable, not rerunnable
        try:
            _ = res.run_args
        except ValueError as e:
            assert "agent instances" in str(e)
            return "accepted"
        raise AssertionError("run_args of a run with agent instances")
    args = res.run_args
    assert set(args) - {"env_id", "agents", "games", "num_players", "seed"} <= \
        set(card_envs.env_class(res.env_id).game_class.option_specs())
    if res.games * max(1, len(res.lineups)) <= 8 and res.games <= 8:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "replays")
            try:
                again = rerun(res, replays=out)
            except OptionError as e:  # model files named by the file: refused
                assert "allow_model_files" in str(e)
                return "accepted"
            assert again.total_games == res.games * len(again.lineups)
            for root, _, files in os.walk(tmp):
                assert not files or os.path.commonpath([root, out]) == out
    return "accepted"


# --- hypothesis drivers --------------------------------------------------------------------------
KINDS: dict[str, Callable[[Case, Draw], str]] = {"state": state_dict_example,
                                                  "options": options_example,
                                                  "spec": spec_example,
                                                  "results": results_example}


def fuzz_test(case: Case, kind: str, examples: int, counts: Counter | None = None,
              cli: bool = False, failures: list[str] | None = None) -> Callable[[], None]:
    """A hypothesis test running ``examples`` examples of ``kind`` ("state" / "options") on
    ``case``; outcomes are tallied in ``counts``. ``cli``: no example database, derandomized
    (reproducible counts). ``failures``: collect failing examples there (and count them as
    "failed") instead of stopping at the first."""
    example = KINDS[kind]
    # no "explain" phase: its tracer makes these examples (whole games) crawl; the CLI reports
    # a failure as found, without shrinking it
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([] if cli else [Phase.shrink])
    extra: dict[str, Any] = {"database": None, "derandomize": True} if cli else {}

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck),
              phases=phases, **extra)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        if failures is None:
            outcome = example(case, data.draw)
        else:
            try:
                outcome = example(case, data.draw)
            except Exception as e:
                outcome = "failed"
                failures.append(f"{case.id} {kind}: {type(e).__name__}: {e}\n    {LAST_LOG}")
        if counts is not None:
            counts[outcome] += 1

    return run


def random_play_pass(case: Case, games: int, seed: int = 0) -> None:
    """Whole random games from fresh deals with every check of ``play_checked`` dense."""
    env = case.raw()
    for g in range(games):
        env.reset(seed=seed + g)
        play_checked(env, random.Random(seed + g), MAX_STEPS, stride=1)


def vector_pass(case: Case, num_envs: int, steps: int) -> None:
    """The batched engine: ``steps`` steps of random legal actions (auto-resets included).
    Fewer than ``vector.SERIAL_BELOW`` games run the serial driver: the one numba can bounds
    check (it neither checks nor raises inside ``prange`` loops)."""
    vec = card_envs.vector.make(case.env_id, num_envs=num_envs, seed=3, **case.options)
    for _ in range(steps):
        vec.step(vec.sample_actions())
        assert (vec.action_masks.sum(axis=1) >= 1).all()


# --- bounds checking ------------------------------------------------------------------------------
def prove_boundscheck() -> list[str]:
    """Show that this process runs numba with bounds checks: a kernel defined here and a
    card_envs kernel from the on-disk cache must both raise IndexError out of bounds."""
    import numba
    from numba import njit

    lines = [f"NUMBA_BOUNDSCHECK={numba.config.BOUNDSCHECK} "
             f"NUMBA_CACHE_DIR={numba.config.CACHE_DIR}"]
    if not numba.config.BOUNDSCHECK:
        raise SystemExit("numba runs without bounds checks (set NUMBA_BOUNDSCHECK=1)")
    if numba.config.CACHE_DIR != os.environ.get("NUMBA_CACHE_DIR"):
        raise SystemExit("the numba cache is not the NUMBA_CACHE_DIR given")

    @njit
    def out_of_bounds(a: np.ndarray, i: int) -> int:
        return a[i]

    for name, call in (("local kernel", lambda: out_of_bounds(np.zeros(3, np.int32), 3)),
                       ("card_envs kernel", lambda: K.rng_next(np.zeros(1, np.int32)))):
        try:
            call()
        except IndexError as e:
            lines.append(f"{name}: IndexError ({e}): bounds checks are on")
        else:
            raise SystemExit(f"{name} read out of bounds without IndexError: unchecked code")
    return lines


# --- command line ---------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=100, help="state-dict examples per case")
    ap.add_argument("--option-examples", type=int, default=None,
                    help="deck/option examples per case (default: --examples)")
    ap.add_argument("--spec-examples", type=int, default=0,
                    help="agent-spec examples per case (each accepted one plays a move)")
    ap.add_argument("--results-examples", type=int, default=0,
                    help="results-file examples per case (small accepted runs are rerun)")
    ap.add_argument("--pairs", type=int, default=0,
                    help="transplant sweep: position pairs per phase and case (0: skip)")
    ap.add_argument("--cases", default="", help="only cases whose id contains this")
    ap.add_argument("--boundscheck", action="store_true",
                    help="prove bounds checks are on, then also random play and the batched "
                         "engine")
    ap.add_argument("--games", type=int, default=2, help="random-play games per case")
    ap.add_argument("--vector-envs", type=int, default=4)
    ap.add_argument("--vector-steps", type=int, default=300)
    args = ap.parse_args(argv)
    n_opt = args.examples if args.option_examples is None else args.option_examples
    cases = [c for c in CASES if args.cases in c.id]
    failures = 0
    if args.boundscheck:
        for line in prove_boundscheck():
            print(line, flush=True)
    width = max(len(c.id) for c in cases)
    kinds = ("state", "options", "spec", "results", "transplant")
    print(f"{'case':{width}}  " + "  ".join(f"{k + ' acc':>14} {'rej':>5}" for k in kinds) +
          "   time")
    totals: dict[str, Counter] = {k: Counter() for k in kinds}
    for case in cases:
        t0 = time.time()
        counts: dict[str, Counter] = {k: Counter() for k in kinds}
        try:
            if args.boundscheck:
                random_play_pass(case, args.games)
                vector_pass(case, args.vector_envs, args.vector_steps)
            for kind, n in (("state", args.examples), ("options", n_opt),
                            ("spec", args.spec_examples), ("results", args.results_examples)):
                if n:
                    fuzz_test(case, kind, n, counts[kind], cli=True)()
            if args.pairs:
                transplant_sweep(case, args.pairs, seed=0, counts=counts["transplant"])
        except Exception:  # report every case, then fail
            failures += 1
            print(f"FAILED {case.id}:\n{traceback.format_exc()}", flush=True)
        for k in kinds:
            totals[k].update(counts[k])
        print(f"{case.id:{width}}  " + "  ".join(
            f"{counts[k]['accepted']:14} {counts[k]['rejected']:5}" for k in kinds) +
            f"  {time.time() - t0:5.1f}s", flush=True)
    print(f"{'total':{width}}  " + "  ".join(
        f"{totals[k]['accepted']:14} {totals[k]['rejected']:5}" for k in kinds))
    if failures:
        print(f"{failures} case(s) FAILED")
        return 1
    print("all passes OK" + (" (bounds-checked)" if args.boundscheck else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
