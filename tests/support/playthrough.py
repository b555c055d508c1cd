"""Golden playthroughs (after OpenSpiel's integration_tests/playthroughs): one seeded game per
game variant, written as readable text to ``tests/playthroughs/<env_id>-<variant>.txt`` and
replayed by ``tests/core/test_playthroughs.py``.

A file is a header (env id, ``Game.version``, options, seed, how the actions were chosen) and
one block per step: the action(s) with ``env.action_to_str``, the full-view render after the
step (``env.game.render(state, None)``, lines right-stripped), the rewards and a short sha256
of every seat's observation and action mask; then the end (``infos``: points and winner).
The replay rebuilds the env from the header, plays the recorded actions, regenerates the text
and reports the first step block that differs. A behaviour change must bump the game's
``Game.version`` and be followed by ``make playthroughs``.

CLI::

    python tests/support/playthrough.py --write      # regenerate every file (make playthroughs)
    python tests/support/playthrough.py --check      # replay every file, report differences
    python tests/support/playthrough.py --check --only slide_v0-2p
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, run as a script
import card_envs  # noqa: E402
import conftest  # noqa: E402, F401  (registers the test-only toy game when run as a script)
from card_envs.core.errors import CardEnvError, IllegalActionError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DIR = ROOT / "tests" / "playthroughs"
HEX = 10  # hex digits of the per-seat observation and mask digests
REGENERATE = "make playthroughs"


@dataclasses.dataclass(frozen=True)
class Variant:
    """One golden playthrough: which env, how configured, the seed and the action policy."""

    env_id: str
    variant: str
    options: dict[str, Any]
    seed: int
    parallel: bool = False  # Op Glad IJs' ParallelEnv: one block per reaction window
    agent: str = ""  # an agent spec (card_envs.agents.make_agent) playing each seat, else random
    noise: float = 0.0  # with an agent: probability of a uniform random action instead
    note: str = ""

    @property
    def name(self) -> str:
        return f"{self.env_id}-{self.variant}"

    @property
    def path(self) -> Path:
        return DIR / f"{self.name}.txt"

    def policy_text(self) -> str:
        """How the generator chose the actions (the replay uses the recorded ones)."""
        rnd = f"r = random.Random({self.seed}); legal = the legal action ids, increasing"
        if not self.agent:
            return f"{rnd}; each action r.choice(legal) (uniform)"
        return (f"{rnd}; each action: r.choice(legal) if r.random() < {self.noise}, else the "
                f"seat's agent card_envs.agents.make_agent({self.agent!r}, env_id, "
                f"seed={AGENT_SEED}*{self.seed}+seat, **options).act(observation, mask)")


AGENT_SEED = 100


def _variants() -> list[Variant]:
    """Every playthrough the registered games' manifests declare."""
    return [Variant(m.env_id, p.name, dict(p.options), p.seed, parallel=p.parallel,
                    agent=p.agent, noise=p.noise, note=p.note)
            for m in card_envs.core.registry.manifests() for p in m.playthroughs]


_VARIANTS = _variants()
VARIANTS: dict[str, Variant] = {v.name: v for v in _VARIANTS}
assert len(VARIANTS) == len(_VARIANTS), "duplicate playthrough names"


# --- text ----------------------------------------------------------------------------------
def _short(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:HEX]


def _fmt_rewards(rewards: dict[str, float]) -> str:
    if not any(rewards.values()):
        return "rewards: all 0"
    return "rewards: " + ", ".join(f"{a} {r:+g}" for a, r in rewards.items())


def _seat_lines(obs: dict[str, dict[str, np.ndarray]]) -> list[str]:
    """One line per seat: sha256 prefix of its observation and of its action mask."""
    lines = []
    for agent, o in obs.items():
        mask = o["action_mask"]
        n = int(mask.sum())
        m = f"{_short(mask.tobytes())} ({n} legal)" if n else "- (not to act)"
        lines.append(f"seat {agent}  obs {_short(o['observation'].tobytes())}  mask {m}")
    return lines


def _render(env: Any) -> list[str]:
    return ["  " + line for line in env.game.render(env.state_array, None).split("\n")]


def _header(v: Variant, version: str) -> list[str]:
    api = "parallel (OpGladIJsEnv.parallel_env; one step = one reaction window, every " \
          "agent acts)" if v.parallel else "aec (card_envs.make_raw)"
    lines = [
        f"# Golden playthrough, replayed by tests/core/test_playthroughs.py. Regenerate with "
        f"`{REGENERATE}` after a behaviour change, which must bump the game's Game.version.",
        f"playthrough: {v.name}",
        f"env_id: {v.env_id}",
        f"version: {version}",
        f"api: {api}",
        f"options: {json.dumps(v.options)}",
        f"seed: {v.seed}  (env.reset(seed={v.seed}))",
        f"actions: {v.policy_text()}",
    ]
    if v.note:
        lines.append(f"note: {v.note}")
    lines.append("format: per step the action(s), the full-view render after it "
                 "(env.game.render(state, None)), rewards, then per seat sha256[:10] of its "
                 "observation and action mask")
    return [*lines, ""]


def _block(title: str, lines: list[str]) -> list[str]:
    return [f"== {title}", *lines, ""]


def _make_env(v: Variant) -> Any:
    if v.parallel:
        return card_envs.env_class(v.env_id).parallel_env(illegal_action="raise", **v.options)
    return card_envs.make_raw(v.env_id, **v.options)


Obs = dict[str, np.ndarray]  # {"observation": ..., "action_mask": ...}
# An action source: given the agent to act and its observation (parallel: every live agent's),
# the action(s) to play, or None to stop (a replay whose recorded actions have run out).
AecChooser = Callable[[str, Obs], int | None]
ParChooser = Callable[[dict[str, Obs]], dict[str, int] | None]


def _play_aec(v: Variant, choose: AecChooser) -> list[str]:
    env = _make_env(v)
    env.reset(seed=v.seed)
    out = _header(v, env.game.version)
    out += _block("reset", [*_render(env), *_seat_lines(_observe_all(env))])
    total = dict.fromkeys(env.possible_agents, 0.0)
    step = 0
    while not (any(env.terminations.values()) or any(env.truncations.values())):
        agent = env.agent_selection
        legal = env.legal_actions()
        action = choose(agent, env.observe(agent))
        if action is None:
            return out + _block(f"end: the game is not over after {step} steps", [])
        step += 1
        act = f"action: {agent} {action}  {_action_str(env, action)}  (of {len(legal)} legal)"
        try:
            env.step(action)
        except IllegalActionError as e:
            return out + _block(f"step {step}", [act, f"ILLEGAL: {e}"])
        for a, r in env.rewards.items():
            total[a] += r
        out += _block(f"step {step}", [act, *_render(env), _fmt_rewards(env.rewards),
                                       *_seat_lines(_observe_all(env))])
    how = "truncated" if any(env.truncations.values()) else "terminated"
    return out + _block(f"end: {how} after {step} steps",
                        [f"infos {a}: {json.dumps(env.infos[a], sort_keys=True)}"
                         for a in env.possible_agents]
                        + ["total " + _fmt_rewards(total)])


def _play_parallel(v: Variant, choose: ParChooser) -> list[str]:
    env = _make_env(v)
    obs, _ = env.reset(seed=v.seed)
    out = _header(v, env.game.version)
    out += _block("reset", [*_render(env), *_seat_lines(obs)])
    total = dict.fromkeys(env.possible_agents, 0.0)
    step, truncs, infos = 0, {}, {}
    while env.agents:
        legal = {a: np.flatnonzero(obs[a]["action_mask"]).tolist() for a in env.agents}
        actions = choose({a: obs[a] for a in env.agents})
        if actions is None:
            return out + _block(f"end: the game is not over after {step} steps", [])
        step += 1
        acts = [f"action: {a} {x}  {_action_str(env, x)}  (of {len(legal.get(a, []))} legal)"
                for a, x in actions.items()]
        try:
            obs, rewards, terms, truncs, infos = env.step(actions)
        except IllegalActionError as e:
            return out + _block(f"step {step}", [*acts, f"ILLEGAL: {e}"])
        for a, r in rewards.items():
            total[a] += r
        out += _block(f"step {step}", [*acts, *_render(env), _fmt_rewards(rewards),
                                       *_seat_lines(obs)])
    how = "truncated" if any(truncs.values()) else "terminated"
    return out + _block(f"end: {how} after {step} steps",
                        [f"infos {a}: {json.dumps(infos[a], sort_keys=True)}"
                         for a in env.possible_agents]
                        + ["total " + _fmt_rewards(total)])


def _observe_all(env: Any) -> dict[str, dict[str, np.ndarray]]:
    return {a: env.observe(a) for a in env.possible_agents}


def _action_str(env: Any, action: int) -> str:
    try:
        return env.game.action_to_str(int(action))
    except Exception as e:  # an id the game no longer knows: show it, the diff explains
        return f"<no name: {type(e).__name__}>"


def _text(lines: list[str]) -> str:
    return "".join(line.rstrip() + "\n" for line in lines)


def generate(v: Variant) -> str:
    """The playthrough text of ``v``, actions chosen by its seeded policy."""
    rnd = random.Random(v.seed)
    agents: dict[str, Any] = {}
    if v.agent:
        from card_envs.agents import make_agent  # only the generator needs the agents

        n = card_envs.env_class(v.env_id).game_class(**v.options).num_players
        agents = {f"player_{i}": make_agent(v.agent, v.env_id, seed=AGENT_SEED * v.seed + i,
                                            **v.options) for i in range(n)}

    def pick(agent: str, obs: Obs) -> int:
        if v.agent and rnd.random() >= v.noise:
            return int(agents[agent].act(obs["observation"], obs["action_mask"]))
        return rnd.choice(np.flatnonzero(obs["action_mask"]).tolist())

    if v.parallel:
        return _text(_play_parallel(v, lambda obs: {a: pick(a, o) for a, o in obs.items()}))
    return _text(_play_aec(v, pick))


# --- reading and replaying -----------------------------------------------------------------
def split_blocks(text: str) -> list[list[str]]:
    """The header block, then one block per ``== ...`` line (the reset, steps, the end)."""
    blocks: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line.startswith("== "):
            blocks.append([])
        blocks[-1].append(line)
    return blocks


def parse_header(block: list[str]) -> dict[str, str]:
    """``key: value`` lines of the header (comments skipped)."""
    out = {}
    for line in block:
        if line and not line.startswith("#") and ": " in line:
            key, value = line.split(": ", 1)
            out[key] = value
    return out


def recorded_actions(blocks: list[list[str]]) -> Iterator[dict[str, int]]:
    """Per step block, the recorded ``{agent: action}`` (the ``action:`` lines after the
    ``== step`` line)."""
    for block in blocks:
        if not block[0].startswith("== step "):
            continue
        acts = {}
        for line in block[1:]:
            if not line.startswith("action: "):
                break
            agent, action = line.split()[1:3]
            acts[agent] = int(action)
        yield acts


def variant_from_header(header: dict[str, str], like: Variant) -> Variant:
    """``like`` with the env id, options, seed and api the header records."""
    return dataclasses.replace(like, env_id=header["env_id"],
                               options=json.loads(header["options"]),
                               seed=int(header["seed"].split()[0]),
                               parallel=header["api"].startswith("parallel"))


def replay(v: Variant, blocks: list[list[str]]) -> str:
    """The text the current code produces for the actions recorded in ``blocks``."""
    actions = recorded_actions(blocks)
    if v.parallel:
        return _text(_play_parallel(v, lambda _obs: next(actions, None)))

    def aec(_agent: str, _obs: Obs) -> int | None:
        acts = next(actions, None)
        return None if not acts else next(iter(acts.values()))

    return _text(_play_aec(v, aec))


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _first_diff(old: list[list[str]], new: list[list[str]], path: str) -> tuple[str, str] | None:
    """(block title, unified diff) of the first step block (reset, step or end) that differs."""
    for i in range(1, max(len(old), len(new))):
        a = old[i] if i < len(old) else []
        b = new[i] if i < len(new) else []
        if a != b:
            title = (a or b)[0].removeprefix("== ")
            diff = difflib.unified_diff(a, b, f"{path} (recorded)",
                                        "replayed with the current code", lineterm="")
            return title, "\n".join(diff)
    return None


def _version_key(v: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(x) for x in v.split("."))
    except ValueError:
        return None


def check_file(path: Path, variant: Variant) -> str | None:
    """None if the file at ``path`` replays identically with the current code, else a message
    naming the file and showing the first differing step block as a unified diff."""
    rel = _rel(path)
    if not path.exists():
        return f"{rel}: missing; the playthrough {variant.name!r} is listed in " \
               f"tests/support/playthrough.py. Create it with `{REGENERATE}`."
    blocks = split_blocks(path.read_text())
    header = parse_header(blocks[0])
    try:
        recorded_variant = variant_from_header(header, variant)
    except (KeyError, ValueError) as e:
        return f"{rel}: unreadable header ({type(e).__name__}: {e}); regenerate with " \
               f"`{REGENERATE}`."
    game = card_envs.env_class(recorded_variant.env_id).game_class
    code_version, file_version = game.version, header.get("version", "?")
    expected_header = [line.rstrip() for line in _header(variant, file_version)]
    if blocks[0] != expected_header:
        diff = "\n".join(difflib.unified_diff(blocks[0], expected_header, f"{rel} (recorded)",
                                              "variant in tests/support/playthrough.py",
                                              lineterm=""))
        return f"{rel}: the header does not match the variant defined in " \
               "tests/support/playthrough.py " \
               f"(env id, options, seed, api or policy changed); regenerate with " \
               f"`{REGENERATE}`.\n{diff}"
    try:
        new = split_blocks(replay(recorded_variant, blocks))
    except CardEnvError as e:  # e.g. an option the game no longer accepts
        return f"{rel}: the replay failed with {type(e).__name__}: {e}\nIf the change is " \
               f"deliberate, bump the game's version and regenerate with `{REGENERATE}`."
    first = _first_diff(blocks, new, rel)
    steps = sum(1 for b in blocks if b[0].startswith("== step "))
    where = "" if first is None else \
        f"first difference at '{first[0]}' (the file has {steps} steps):\n{first[1]}"
    cls = f"{game.__module__}.{game.__qualname__}"
    if file_version != code_version:
        old, cur = _version_key(file_version), _version_key(code_version)
        if old is None or cur is None:
            order = "the versions differ"
        elif cur > old:
            order = "the code's version is newer: this file is stale and must be regenerated"
        else:
            order = "the file's version is newer than the code's (a version went backwards?)"
        body = where or "the steps replay identically, but the header must carry the new version."
        return (f"{rel}: recorded with {game.env_id} version {file_version!r}, the code "
                f"({cls}.version) is {code_version!r}: {order}. A game's version must change "
                f"with its behaviour, and the files be regenerated with `{REGENERATE}`.\n{body}")
    if first is None:
        return None
    return (f"{rel}: behaviour changed without a version bump ({game.env_id} version is still "
            f"{code_version!r}). If the change is deliberate, bump {cls}.version and regenerate "
            f"with `{REGENERATE}`; otherwise it is a regression.\n{where}")


def stray_files(directory: Path | None = None) -> list[Path]:
    """Files in ``directory`` (default: the playthroughs folder) that no variant lists."""
    directory = DIR if directory is None else directory
    names = {f"{n}.txt" for n in VARIANTS}
    return sorted(p for p in directory.iterdir() if p.name not in names) \
        if directory.exists() else []


# --- CLI -----------------------------------------------------------------------------------
def _selected(only: list[str] | None) -> list[Variant]:
    if not only:
        return list(VARIANTS.values())
    unknown = [n for n in only if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown playthrough(s) {unknown}; known: {list(VARIANTS)}")
    return [VARIANTS[n] for n in only]


def write(variants: list[Variant], prune: bool) -> None:
    """Regenerate the files of ``variants`` (and, if ``prune``, delete files none lists)."""
    DIR.mkdir(exist_ok=True)
    total = 0
    for v in variants:
        t = time.perf_counter()
        text = generate(v)
        v.path.write_text(text)
        total += len(text)
        steps = text.count("\n== step ")
        print(f"{_rel(v.path)}: {steps} steps, {len(text) / 1024:.1f} KiB, "
              f"{time.perf_counter() - t:.2f} s", flush=True)
    if prune:
        for p in stray_files():
            print(f"{_rel(p)}: no variant lists it; removed", flush=True)
            p.unlink()
    print(f"{len(variants)} playthroughs, {total / 1024:.1f} KiB")


def check(variants: list[Variant], strays: bool) -> int:
    """Replay ``variants``; print one line per file (and the message of each failure)."""
    failed = 0
    for v in variants:
        t = time.perf_counter()
        msg = check_file(v.path, v)
        status = "ok" if msg is None else "FAIL"
        print(f"{_rel(v.path)}: {status} ({time.perf_counter() - t:.2f} s)", flush=True)
        if msg:
            print(msg, flush=True)
            failed += 1
    if strays:
        for p in stray_files():
            print(f"{_rel(p)}: FAIL: no variant in tests/support/playthrough.py lists this file")
            failed += 1
    return failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the files")
    mode.add_argument("--check", action="store_true", help="replay the files and compare")
    ap.add_argument("--only", action="append", metavar="NAME",
                    help=f"only this playthrough (repeatable), e.g. {_VARIANTS[0].name}")
    args = ap.parse_args(argv)
    variants = _selected(args.only)
    if args.write:
        write(variants, prune=not args.only)
        return 0
    return 1 if check(variants, strays=not args.only) else 0


if __name__ == "__main__":
    sys.exit(main())
