"""Self-play workers: :class:`~card_envs.rl.az.selfplay.SelfPlay` in processes of their own,
one thread each (a wave of the search never waits for a straggling thread: on a machine where
another process takes a core, the other worker keeps its pace), or in this process when there
is one worker. The workers also play the evaluation matches, each a share of the deals.

The learner sends each worker the network's weights (arrays) before a round; a worker keeps
its games between rounds and hands its state over for checkpoints.

Worker processes ignore SIGINT and SIGTERM (a terminal's Ctrl-C reaches the whole process
group): the learner decides when to stop and stops them. A learner waiting on its workers with
a ``stop`` callable gives up as soon as it returns true (:class:`StopRequested`); busy workers
are then killed when the :class:`Workers` close. A worker whose learner is gone exits quietly.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Callable
from multiprocessing.connection import wait
from typing import Any

import numpy as np

__all__ = ["StopRequested", "Workers"]

#: signals the worker processes ignore (the learner stops them)
IGNORED = (signal.SIGINT, signal.SIGTERM)


class StopRequested(Exception):  # noqa: N818 - a request, not an error
    """The learner was asked to stop while it waited on its workers."""


def _merge(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The self-play output of consecutive calls as one call's (decisions added up)."""
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0] if k != "decisions"}
    out["decisions"] = np.array([sum(int(p["decisions"][0]) for p in parts)], np.int64)
    return out


def _policy(env_id: str, num_players: int, options: dict[str, Any],
            config: dict[str, Any]) -> Any:
    """A NetPolicy of this network configuration (weights loaded later)."""
    from card_envs.agents.net import NetPolicy, PolicyNet

    netc = config["net"]
    enc = config["encoding"]
    net = PolicyNet(netc["in_dim"], netc["num_actions"], netc["action_dim"], netc["hidden"],
                    netc["scorer"], netc.get("value_dim", 1))
    net.eval()
    return NetPolicy(env_id, num_players, options, net, one_hot_max=enc["one_hot_max"],
                     one_hot_budget=enc["one_hot_budget"])


def _load(policy: Any, weights: dict[str, np.ndarray]) -> None:
    import torch

    policy.net.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in weights.items()})


class _Local:
    """One worker's games and network (in whatever process holds it)."""

    def __init__(self, init: dict[str, Any]) -> None:
        from card_envs.agents.az_search import NetEvaluator
        from card_envs.core.manifest import load
        from card_envs.rl.az.selfplay import SelfPlay

        self.env_id = init["env_id"]
        self.policy = _policy(init["env_id"], init["num_players"], init["options"],
                              init["config"])
        self.evaluator = NetEvaluator(self.policy)
        self.opts = {**init["options"], "num_players": init["num_players"]}
        self.play = SelfPlay(init["env_id"], self.opts, **init["selfplay"])
        start = init.get("start")
        self.start_eval = None
        if start is not None:
            sp = _policy(init["env_id"], init["num_players"], init["options"],
                         start["config"])
            _load(sp, start["weights"])
            pot = load(start["potential"]) if start["potential"] else None
            self.start_eval = NetEvaluator(sp, shaping=start["shaping"], potential=pot)

    def handle(self, cmd: str, arg: Any) -> Any:
        from card_envs.rl.az.evaluate import network_match, search_match

        if cmd == "weights":
            _load(self.policy, arg)
            return None
        if cmd == "play":
            return self.play.play(self.evaluator, int(arg))
        if cmd == "search_match":
            return search_match(self.env_id, self.evaluator, self.start_eval, arg["deals"],
                                arg["seed"], arg["sims"], self.opts, threads=1,
                                **arg["search"])
        if cmd == "network_match":
            return network_match(self.env_id, self.policy, arg["opponent"], arg["deals"],
                                 arg["seed"], self.opts)
        if cmd == "state":
            return self.play.state()
        if cmd == "load":
            self.play.load_state(arg)
            return None
        raise ValueError(f"unknown worker command {cmd!r}")


def _serve(conn: Any, init: dict[str, Any]) -> None:
    """A worker process: one numba and one torch thread, commands until ``close``."""
    for sig in IGNORED:
        signal.signal(sig, signal.SIG_IGN)
    import numba
    import torch

    numba.set_num_threads(1)
    torch.set_num_threads(1)
    try:
        try:
            local = _Local(init)
        except Exception as e:  # noqa: BLE001 - reported to the learner, which raises it
            conn.send(("error", f"{type(e).__name__}: {e}"))
            return
        conn.send(("ok", None))
        while True:
            try:
                cmd, arg = conn.recv()
            except (EOFError, KeyboardInterrupt):
                return
            if cmd == "close":
                return
            try:
                reply = ("ok", local.handle(cmd, arg))
            except Exception as e:  # noqa: BLE001
                reply = ("error", f"{type(e).__name__}: {e}")
            conn.send(reply)
    except OSError:  # the learner is gone (its end of the pipe closed): nothing to report to
        return


class Workers:
    """``count`` self-play workers sharing ``slots`` games (worker ``k`` plays the global
    slots ``first_k ...``). ``init``: ``env_id``, ``num_players``, ``options``, ``config``
    (the network's), and ``selfplay`` (the :class:`SelfPlay` settings but the slot range)."""

    def __init__(self, count: int, slots: int, init: dict[str, Any]) -> None:
        split = np.array_split(np.arange(slots), count)
        self.inits = [{**init, "selfplay": {**init["selfplay"], "slots": len(s),
                                            "first": int(s[0])}} for s in split]
        self.local: _Local | None = None
        self.conns: list[Any] = []
        self.procs: list[Any] = []
        self._busy = False  # commands sent, replies not all read
        if count == 1:
            self.local = _Local(self.inits[0])
            return
        ctx = multiprocessing.get_context("spawn")
        # the workers start with the signals ignored (inherited across exec: Python then
        # installs no SIGINT handler of its own), so a Ctrl-C while they import is harmless
        main = threading.current_thread() is threading.main_thread()
        old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in IGNORED} if main else {}
        try:
            for it in self.inits:
                a, b = ctx.Pipe()
                p = ctx.Process(target=_serve, args=(b, it), daemon=True)
                p.start()
                self.conns.append(a)
                self.procs.append(p)
        except BaseException:
            self.close()
            raise
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
        try:
            for c in self.conns:
                self._reply(c)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _reply(conn: Any) -> Any:
        try:
            status, value = conn.recv()
        except EOFError:
            raise RuntimeError("a self-play worker stopped unexpectedly") from None
        if status != "ok":
            raise RuntimeError(f"self-play worker: {value}")
        return value

    def _all(self, cmd: str, args: list[Any], stop: Callable[[], Any] | None = None
             ) -> list[Any]:
        """Each worker's reply to ``cmd`` (with its argument); :class:`StopRequested` as soon
        as ``stop()`` is true while they work (worker processes only)."""
        if self.local is not None:
            return [self.local.handle(cmd, args[0])]
        self._busy = True
        for c, a in zip(self.conns, args):
            c.send((cmd, a))
        if stop is not None:
            pending = list(self.conns)
            while pending:
                if stop():
                    raise StopRequested
                ready = wait(pending, timeout=0.1)
                pending = [c for c in pending if c not in ready]
        out = [self._reply(c) for c in self.conns]
        self._busy = False
        return out

    def set_weights(self, weights: dict[str, np.ndarray]) -> None:
        self._all("weights", [weights] * max(1, len(self.conns)))

    def play(self, steps: int, stop: Callable[[], Any] | None = None
             ) -> list[dict[str, np.ndarray]]:
        """``steps`` moves of self-play in every game; :class:`StopRequested` as soon as
        ``stop()`` is true (in this process: after the current move; the games have then
        advanced, so the workers must be dropped)."""
        if self.local is not None and stop is not None:
            parts = []
            for _ in range(steps):  # a move at a time: the same games as all moves at once
                if stop():
                    raise StopRequested
                parts.append(self.local.handle("play", 1))
            return [_merge(parts)]
        return self._all("play", [steps] * max(1, len(self.conns)), stop)

    def match(self, cmd: str, deals: int, stop: Callable[[], Any] | None = None,
              **arg: Any) -> Any:
        """A match of ``deals`` deals (``search_match``: the current network against the
        start network under the same search; ``network_match``: the current network alone
        against ``opponent``), the deals shared by the workers; a
        :class:`~card_envs.rl.az.evaluate.Match`. ``stop``: as for :meth:`play` (worker
        processes only: in this process the match is played to its end)."""
        from card_envs.rl.az.evaluate import summarize

        k = max(1, len(self.conns))
        cuts = np.linspace(0, deals, k + 1).astype(int)
        parts = self._all(cmd, [{**arg, "deals": range(cuts[i], cuts[i + 1])}
                                for i in range(k)], stop)
        n = int(self.inits[0]["num_players"])
        return summarize([p for p in parts if len(p["shares"])], n)

    def states(self) -> list[dict[str, np.ndarray]]:
        return self._all("state", [None] * max(1, len(self.conns)))

    def load(self, states: list[dict[str, np.ndarray]]) -> None:
        if len(states) != len(self.inits):
            raise ValueError(f"a checkpoint of {len(states)} self-play workers; this run has "
                             f"{len(self.inits)}")
        self._all("load", states)

    def close(self) -> None:
        """Stop the worker processes: idle ones are told to, busy ones (a command not
        answered) are killed (they ignore SIGTERM)."""
        if not self._busy:
            for c in self.conns:
                try:
                    c.send(("close", None))
                except OSError:
                    pass
        for p in self.procs:
            if not self._busy:
                p.join(timeout=10)
            if p.is_alive():
                p.kill()
            p.join()
        for c in self.conns:
            c.close()
        self.conns, self.procs, self._busy = [], [], False

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
