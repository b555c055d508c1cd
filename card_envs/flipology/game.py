"""Flipology's game specification: options, deck, config tables, action names (the kernels:
``rules``, ``observe``; the state dict and determinization: ``statedict``; text and picture:
``view``)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import short_repr
from card_envs.core.errors import OptionError
from card_envs.core.game import Game, Option, bool_option
from card_envs.flipology import layout as L
from card_envs.flipology import observe as O
from card_envs.flipology import rules as R
from card_envs.flipology import statedict as SD
from card_envs.flipology import view as V
from card_envs.flipology.layout import SINGLES, VARIANTS, obs_size
from card_envs.flipology.parts.deck import (
    default_deck,
    expand,
    validate_deck,
    write_card_tables,
)


def _variant(v: Any, opts: Mapping[str, Any]) -> str:
    if not isinstance(v, str) or v not in VARIANTS:
        raise OptionError(f"flipology_v0: variant must be one of {list(VARIANTS)}, "
                          f"got {short_repr(v)}")
    if v == "great_tree" and opts["num_players"] > 4:
        raise OptionError(f"flipology_v0: the Great Tree is for 2-4 players (num_players), "
                          f"got {opts['num_players']}")
    return str(v)


def _max_games(v: Any, _: Mapping[str, Any]) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 1 <= v <= 100:
        raise OptionError(f"flipology_v0: max_games must be an int in 1..100, got {short_repr(v)}")
    return int(v)


def _deck(v: Any, _: Mapping[str, Any]) -> dict[str, Any] | None:
    return None if v is None else validate_deck(v)


def seat_tables(n: int, variant: str) -> dict[str, int]:
    """Row length, levels, hand size, positions per seat and in all of ``variant``."""
    rl, nl, hn = L.ROW_SHAPES[VARIANTS.index(variant)]
    sp = rl * nl
    npos = n * sp
    return {"rowlen": rl, "levels": nl, "handn": hn, "seatpos": sp, "npos": npos}


def adjacency(n: int, rl: int, nl: int, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Neighbour table [pos][4] (left, right, down, up) and distance-2 table [pos][8] of the
    positions on the first ``levels`` levels; -1 padding. Nature: a row's right end touches
    the left end of the previous seat's row (the player to the right)."""
    sp = rl * nl
    adj = -np.ones((L.MAXPOS, 4), np.int32)
    d2 = -np.ones((L.MAXPOS, 8), np.int32)
    exists = []
    for s in range(n):
        for lv in range(levels):
            for c in range(rl):
                p = s * sp + lv * rl + c
                exists.append(p)
                adj[p, 0] = p - 1 if c > 0 else ((s + 1) % n) * sp + lv * rl + rl - 1
                adj[p, 1] = p + 1 if c < rl - 1 else ((s - 1) % n) * sp + lv * rl
                if lv > 0:
                    adj[p, 2] = p - rl
                if lv + 1 < levels:
                    adj[p, 3] = p + rl
    for p in exists:
        dist = {p: 0}
        todo = deque([p])
        while todo:
            u = todo.popleft()
            if dist[u] == 2:
                continue
            for v in adj[u]:
                if v >= 0 and v not in dist:
                    dist[v] = dist[u] + 1
                    todo.append(v)
        far = sorted(v for v, d in dist.items() if d == 2)
        d2[p, :len(far)] = far
    return adj, d2


class FlipologyGame(Game):
    """Flipology's options, sizes, config tables and action names (modules: ``rules``,
    ``observe``, ``statedict``, ``view``)."""

    name = "flipology"
    env_id = "flipology_v0"
    version = "1"  # 1: a Hermit crab's Sloth/Koala pick is known to every seat when picked
    rules = R
    observe = O
    statedict = SD
    view = V
    min_players, max_players, default_players = 2, 8, 2
    phases = L.PHASES
    obs_dtype = np.int16
    points_order = "higher is better, except in a game where the Moon ends face up"
    winner_points = (1, -1)
    extra_options = {
        "variant": Option("nature", "'nature' (2-8 players) or 'great_tree' (2-4)", _variant),
        "moon": Option(False, "play with the Moon card", bool_option("flipology_v0", "moon")),
        "wolves": Option(True, "play with the Wolves cards", bool_option("flipology_v0", "wolves")),
        "series": Option(False, "several games: play to 100 points",
                         bool_option("flipology_v0", "series")),
        "max_games": Option(20, "series: end after this many games at the latest", _max_games),
        "deck": Option(None, "None (data/deck.json) or a deck mapping of the same schema",
                       _deck),
    }

    def configure(self, cfg: np.ndarray) -> np.ndarray:
        o = self.options
        n = self.num_players
        self.deck = o["deck"] if o["deck"] is not None else default_deck()
        self.kinds, self.points = expand(self.deck)
        nc = len(self.kinds)
        t = seat_tables(n, o["variant"])
        self.rowlen, self.nlevels, self.handn = t["rowlen"], t["levels"], t["handn"]
        self.seatpos, self.npos = t["seatpos"], t["npos"]
        gt = o["variant"] == "great_tree"
        aside = []
        for k in self.kinds:
            name = L.KIND_NAMES[k]
            aside.append(int(name == "null" or (name == "moon" and not o["moon"])
                             or (name == "wolves" and not o["wolves"])
                             or (gt and name in ("rain", "hermit_crab"))))
        self.aside = aside
        usable = nc - sum(aside)
        need = self.nlevels * n * self.rowlen + self.handn if gt else n * self.handn
        if usable < need:
            raise OptionError(f"flipology_v0: the deck has {usable} playable cards, "
                              f"{need} are needed for {n} players")
        self.ncards = nc
        self.hand0 = self.npos
        self.disc0 = self.hand0 + self.handn
        self.skip = self.disc0 + nc
        self.num_actions = self.skip + len(SINGLES)
        self.obs_size = obs_size(n, self.seatpos, self.handn, nc)
        self.state_size = L.STATE_SIZE
        ext = np.zeros(L.CFG_SIZE, np.int32)
        ext[:cfg.shape[0]] = cfg
        ext[L.G_VARIANT] = VARIANTS.index(o["variant"])
        ext[L.G_MOON] = int(o["moon"])
        ext[L.G_WOLVES] = int(o["wolves"])
        ext[L.G_SERIES] = int(o["series"])
        ext[L.G_MAXGAMES] = o["max_games"]
        ext[L.G_NCARDS] = nc
        ext[L.G_SEATPOS] = self.seatpos
        ext[L.G_ROWLEN] = self.rowlen
        ext[L.G_NLEVELS] = self.nlevels
        ext[L.G_HANDN] = self.handn
        ext[L.G_NPOS] = self.npos
        ext[L.G_HAND0] = self.hand0
        ext[L.G_DISC0] = self.disc0
        ext[L.G_SKIP] = self.skip
        ext[L.G_NA] = self.num_actions
        ext[L.G_TARGET] = L.SERIES_TARGET
        write_card_tables(ext, self.kinds, self.points)
        ext[L.T_ASIDE:L.T_ASIDE + nc] = aside
        for lv in range(1, self.nlevels + 1):
            adj, d2 = adjacency(n, self.rowlen, self.nlevels, lv)
            a0 = L.T_ADJ + (lv - 1) * L.MAXPOS * 4
            ext[a0:a0 + L.MAXPOS * 4] = adj.ravel()
            b0 = L.T_D2 + (lv - 1) * L.MAXPOS * 8
            ext[b0:b0 + L.MAXPOS * 8] = d2.ravel()
        return ext

    # --- text ------------------------------------------------------------------------------
    def pos_name(self, a: int) -> str:
        """Name of position action ``a``: relative row, (level,) column."""
        rel, i = divmod(a, self.seatpos)
        lv, c = divmod(i, self.rowlen)
        return f"r{rel}c{c}" if self.nlevels == 1 else f"r{rel}l{lv}c{c}"

    def card_name(self, c: int) -> str:
        """Kind and points of card id ``c`` (``null`` for the null id)."""
        if c >= self.ncards:
            return "null"
        return f"{L.KIND_NAMES[self.kinds[c]]}{self.points[c]}"

    def max_length(self) -> int:
        """Up to 3 rows per seat dealt a step per card (and the Regrowth choice), <= 6 turns
        per seat of the flip and <= CHAIN_LIMIT effects of <= n + 4 choices, Hermit crab
        picks; times the games of a series."""
        n, o = self.num_players, self.options
        ncards, hand = int(self.cfg[L.G_NCARDS]), int(self.cfg[L.G_HANDN])
        setup = 3 * n * (hand + 1)
        turn = 1 + L.CHAIN_LIMIT * (n + 4)
        one = setup + 6 * n * turn + 2 * ncards
        return one * (o["max_games"] if o["series"] else 1)

    def action_to_str(self, action: int) -> str:
        a = int(action)
        if a < self.hand0:
            return f"position {self.pos_name(a)}"
        if a < self.disc0:
            return f"hand slot {a - self.hand0}"
        if a < self.skip:
            return f"pick card {a - self.disc0} ({self.card_name(a - self.disc0)})"
        return SINGLES[a - self.skip]
