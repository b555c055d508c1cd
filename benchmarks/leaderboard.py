"""Make the benchmark leaderboard shipped with the package.

    python benchmarks/leaderboard.py                 # run every agent of the leaderboard
    python benchmarks/leaderboard.py --agents random,heuristic

Runs ``card-envs benchmark`` for every built-in agent of
:data:`card_envs.benchmark.leaderboard.AGENTS` (each with its own command: the full protocol,
``--quick`` for the search agents), then

1. writes the normalising reference shares (random's and the heuristic's share against ``n - 1``
   heuristics per game and seat count, from their full reports) into
   ``card_envs/benchmark/protocol.py`` (``REFERENCE``),
2. copies the reports into ``card_envs/benchmark/data/`` (the ladder's ratings are the joint
   fit of these), and
3. makes every report again from the saved tables (nothing is replayed: the protocol resumes
   from its cache) in a fresh process, so each carries the final normalised scores and rating.

The docs page ``docs/benchmark.md`` renders the shipped reports at build time; the ratings chart
``docs/images/leaderboard.png`` is drawn here.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = ROOT / "card_envs" / "benchmark" / "protocol.py"
DATA = ROOT / "card_envs" / "benchmark" / "data"
MAX_BYTES = 2 << 20


def run(label: str, command: str, out: Path, progress: bool) -> Path:
    """Run one leaderboard command writing its report to ``out/<name>.json``."""
    from card_envs.benchmark.leaderboard import report_name

    path = out / f"{report_name(label)}.json"
    argv = shlex.split(command)[1:] + ["--json", str(path)]
    if not progress:
        argv.append("--no-progress")
    subprocess.run([sys.executable, "-m", "card_envs.cli", *argv], check=True)
    return path


def reference(out: Path) -> dict[str, dict[int, tuple[float, float]]]:
    """``{env_id: {n: (random's share, heuristic's share)}}`` against ``n - 1`` heuristics."""
    reps = {a: json.loads((out / f"{a}.json").read_text()) for a in ("random", "heuristic")}
    for a, rep in reps.items():
        if rep["mode"] != "full" or not rep["complete"]:
            raise SystemExit(f"{a}: the reference needs the full protocol's complete report")
    ref: dict[str, dict[int, tuple[float, float]]] = {}
    for row in reps["random"]["rows"]:
        if row["opponent"] != "heuristic":
            continue
        (h,) = [r for r in reps["heuristic"]["rows"] if r["opponent"] == "heuristic"
                and (r["env_id"], r["players"]) == (row["env_id"], row["players"])]
        ref.setdefault(row["env_id"], {})[row["players"]] = (row["win_share"], h["win_share"])
    return ref


def write_reference(ref: dict[str, dict[int, tuple[float, float]]]) -> None:
    lines = ["REFERENCE: dict[str, dict[int, tuple[float, float]]] = {"]
    for env_id, by_n in ref.items():
        cells = ", ".join(f"{n}: ({a}, {b})" for n, (a, b) in sorted(by_n.items()))
        lines.append(f'    "{env_id}": {{{cells}}},')
    lines.append("}")
    text = PROTOCOL.read_text()
    new, n = re.subn(r"REFERENCE: dict\[str, dict\[int, tuple\[float, float\]\]\] = \{.*?\n\}",
                     "\n".join(lines), text, count=1, flags=re.S)
    if not n:
        new, n = re.subn(r"REFERENCE: dict\[str, dict\[int, tuple\[float, float\]\]\] = \{\}",
                         "\n".join(lines), text, count=1)
    if not n:
        raise SystemExit(f"{PROTOCOL}: no REFERENCE assignment to replace")
    PROTOCOL.write_text(new)


def main(argv: list[str] | None = None) -> int:
    from card_envs.benchmark.leaderboard import AGENTS, report_name

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", default=",".join(AGENTS),
                    help="which leaderboard agents to run (default all)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "leaderboard"))
    ap.add_argument("--no-run", action="store_true",
                    help="use the reports already in --out (steps 1-3 only)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [a for a in args.agents.split(",") if a]
    unknown = [a for a in chosen if a not in AGENTS]
    if unknown:
        ap.error(f"not leaderboard agents: {unknown}; known: {list(AGENTS)}")
    if not args.no_run:
        for a in chosen:
            run(a, AGENTS[a], out, not args.no_progress)
    write_reference(reference(out))
    DATA.mkdir(parents=True, exist_ok=True)
    for a in AGENTS:
        src = out / f"{report_name(a)}.json"
        if src.is_file():
            if src.stat().st_size > MAX_BYTES:
                raise SystemExit(f"{src}: more than 2 MB")
            shutil.copyfile(src, DATA / src.name)
    for a in AGENTS:  # again from the saved tables: the final reference and ladder
        if (DATA / f"{report_name(a)}.json").is_file():
            shutil.copyfile(run(a, AGENTS[a], out, False), DATA / f"{report_name(a)}.json")
    subprocess.run([sys.executable, "-c", "from card_envs.benchmark import markdown, plot; "
                    "print(markdown()); plot(path='docs/images/leaderboard.png')"],
                   check=True, cwd=ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
