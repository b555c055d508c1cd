"""Fingerprint what a game does, to show a refactoring changed nothing.

For each test case of a game's manifest, plays seeded games (random legal moves mixed with the
heuristic's) and hashes, per category, everything a layer above the rules sees: the heuristic's
chosen actions, the features of every observation, the text renders, the SVG pictures (full
view and the acting seat's), the state dicts (full and per seat), the action names and the
observations and masks. Two runs of the same code give the same JSON; compare before/after::

    python scripts/fingerprint.py slide_v0 --out /tmp/before.json
    # ... refactor ...
    python scripts/fingerprint.py slide_v0 --compare /tmp/before.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

import numpy as np

import card_envs
from card_envs.agents import make_agent
from card_envs.core.features import Features, has_features

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def fingerprint(env_id: str, games: int = 12) -> dict[str, str]:
    m = card_envs.manifest(env_id)
    h = {k: hashlib.sha256() for k in ("heuristic", "features", "render", "svg", "state_dict",
                                      "action_names", "obs_mask")}
    for ci, case in enumerate(m.test_cases):
        env = card_envs.make_raw(env_id, **case)
        game = env.game
        fx = Features(game) if has_features(game) else None
        agent = make_agent("heuristic", env_id, seed=ci, **case) if m.heuristic else None
        h["action_names"].update("|".join(game.action_to_str(a)
                                          for a in range(game.num_actions)).encode())
        rnd = random.Random(ci)
        for g in range(games):
            env.reset(seed=1000 * ci + g)
            if agent is not None:
                agent.reset() if hasattr(agent, "reset") else None
            for _t in range(3000):
                agent_name = env.agent_selection
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    break
                o, mask = obs["observation"], obs["action_mask"]
                h["obs_mask"].update(o.tobytes() + mask.tobytes())
                if fx is not None:
                    h["features"].update(fx.compute(o).tobytes())
                seat = env.agents.index(agent_name)
                h["render"].update(game.render(env.state_array, None).encode())
                h["render"].update(game.render(env.state_array, seat).encode())
                h["state_dict"].update(json.dumps(env.state_dict(), sort_keys=True).encode())
                h["state_dict"].update(json.dumps(env.state_dict(seat), sort_keys=True).encode())
                if _t % 7 == 0:
                    h["svg"].update(env.picture(None).svg.encode())
                    h["svg"].update(env.picture(seat).svg.encode())
                legal = np.flatnonzero(mask).tolist()
                if agent is not None:
                    a = int(agent.act(o, mask))
                    h["heuristic"].update(str(a).encode() + b",")
                    if rnd.random() < 0.5:
                        a = rnd.choice(legal)
                else:
                    a = rnd.choice(legal)
                env.step(a)
            h["render"].update(game.render(env.state_array, None).encode())
            h["svg"].update(env.picture(None).svg.encode())
    return {k: v.hexdigest()[:16] for k, v in h.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("env_id")
    ap.add_argument("--games", type=int, default=12)
    ap.add_argument("--out")
    ap.add_argument("--compare")
    args = ap.parse_args()
    if args.env_id.startswith("toy"):
        import conftest  # noqa: F401  (registers the test-only toy game)
    fp = fingerprint(card_envs.resolve_env_id(args.env_id), args.games)
    print(json.dumps(fp, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(fp, indent=1))
    if args.compare:
        old = json.loads(Path(args.compare).read_text())
        diff = [k for k in old if old[k] != fp.get(k)]
        print("DIFFERENT: " + ", ".join(diff) if diff else "identical")
        sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
