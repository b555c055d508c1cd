"""Replays (issue 18, item 2): the env records its seed (or start state) and every applied
action; ``card_envs.core.replay`` plays them back to the same trajectory, and rejects tampered
files with precise errors."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from card_envs.core import replay as R
from card_envs.core.errors import IllegalActionError, OptionError, StateDictError
from card_envs.core.registry import ENV_IDS, env_class, make, make_raw, manifest
from card_envs.if_it_fits.parts.deck import load_default


def _trajectory(env: object) -> tuple:
    """What the agents see now: every agent's observation and mask, rewards, flags."""
    obs = tuple((a, env.observe(a)["observation"].tobytes(),
                 env.observe(a)["action_mask"].tobytes()) for a in env.agents)
    return (env.agent_selection, obs, dict(env.rewards), dict(env._cumulative_rewards),
            dict(env.terminations), dict(env.truncations))


def _play(env: object, rng: np.random.Generator, limit: int | None = None) -> list:
    """Random legal moves until the end (or ``limit`` moves); the trajectory after each."""
    out = [_trajectory(env)]
    while not env._over and (limit is None or len(out) <= limit):
        env.step(int(rng.choice(env.legal_actions())))
        out.append(_trajectory(env))
    return out


def _options(env_id: str) -> list[dict]:
    cases = list(manifest(env_id).test_cases)
    return [c for c in cases if "max_turned" in c][:1] + [cases[0]] \
        if env_id == "op_glad_ijs_v0" else cases[:2]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_replay_gives_the_same_trajectory(env_id: str, tmp_path) -> None:
    for k, options in enumerate(_options(env_id)):
        env = make(env_id, **options)
        env.reset(seed=100 + k)
        trail = _play(env, np.random.default_rng(k))
        d = env.replay(players=[f"agent{i}" for i in range(env.game.num_players)])
        assert d["seed"] == 100 + k and d["start"] is None and d["env_id"] == env_id
        assert len(d["actions"]) == len(trail) - 1
        points, winners = env.game.outcome(env.state_array)
        assert d["result"]["points"] == list(points) and \
            d["result"]["winners"] == [bool(w) for w in winners]
        path = tmp_path / f"{env_id}-{k}.json"
        R.save(d, path)
        loaded = R.load(path)
        assert loaded == json.loads(json.dumps(d))
        got = [_trajectory(s.env) for s in R.iter_states(loaded)]
        assert got == trail
        back = R.play_back(loaded)
        assert back.state_dict() == env.state_dict()
        assert back.replay(players=d["players"]) == loaded


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_without_seed_records_the_start_state(env_id: str) -> None:
    env = make_raw(env_id)
    env.reset(seed=3)
    env.reset()  # continues the RNG: the deal is recorded as a state
    start = env.state_dict()
    trail = _play(env, np.random.default_rng(1), limit=40)
    d = env.replay()
    assert d["seed"] is None and d["start"] == start
    assert "result" not in d or env._over  # mid-game: no result yet
    assert [_trajectory(s.env) for s in R.iter_states(d)] == trail
    back = R.play_back(d)
    assert back.state_dict() == env.state_dict() and back.replay() == d


def test_mid_game_replays_and_continues() -> None:
    env = make_raw("slide_v0", num_players=3)
    env.reset(seed=5)
    _play(env, np.random.default_rng(0), limit=10)
    d = env.replay()
    assert len(d["actions"]) == 10 and "result" not in d
    back = R.play_back(d)
    assert back.state_dict() == env.state_dict()
    rng1, rng2 = np.random.default_rng(9), np.random.default_rng(9)
    assert _play(env, rng1) == _play(back, rng2)
    assert back.replay() == env.replay() and "result" in env.replay()
    env.reset(seed=6)
    assert env.replay()["actions"] == [] and env.replay()["seed"] == 6


def test_load_state_dict_clone_and_resample_start_their_own_record() -> None:
    env = make_raw("op_glad_ijs_v0", max_turned=30)
    env.reset(seed=1)
    _play(env, np.random.default_rng(0), limit=12)
    c = env.clone()
    assert c.replay() == env.replay()
    c.step(c.legal_actions()[0])
    assert len(c.replay()["actions"]) == 13 and len(env.replay()["actions"]) == 12
    r = env.resample(0, rng=3)
    assert r.replay()["start"] == r.state_dict() and r.replay()["actions"] == []
    other = make_raw("op_glad_ijs_v0", max_turned=30)
    other.load_state_dict(env.state_dict())
    d = other.replay()
    assert d["seed"] is None and d["start"] == env.state_dict()
    assert R.play_back(d).state_dict() == env.state_dict()


def test_the_parallel_env_records_windows_in_aec_order() -> None:
    cls = env_class("op_glad_ijs_v0")
    par = cls.parallel_env(num_players=3, max_turned=15)
    obs, _ = par.reset(seed=2)
    rng = np.random.default_rng(0)
    while par.agents:
        obs, *_ = par.step({a: int(rng.choice(np.flatnonzero(o["action_mask"])))
                            for a, o in obs.items()})
    d = par.replay()
    assert "result" in d
    back = R.play_back(d)
    assert back.state_dict() == par.state_dict() and back._over


def test_forfeits_are_recorded_and_replayed() -> None:
    env = make("slide_v0")
    env.reset(seed=0)
    env.step(env.legal_actions()[0])
    bad = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(bad)
    d = env.replay()
    assert d["forfeit"] == {"agents": ["player_1"], "actions": [bad]} and "result" not in d
    steps = list(R.iter_states(d, illegal_action="lose"))
    assert steps[-1].forfeit and steps[-1].seat == 1
    back = steps[-1].env
    assert back.rewards == env.rewards and back.infos == env.infos
    assert back.terminations == env.terminations and back.replay() == d
    legal = copy.deepcopy(d)
    first = make_raw("slide_v0")
    first.reset(seed=0)
    first.step(d["actions"][0])
    legal["forfeit"]["actions"] = [first.legal_actions()[0]]
    with pytest.raises(StateDictError, match="is legal"):
        R.play_back(legal)
    # a parallel window with two offenders
    cls = env_class("op_glad_ijs_v0")
    par = cls.parallel_env()
    obs, _ = par.reset(seed=1)
    acts = {a: int(np.flatnonzero(o["action_mask"] == 0)[0]) for a, o in obs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, rewards, *_ = par.step(acts)
    d = par.replay()
    assert d["forfeit"]["agents"] == ["player_0", "player_1"]
    back = R.play_back(d)
    assert back.rewards == rewards and back.infos["player_0"]["illegal_action"] == \
        ["player_0", "player_1"]


def _good() -> dict:
    env = make_raw("isflak_v0")
    env.reset(seed=4)
    _play(env, np.random.default_rng(0))
    return env.replay()


@pytest.mark.parametrize("change, error, match", [
    (lambda d: d.update(format="chess-pgn"), StateDictError, "not a card-envs replay"),
    (lambda d: d.update(format_version=2), StateDictError, "format_version 2"),
    (lambda d: d.update(env_id="poker_v0"), StateDictError, "unknown env id 'poker_v0'"),
    (lambda d: d.update(game_version="7"), StateDictError, "game version '7'"),
    (lambda d: d.update(options={"num_players": 99}), StateDictError, "replay options"),
    (lambda d: d.update(start={"game": "isflak"}), StateDictError, "exactly one of seed"),
    (lambda d: d.update(seed=-3), StateDictError, "non-negative"),
    (lambda d: d.update(seed=None, start={"game": "slide"}), StateDictError,
     "replay start state"),
    (lambda d: d["actions"].__setitem__(2, "up"), StateDictError, "action 2 must be an int"),
    (lambda d: d.pop("actions"), StateDictError, r"missing key\(s\) \['actions'\]"),
    (lambda d: d.update(comment="hi"), StateDictError, r"unknown key\(s\) \['comment'\]"),
    (lambda d: d["result"]["points"].reverse(), StateDictError, "differs from the replayed"),
    (lambda d: d.update(forfeit={"agents": [], "actions": []}), StateDictError,
     "result or a forfeit"),
    (lambda d: d["actions"].__setitem__(2, 226), IllegalActionError,
     r"replay action 2 \(226\) by player_0 is illegal"),
    (lambda d: d["actions"].append(d["actions"][-1]), IllegalActionError,
     r"replay action \d+ .*the game ended after"),
])
def test_tampered_replays_fail_precisely(change, error, match) -> None:
    d = _good()
    change(d)
    with pytest.raises(error, match=match):
        R.play_back(d)


def test_files_and_labels(tmp_path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(StateDictError, match="not a JSON replay"):
        R.load(path)
    with pytest.raises(StateDictError, match="JSON object"):
        R.check([1, 2])
    env = make_raw("slide_v0")
    env.reset(seed=0)
    with pytest.raises(OptionError, match="players"):
        env.replay(players=["one"])
    with pytest.raises(OptionError, match="game options"):
        R.play_back(env.replay(), num_players=3)
    back = R.play_back(env.replay(), render_mode="svg")
    assert back.render().startswith("<svg")
    d = env.replay()
    R.save(d, tmp_path / "g.json")
    text = (tmp_path / "g.json").read_text()
    assert text.count("\n") == len(d) + 2  # braces, and one top-level key per line


def _file_cases(tmp_path: Path) -> list[tuple[str, bytes, str]]:
    """Hostile replay files: (name, bytes, words of the one error they must give)."""
    text = json.dumps(_good())
    good = json.loads(text)
    iif = make_raw("if_it_fits_v0")
    iif.reset(seed=1)
    deck_file = tmp_path / "deck.json"
    deck_file.write_text(json.dumps(load_default()))

    def dump(**changes: object) -> bytes:
        return json.dumps({**good, **changes}).encode()

    return [
        ("latin1", text.replace('"isflak_v0"', '"isflak_v0 \u00e9"').encode("latin-1"),
         "not UTF-8 text"),
        ("digits", text.replace('"seed": 4', '"seed": ' + "9" * 5000).encode(),
         "an integer of 5000 digits (at most 40)"),
        ("deep", text.replace('"seed": 4', '"seed": ' + "[" * 5000 + "]" * 5000).encode(),
         "JSON nested too deeply"),
        ("nested", text.replace('"seed": 4', '"seed": ' + "[" * 500 + "]" * 500).encode(),
         f"replay nested deeper than {R.MAX_DEPTH} levels"),
        ("nan", text.replace('"seed": 4', '"seed": NaN').encode(), "NaN, which is not standard"),
        ("twice", text.replace('"seed": 4', '"seed": 4, "seed": 5').encode(),
         "the key 'seed' twice in one object"),
        ("env_arg", dump(options={**good["options"], "illegal_action": "lose"}),
         "replay options: isflak_v0: unknown option(s) ['illegal_action']"),
        ("options", dump(options=[1]), "options must be a mapping"),
        ("seed", dump(seed=2**64), "seed must be a non-negative integer below 2**64"),
        ("players", dump(players=["a", "b", "c"]), "players must be a list of 2 strings"),
        ("label", dump(players=["a", "b" * 5000]), "at most 1000 characters"),
        ("forfeits", json.dumps({k: v for k, v in good.items() if k != "result"} | {
            "forfeit": {"agents": ["player_0"] * 3, "actions": [0] * 3}}).encode(), "1 to 2"),
        ("deck_path", json.dumps(iif.replay() | {"options": {
            **json.loads(json.dumps(iif.game.options)), "deck": str(deck_file)}}).encode(),
         "the deck option must be given as data here, not as a file path"),
        ("deck_missing", json.dumps(iif.replay() | {"options": {
            "deck": str(tmp_path / "nothing.json")}}).encode(),
         "the deck option must be given as data here, not as a file path"),
    ]


def test_hostile_replay_files_give_one_clear_error(tmp_path: Path, capsys) -> None:
    """A replay file may come from anyone: every way it can be malformed is one
    StateDictError naming the file (the replay command prints it, no traceback)."""
    from card_envs.cli import main

    for name, data, words in _file_cases(tmp_path):
        path = tmp_path / f"{name}.json"
        path.write_bytes(data)
        with pytest.raises(StateDictError) as e:
            R.load(path)
        message = str(e.value)
        assert message.startswith(f"{path}: ") and words in message, (name, message[:300])
        assert len(message) < 500, (name, message[:300])
        capsys.readouterr()
        assert main(["replay", str(path), "-o", str(tmp_path / f"{name}.html")]) == 2
        err = capsys.readouterr().err
        assert err == f"card-envs: error: {message}\n" and "Traceback" not in err
        assert not (tmp_path / f"{name}.html").exists()


def test_replay_size_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = _good()
    path = tmp_path / "g.json"
    R.save(d, path)
    size = path.stat().st_size
    monkeypatch.setattr(R, "MAX_BYTES", size - 1)
    with pytest.raises(StateDictError, match=rf"{size} bytes, more than the {size - 1} allowed"):
        R.load(path)
    monkeypatch.setattr(R, "MAX_BYTES", size)
    assert R.load(path) == json.loads(json.dumps(d))
    monkeypatch.setattr(R, "MAX_ACTIONS", len(d["actions"]) - 1)
    with pytest.raises(StateDictError, match=f"more than the {len(d['actions']) - 1} allowed"):
        R.load(path)
    with pytest.raises(StateDictError, match="allowed"):  # in memory too
        R.play_back(d)


def test_the_limits_admit_the_longest_real_games() -> None:
    """The longest games the options allow: Op Glad IJs at 6 seats and max_turned=1000000.
    Measured on a cut-off game at max_turned=1000, scaled: they fit MAX_ACTIONS, and their
    file MAX_BYTES, with a margin."""
    env = make_raw("op_glad_ijs_v0", num_players=6)
    env.reset(seed=1)
    _play(env, np.random.default_rng(1))
    d = env.replay(players=["random"] * 6)
    assert d["result"]["truncated"]  # the cut-off ended it: 1000 turned cards
    actions = len(d["actions"]) * 1000  # at max_turned=1000000
    assert 1.2 * actions < R.MAX_ACTIONS
    per_action = len(json.dumps(d)) / len(d["actions"])
    assert 1.2 * R.MAX_ACTIONS * per_action < R.MAX_BYTES
