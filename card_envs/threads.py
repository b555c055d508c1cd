"""How many threads a batch's parallel calls use: :class:`ThreadTuner`, a policy chosen by
timing (the batched engine, :mod:`card_envs.core.vector`, asks it before every call).

It only reads the calling thread's ``numba.get_num_threads()`` (the cap a user may set); it
sets nothing itself: the batched engine applies the count inside each compiled call.
"""

from __future__ import annotations

from time import perf_counter

from numba import get_num_threads

__all__ = ["ThreadTuner"]


class ThreadTuner:
    """How many numba threads one batch's parallel calls use, chosen by timing them.

    Why: a parallel loop waits for its slowest thread, and numba's OpenMP workers spin while
    they wait, so with a core busy elsewhere all threads can be several times slower than one
    (docs/performance.md). How: every step call is timed (seconds per stepped game). In a
    *trial* each candidate count runs up to ``PROBE_CALLS`` timed calls (the current count
    first; a count is dropped early once it is ``ABORT`` times slower than the best so far) and
    the fastest is kept. After a switch, calls are not timed until ``SETTLE`` seconds have
    passed: the workers of the count before go on spinning for a few ms (libgomp: ~4 ms here)
    and would slow the first calls of the next count. Trials come ``MIN_INTERVAL`` apart,
    twice as far each time the choice holds (up to ``MAX_INTERVAL``; ``MAX_INTERVAL_ALL``
    while every thread is in use: a core that gets busy then slows the calls several times,
    which the drift check sees at once), or sooner when the rate
    over a ``WINDOW`` of calls moves by more than ``DRIFT`` times; but never before the time
    the last trial lost to slower counts, divided by ``PROBE_SHARE``, has passed (so trying a
    slow count costs at most ~2%). The candidates are the calling thread's
    ``numba.get_num_threads()`` (so a user's ``set_num_threads`` is the cap), one less, half,
    and 1.
    """

    PROBE_CALLS = 4
    ABORT = 2.0
    SETTLE = 0.01
    WINDOW = 16
    DRIFT = 1.5
    MIN_INTERVAL = 0.25
    MAX_INTERVAL = 1.0
    MAX_INTERVAL_ALL = 4.0
    PROBE_SHARE = 0.02

    def __init__(self) -> None:
        self.n = get_num_threads()
        self.interval = self.MIN_INTERVAL
        self.next_trial = 0.0  # scheduled trial (the first one after the first window)
        self.earliest = 0.0  # no trial before this, whatever the rate does
        self.rate = 0.0  # seconds per game over the last window (0: none yet)
        self.arms: list[int] = []  # counts still to try in the running trial (first: now)
        # count -> [timed seconds, timed games, timed calls, untimed seconds] in the trial
        self.trial: dict[int, list[float]] = {}
        self.switched = 0.0  # when the running trial last changed the count
        self.best = 0.0  # lowest seconds per game of a count tried in the running trial
        self.trials = 0
        self._window_reset()

    def _window_reset(self) -> None:
        self.w_seconds, self.w_games, self.w_calls = 0.0, 0, 0

    def threads(self) -> int:
        """Threads for the next call."""
        return self.arms[0] if self.arms else self.n

    def record(self, seconds: float, games: int) -> None:
        """Account one step call that took ``seconds`` for ``games`` games."""
        if games <= 0:
            return
        if self.arms:
            acc = self.trial.setdefault(self.arms[0], [0.0, 0, 0, 0.0])
            now = perf_counter()
            if now - self.switched < self.SETTLE:
                acc[3] += seconds
                return
            acc[0] += seconds
            acc[1] += games
            acc[2] += 1
            per = acc[0] / acc[1]
            if acc[2] >= self.PROBE_CALLS or (self.best and per > self.ABORT * self.best):
                self.best = min(self.best, per) if self.best else per
                self.arms.pop(0)
                self.switched = now
                if not self.arms:
                    self._decide()
            return
        self.w_seconds += seconds
        self.w_games += games
        self.w_calls += 1
        if self.w_calls < self.WINDOW:
            return
        rate = self.w_seconds / self.w_games
        moved = self.rate > 0 and not self.rate / self.DRIFT <= rate <= self.rate * self.DRIFT
        self.rate = rate
        self._window_reset()
        now = perf_counter()
        if now >= self.earliest and (moved or now >= self.next_trial):
            self._start_trial()

    def _start_trial(self) -> None:
        cap = max(1, get_num_threads())
        counts = {cap, max(1, cap - 1), max(1, cap // 2), 1}
        if len(counts) == 1:
            self.n = cap
            self.next_trial = perf_counter() + self.MAX_INTERVAL
            return
        first = self.n if self.n in counts else cap
        self.arms = [first] + sorted(counts - {first}, reverse=True)
        self.switched = 0.0  # the current count is settled
        self.trial = {}
        self.best = 0.0
        self.trials += 1

    def _decide(self) -> None:
        per = {n: acc[0] / acc[1] for n, acc in self.trial.items()}
        best = min(per, key=per.__getitem__)
        lost = sum(acc[0] - acc[1] * per[best] + acc[3] * (1 - per[best] / per[n])
                   for n, acc in self.trial.items())
        now = perf_counter()
        longest = self.MAX_INTERVAL_ALL if best == max(self.trial) else self.MAX_INTERVAL
        self.interval = (min(2 * self.interval, longest) if best == self.n
                         else self.MIN_INTERVAL)
        self.earliest = now + lost / self.PROBE_SHARE
        self.next_trial = max(now + self.interval, self.earliest)
        self.n = best
        self.rate = 0.0  # the next window sets the reference
        self._window_reset()
