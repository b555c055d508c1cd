"""Command line: ``card-envs arena | record | replay | play | benchmark`` (the arena also as
``python examples/arena.py ...``).

    card-envs arena --game slide --agents random,heuristic --games 200
    card-envs arena --game slide_v0 --agents heuristic,random,random --players 3 \\
        --games 300 --seed 1 --json out.json
    card-envs arena --game isflak --agents random,heuristic,mcts:ms=50+c=0.7 --games 100 \\
        --workers 2 --plot plots/

``--agents`` is the pool, comma separated. Spec parameters are separated by ``+`` or ``;`` (or
by commas right after a spec that already has a ``:``): ``mcts:ms=50+c=0.7``,
``"mcts:ms=50;c=0.7"`` and ``mcts:ms=50,c=0.7`` are all the spec ``mcts:ms=50,c=0.7``.
With fewer agents than players the pool is repeated to fill the seats; with more, every
combination of ``--players`` agents (a lineup) plays ``--games`` games. Seats rotate every
game and each deal is replayed with every rotation (see ``card_envs.arena``, ``docs/arena.md``).
``--workers auto`` (the default) plays in this process unless the games take long enough to
pay for starting worker processes (:func:`card_envs.arena.runner.auto_workers`).

    card-envs record --game slide --agents heuristic,random --seed 1 -o game.json
    card-envs replay game.json -o game.html
    card-envs play --game slide --players 3 --vs mcts,heuristic [--seat 0] [--seed S]

``record`` plays one game of agents and writes its replay (seed, options, actions: the whole
game); ``replay`` turns a replay into one self-contained HTML page; ``play`` serves a page on
127.0.0.1 where you play against agents (the ``ui`` extra: Starlette and uvicorn). Guide:
``docs/ui.md``.

    card-envs benchmark --agent heuristic --quick --workers 2 --json report.json
    card-envs benchmark --check report.json

``benchmark`` runs the fixed protocol of :mod:`card_envs.benchmark` for one agent (guide:
``docs/benchmark.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
import warnings
import webbrowser
from pathlib import Path
from typing import Any, NoReturn

from card_envs.agents.registry import check_spec
from card_envs.arena import plot_ratings, plot_winrate_matrix, run_arena
from card_envs.arena.precompile import precompile
from card_envs.arena.ray_backend import add_ray_arguments, ray_kwargs
from card_envs.arena.warmup import notice_label
from card_envs.benchmark import cli as bench_cli
from card_envs.core import replay
from card_envs.core.checks import check_nesting, short_repr
from card_envs.core.errors import CardEnvError
from card_envs.core.files import write_text_atomic
from card_envs.core.progress import compile_notice
from card_envs.core.registry import env_ids, resolve_env_id
from card_envs.draw import THEMES
from card_envs.ui.record import record_game
from card_envs.ui.replay_html import write_html
from card_envs.ui.specs import split_agents

__all__ = ["OneLineParser", "arena_main", "build_parser", "fail", "main", "split_agents"]

ARENA_HELP = ("Play agents against each other over duplicate deals; print win rates and mean "
              "points with 95% confidence intervals, ratings and a head-to-head matrix.")
RECORD_HELP = "Play one game of agents and write its replay (JSON: seed, options, actions)."
REPLAY_HELP = ("Write a replay as one self-contained HTML page that steps through the game "
               "(pictures, seat views, move list; no network needed).")
PLAY_HELP = ("Play a game against agents in the browser: a local web server (127.0.0.1 by "
             "default) and a page where you click your legal moves.")


def fail(prog: str, message: object, hint: str = "") -> int:
    """Print ``<prog>: error: <message>`` as one line on stderr (line breaks in the message
    become spaces; ``hint`` follows in brackets) and return 2, the exit code of every mistake
    on the command line."""
    text = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
    print(f"{prog}: error: {text}" + (f" ({hint})" if hint else ""), file=sys.stderr,
          flush=True)
    return 2


class OneLineParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors are one line, ``card-envs: error:
    <message> (card-envs arena --help)``, exit code 2 (argparse prints the whole usage first).
    Sub-parsers inherit it; the prefix is the program's name (the first word of ``prog``)."""

    def error(self, message: str) -> NoReturn:
        fail(self.prog.split()[0], message, hint=f"{self.prog} --help")
        self.exit(2)


def _error_prog(args: argparse.Namespace) -> str:
    """The program name errors of a parsed command start with (``card-envs``, ``arena.py``)."""
    return getattr(args, "error_prog", None) or "card-envs"


def _workers(text: str) -> int | str:
    """``--workers``: a number of processes or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of processes or 'auto', got "
                                         f"{short_repr(text)}") from None


def _option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` of ``--option``: the value as JSON when it is JSON, else as text."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"options are key=value, got {short_repr(text)}")
    python_words = {"True": True, "False": False, "None": None}
    if value in python_words:
        return key, python_words[value]
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return key, value
    except (ValueError, RecursionError) as e:  # 4301+ digit integers, deep nesting
        raise argparse.ArgumentTypeError(f"option {key}: {short_repr(str(e), 120)}") from None
    check_nesting(parsed, 12, 100_000, f"option {key}", argparse.ArgumentTypeError)
    return key, parsed


def _output_file(path: str | None, flag: str) -> None:
    """Check before a long run that ``path`` can be written (``ValueError`` naming ``flag``):
    not a folder, in an existing folder that this user may write to."""
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{flag} {path}: is a folder, not a file")
    parent = p.parent
    if not parent.is_dir():
        raise ValueError(f"{flag} {path}: the folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise ValueError(f"{flag} {path}: not writable")


def _output_folder(path: str | None, flag: str) -> None:
    """Check before a long run that the folder ``path`` exists or can be made, and can be
    written to (``ValueError`` naming ``flag``)."""
    if path is None:
        return
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ValueError(f"{flag} {path}: is a file, not a folder")
    first = p
    while not first.exists() and first != first.parent:
        first = first.parent
    if not first.is_dir() or not os.access(first, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: cannot write in {str(first)!r}")


def add_arena_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of ``card-envs arena``."""
    ap.add_argument("--game", default="slide",
                    help="game name or env id (slide, slide_v0), or 'all' registered games")
    ap.add_argument("--agents", default="random,heuristic",
                    help="comma-separated agent pool (random, heuristic, mcts:ms=50+c=0.7, "
                         "ppo: the pretrained baseline, ppo:final.safetensors, az:ms=200: search "
                         "guided by the baseline network, rllib:checkpoint); "
                         "spec parameters joined by + or ;")
    ap.add_argument("--games", type=int, default=200,
                    help="games per lineup (default 200); a pool larger than the table plays "
                         "every lineup of --players agents")
    ap.add_argument("--players", type=int, default=2, help="number of seats (default 2)")
    ap.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    ap.add_argument("--workers", type=_workers, default="auto",
                    help="worker processes (0 = every core); 'auto' (the default) uses more "
                         "than 1 only when the games take long enough to pay for starting "
                         "them; results do not depend on it")
    ap.add_argument("--compile-workers", type=_workers, default="auto",
                    help="with several games: processes compiling their kernels before the "
                         "first game (first run only; 'auto', the default: one per core; 1: "
                         "each game compiles before its own games)")
    ap.add_argument("--option", "-o", type=_option, action="append", default=[],
                    metavar="KEY=VALUE", help="extra game option, e.g. -o start_player=random")
    ap.add_argument("--json", metavar="PATH", help="also write the full results as JSON")
    ap.add_argument("--plot", metavar="DIR",
                    help="write <env_id>_winrate.png and <env_id>_ratings.png to DIR")
    ap.add_argument("--replays", metavar="DIR",
                    help="write every game's replay (JSON: seed, options, actions) to DIR "
                         "(`card-envs replay DIR/<file>.json -o game.html` to watch one)")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_ray_arguments(ap)


def arena_main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """``card-envs arena``: play agents against each other and print a results table."""
    ap = OneLineParser(prog=prog, description=ARENA_HELP)
    add_arena_arguments(ap)
    ap.set_defaults(error_prog=ap.prog.split()[0])
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2, its line already printed)
        return int(e.code or 0)
    return run_arena_command(args)


def run_arena_command(args: argparse.Namespace) -> int:
    """Run ``card-envs arena`` with parsed arguments (exit code 2 and one ``card-envs: error:``
    line for any mistake in names, options, agent specs or model files)."""
    names = split_agents(args.agents)
    options = dict(args.option)
    results = []
    try:
        if "num_players" in options:
            raise ValueError("set the number of seats with --players, not -o num_players=...")
        if not names:
            raise ValueError("--agents is empty")
        _output_file(args.json, "--json")  # before the run, not after it
        _output_folder(args.plot, "--plot")
        _output_folder(args.replays, "--replays")
        games = list(env_ids()) if args.game == "all" else [resolve_env_id(args.game)]
        if len(games) > 1:  # the games' kernels compiled side by side (a cold cache only)
            precompile(games, names, num_players=args.players, processes=args.compile_workers,
                       progress=not args.no_progress, **options)
        for env_id in games:
            print(f"arena: {env_id}, {args.players} players, {args.games} games per lineup, "
                  f"seed {args.seed}, agents {' | '.join(names)}"
                  + (f", options {options}" if options else ""), flush=True)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UserWarning)
                res = run_arena(env_id, names, args.games, num_players=args.players,
                                seed=args.seed, progress=not args.no_progress,
                                workers=args.workers, replays=args.replays,
                                **ray_kwargs(args), **options)
            for w in caught:
                print(f"warning: {w.message}", file=sys.stderr, flush=True)
            print(res.table(), flush=True)
            results.append(res)
            if args.plot:
                out = Path(args.plot)
                paths = [plot_winrate_matrix(res, out / f"{env_id}_winrate.png"),
                         plot_ratings(res, out / f"{env_id}_ratings.png")]
                print("wrote " + ", ".join(map(str, paths)), flush=True)
    except (ValueError, TypeError, ImportError, OSError) as e:  # names, options, model files
        return fail(_error_prog(args), e)
    if args.json:
        data = results[0].to_json() if len(results) == 1 else [r.to_json() for r in results]
        try:
            write_text_atomic(args.json, json.dumps(data, indent=1))
        except OSError as e:
            return fail(_error_prog(args), f"--json {args.json}: {e}")
        print(f"wrote {args.json}")
    return 0


def add_record_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of ``card-envs record``."""
    ap.add_argument("--game", default="slide", help="game name or env id (default slide)")
    ap.add_argument("--agents", default="heuristic,random",
                    help="one agent spec per seat, comma separated (default heuristic,random)")
    ap.add_argument("--players", type=int, default=None,
                    help="number of seats (default: one per agent; the list is repeated)")
    ap.add_argument("--seed", type=int, default=0, help="deal and agent seed (default 0)")
    ap.add_argument("--option", type=_option, action="append", default=[],
                    metavar="KEY=VALUE", help="extra game option, e.g. --option max_turned=20")
    ap.add_argument("-o", "--out", required=True, metavar="PATH",
                    help="the replay file to write (.json)")


def run_record_command(args: argparse.Namespace) -> int:
    """Run ``card-envs record``: one game, its replay written to ``--out``."""
    try:
        specs = split_agents(args.agents)
        if not specs:
            raise ValueError("--agents is empty")
        n = args.players or len(specs)
        if n < 2 and args.players is None:
            n = 2
        seats = [specs[i % len(specs)] for i in range(n)]
        options = dict(args.option)
        if "num_players" in options:
            raise ValueError("set the number of seats with --players")
        _output_file(args.out, "--out")
        t = time.perf_counter()
        env_id = resolve_env_id(args.game)
        for spec in specs:
            check_spec(spec, env_id)  # mistakes before anything compiles
        with compile_notice(notice_label(env_id, seats)):  # a line only when compiling
            d = record_game(env_id, seats, seed=args.seed, num_players=n, **options)
        replay.save(d, args.out)
    except (ValueError, TypeError, ImportError, OSError) as e:
        return fail(_error_prog(args), e)
    res = d.get("result", {})
    print(f"wrote {args.out}: {d['env_id']}, {len(d['actions'])} actions, points "
          f"{res.get('points')}, winners {res.get('winners')} "
          f"({time.perf_counter() - t:.1f} s)")
    return 0


def add_replay_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of ``card-envs replay``."""
    ap.add_argument("replay", help="a replay file (card-envs record, the arena, env.replay())")
    ap.add_argument("-o", "--out", metavar="PATH",
                    help="the HTML file to write (default: the replay's name with .html)")
    ap.add_argument("--theme", choices=sorted(THEMES), default="light",
                    help="picture colours (default light)")
    ap.add_argument("--seat-views", type=int, default=None, metavar="STEPS",
                    help="embed every seat's view up to this many steps (default 300); longer "
                         "games get only the omniscient picture")


def run_replay_command(args: argparse.Namespace) -> int:
    """Run ``card-envs replay``: the replay as one HTML file."""
    out = args.out or str(Path(args.replay).with_suffix(".html"))
    try:
        _output_file(out, "--out")
        d = replay.load(args.replay)
        kw = {} if args.seat_views is None else {"seat_views_up_to": args.seat_views}
        t = time.perf_counter()
        info = write_html(d, out, theme=args.theme, **kw)
    except (CardEnvError, ValueError, OSError) as e:
        return fail(_error_prog(args), e)
    print(f"wrote {out}: {info['steps']} steps, views {', '.join(info['views'])}, "
          f"{info['bytes'] / 1024:.0f} KiB ({time.perf_counter() - t:.1f} s)")
    return 0


def add_play_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of ``card-envs play``."""
    ap.add_argument("--game", default="slide", help="game name or env id (default slide)")
    ap.add_argument("--players", type=int, default=2, help="number of seats (default 2)")
    ap.add_argument("--vs", default="heuristic",
                    help="the other seats' agent specs, comma separated, repeated to fill the "
                         "table (default heuristic)")
    ap.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    ap.add_argument("--seed", type=int, default=None,
                    help="the deal of the page's first game (default: unguessable, 64 bits)")
    ap.add_argument("--option", type=_option, action="append", default=[],
                    metavar="KEY=VALUE", help="extra game option, e.g. --option max_turned=20")
    ap.add_argument("--model", type=_model, action="append", default=[], metavar="NAME=SPEC",
                    help="a trained model the page may choose as an opponent by NAME, e.g. "
                         "--model mine=ppo:runs/slide/final.zip (repeatable); the browser "
                         "never names a file itself")
    ap.add_argument("--host", default="127.0.0.1",
                    help="address to bind (default 127.0.0.1: this machine only)")
    ap.add_argument("--port", type=int, default=0, help="port (default 0: a free one)")
    ap.add_argument("--theme", choices=sorted(THEMES), default="light",
                    help="colours (default light)")
    ap.add_argument("--no-browser", action="store_true", help="print the URL, open nothing")


def _model(text: str) -> tuple[str, str]:
    """``NAME=SPEC`` of ``--model`` (``SPEC``: ``ppo:PATH``, ``rllib:PATH`` or a
    ``.safetensors`` / ``.zip`` path, read as ``ppo:PATH``)."""
    name, sep, spec = text.partition("=")
    if not sep or not name.strip() or not spec.strip():
        raise argparse.ArgumentTypeError("--model is NAME=SPEC (e.g. "
                                         "mine=ppo:runs/slide/final.safetensors), "
                                         f"got {short_repr(text)}")
    spec = spec.strip()
    if ":" not in spec.split("/")[0] and spec.endswith((".zip", ".safetensors")):
        spec = f"ppo:{spec}"
    return name.strip(), spec


def run_play_command(args: argparse.Namespace) -> int:
    """Run ``card-envs play``: serve the play page until interrupted."""
    try:
        import uvicorn

        from card_envs.ui.server import create_app
        from card_envs.ui.sessions import ApiError, new_session
    except ImportError as e:
        return fail(_error_prog(args),
                    f"card-envs play needs the ui extra (pip install 'card-envs[ui]'): {e}")
    defaults = {"game": args.game, "players": args.players, "vs": split_agents(args.vs),
                "seat": args.seat, "seed": args.seed, "options": dict(args.option),
                "theme": args.theme}
    try:
        models = dict(args.model)
        if len(models) != len(args.model):
            raise ValueError("--model: a name given twice")
        defaults["game"] = resolve_env_id(args.game)
        local = args.host in ("127.0.0.1", "localhost", "::1")
        hosts = ["127.0.0.1", "localhost", "[::1]"] if local else None
        app = create_app(defaults, allowed_hosts=hosts, models=models)  # checks the models
        with compile_notice(notice_label(defaults["game"], defaults["vs"])):
            new_session(dict(defaults, seed=0 if args.seed is None else args.seed),
                        app.state.policy)  # a game of the defaults, built now to check them
        if not local:
            print(f"warning: binding {args.host}: anyone who can reach this address can play "
                  "on this server (it has no login)", file=sys.stderr)
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host, args.port))
        sock.listen(128)  # connections wait from now on, even before uvicorn accepts
    except (ApiError, ValueError, TypeError, OSError) as e:  # any bad setting: one line
        return fail(_error_prog(args), e)
    port = sock.getsockname()[1]
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    url = f"http://{'[' + shown + ']' if ':' in shown else shown}:{port}/"
    print(f"card-envs play: {defaults['game']}, {args.players} players, you are seat "
          f"{args.seat}, vs {', '.join(defaults['vs'])}: {url}  (Ctrl+C stops)", flush=True)
    if not args.no_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    return 0


def build_parser() -> argparse.ArgumentParser:
    """``card-envs`` with one subcommand per tool."""
    ap = OneLineParser(prog="card-envs", description="card-envs command line tools.")
    ap.set_defaults(error_prog=ap.prog)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", required=True)
    arena = sub.add_parser("arena", help=ARENA_HELP.replace("%", "%%"), description=ARENA_HELP)
    add_arena_arguments(arena)
    arena.set_defaults(run=run_arena_command)
    rec = sub.add_parser("record", help=RECORD_HELP, description=RECORD_HELP)
    add_record_arguments(rec)
    rec.set_defaults(run=run_record_command)
    rep = sub.add_parser("replay", help=REPLAY_HELP, description=REPLAY_HELP)
    add_replay_arguments(rep)
    rep.set_defaults(run=run_replay_command)
    play = sub.add_parser("play", help=PLAY_HELP, description=PLAY_HELP)
    add_play_arguments(play)
    play.set_defaults(run=run_play_command)
    bench = sub.add_parser("benchmark", help=bench_cli.HELP, description=bench_cli.HELP)
    bench_cli.add_arguments(bench)
    bench.set_defaults(run=lambda args: bench_cli.run_command(args, fail, _error_prog(args)))
    return ap


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``card-envs`` command."""
    ap = build_parser()
    try:
        args, extra = ap.parse_known_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2, its line already printed)
        return int(e.code or 0)
    if extra:  # argparse would blame the top-level parser; name the subcommand's help
        return fail(ap.prog, f"unrecognized arguments: {' '.join(extra)}",
                    hint=f"{ap.prog} {args.command} --help")
    return args.run(args)


if __name__ == "__main__":  # python -m card_envs.cli arena ...
    sys.exit(main())
