"""Plain-Python reference of Op Glad IJs' rules, the determinization, and position helpers for
the tests in ``tests/games/op_glad_ijs/`` (rules: ``docs/rules/op_glad_ijs.md``).

Judging, the action table, the legal mask and the observation are re-implemented here from the
rules and the env docstring (``ref_*``, working on card codes and state dicts). Positions are
built as state dicts (cards conserved: the rest of the deck goes onto draw piles) and loaded
into the raw env; windows are played as one AEC step per seat.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, settings

import card_envs
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs.layout import NUM_ANIMALS
from card_envs.op_glad_ijs.parts.deck import ANIMALS, HABITATS
from card_envs.op_glad_ijs.parts.linked import draw_slots, types
from card_envs.op_glad_ijs.queries import pending_hidden
from card_envs.op_glad_ijs.statedict import legal_mask

ENV_ID = "op_glad_ijs_v0"
A, H, NA = list(ANIMALS), list(HABITATS), NUM_ANIMALS  # animal a belongs in habitat a
# the spec's default deck: normal cards, right-habitat cards, 2-animals, 2-habitats
NORMAL = [f"{A[a]}/{H[h]}" for a in range(NA) for h in range(NA) if h != a]
RIGHT = [f"{A[a]}/{H[a]}" for a in range(NA)]
ANIMALS2 = [f"animals:{A[a]}+{A[(a + 1) % NA]}" for a in range(NA)]
HABITATS2 = [f"habitats:{H[h]}+{H[(h + 2) % NA]}" for h in range(NA)]


def hyp(n: int = 60) -> settings:
    return settings(max_examples=n, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def codes_for(opts: dict) -> list[str]:
    adv = opts.get("advanced", False)
    return NORMAL + RIGHT + (ANIMALS2 if adv or opts.get("two_animals") else []) + \
        (HABITATS2 if adv or opts.get("two_habitats") else [])


def deck_for(opts: dict) -> Counter:
    return Counter({c: (3 if c in NORMAL else 1) for c in codes_for(opts)})


def raw(**opts):
    return card_envs.make_raw(ENV_ID, **opts)


# --- reference rules (from the spec) -----------------------------------------------------------
def card(code: str) -> tuple[str, set[int], set[int]]:
    """(kind, animals, habitats) of a code."""
    if code.startswith("animals:"):
        return "animals", {A.index(x) for x in code[8:].split("+")}, set()
    if code.startswith("habitats:"):
        return "habitats", set(), {H.index(x) for x in code[9:].split("+")}
    a, h = code.split("/")
    return ("right" if A.index(a) == H.index(h) else "normal"), {A.index(a)}, {H.index(h)}


def ref_judge(middle: list[str], slap: tuple[str, ...]) -> str:
    """'pass', 'right', 'animals', 'habitats', 'pair' (correct) or 'fault'."""
    if not slap:
        return "pass"
    normal = [card(c) for c in middle if card(c)[0] == "normal"]
    vis_a = {x for _, a, _ in normal for x in a}
    vis_h = {x for _, _, h in normal for x in h}
    if len(slap) == 1:
        kind, an, hab = card(slap[0])
        if kind == "right":
            return "right"
        if kind == "animals":
            return "animals" if an <= vis_h else "fault"
        if kind == "habitats":
            return "habitats" if hab <= vis_a else "fault"
        return "fault"
    (k1, a1, h1), (k2, a2, h2) = card(slap[0]), card(slap[1])
    if k1 in ("animals", "habitats") or k2 in ("animals", "habitats"):
        return "fault"
    return "pair" if (a1 & h2) or (a2 & h1) else "fault"


def ref_actions(codes: list[str]) -> list[tuple[str, ...]]:
    """The action table of the docstring: pass, singles, unordered pairs t <= u."""
    T = len(codes)
    return [()] + [(c,) for c in codes] + [(codes[t], codes[u]) for t in range(T)
                                           for u in range(t, T)]


def ref_mask(codes: list[str], middle: list[str]) -> list[int]:
    cnt = Counter(middle)
    out = []
    for s in ref_actions(codes):
        need = Counter(s)
        out.append(int(all(cnt[c] >= k for c, k in need.items())))
    return out


def ref_obs(sd: dict, seat: int, codes: list[str]) -> list[int]:
    n = len(sd["won_piles"])
    idx = {c: i for i, c in enumerate(codes)}
    acts = ref_actions(codes)
    mid = Counter(sd["middle"])
    out = [mid[c] for c in codes]
    own = sd["choices"][seat]
    own_t = [idx[c] for c in acts[own]] if own is not None else []
    out += [idx[sd["last_turned"]], sd["window"], (sd["turned_by"] - seat) % n,
            (sd["turner"] - seat) % n, int(own is not None)]
    out += (own_t + [-1, -1])[:2]
    known = Counter()
    for r in range(n):
        q = (seat + r) % n
        dp, wp, kn = sd["draw_piles"][q], sd["won_piles"][q], sd["known_bottom"][q]
        last = sd["last_slaps"][q]
        lt = [idx[c] for c in acts[last]] if last is not None else []
        out += [len(dp), len(wp), idx[wp[-1]] if wp else -1, kn] + (lt + [-1, -1])[:2]
        known.update(dp[len(dp) - kn:] if kn else [])
    out += [known[c] for c in codes]
    return out


# --- the determinization ----------------------------------------------------------------------
def ref_resample(game, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
    """The determinization in numpy (Op Glad IJs' ``resample`` before the kernel
    ``determinize``): the unknown parts of all draw piles redrawn pooled (a uniform permutation
    of their cards over their slots; the public bottom cards stay), other seats' unresolved
    choices of this window uniform among the legal actions; the RNG words are kept."""
    out = state.copy()
    n = game.num_players
    unknown = []  # slots of the unknown cards, per pile from the public bottom part up
    for q in range(n):
        unknown += draw_slots(out, q)[int(out[L.KNOWN + q]):]
    pool = sorted(types(out, unknown))  # sorted: the draw depends on rng alone
    pool = rng.permutation(np.asarray(pool, np.int32)) if pool else pool
    for s, t in zip(unknown, pool):
        out[L.CARDS + 2 * s] = t
    legal = np.flatnonzero(legal_mask(game, out))
    for q in pending_hidden(out, observer):
        out[L.CHOICE + q] = int(rng.choice(legal))
    return out


# --- building positions ------------------------------------------------------------------------
def setup(opts: dict | None = None, middle=(), won=None, draws=None, known=None,
          turned_by: int = 0, window: int = 0, rest_to: int | None = None, rng=None):
    """Raw env at the start of a window with the given middle (turned order), won piles
    (top last) and draw piles (top first); the rest of the deck goes on top of the draw piles
    (round robin), or under seat ``rest_to``'s won pile."""
    opts = dict(opts or {})
    env = raw(**opts)
    env.reset(seed=0)
    n = env.game.num_players
    won = [list(w) for w in (won or [[] for _ in range(n)])]
    draws = [list(d) for d in (draws or [[] for _ in range(n)])]
    pool = deck_for(opts)
    for c in list(middle) + [c for w in won for c in w] + [c for d in draws for c in d]:
        pool[c] -= 1
        assert pool[c] >= 0, c
    rest = sorted(pool.elements())
    random.Random(1).shuffle(rest)
    if rest_to is None:
        for i, c in enumerate(rest):
            draws[i % n].insert(0, c)
    else:
        won[rest_to] = rest + won[rest_to]
    d = env.state_dict()
    d.update(middle=list(middle), won_piles=won, draw_piles=draws,
             known_bottom=list(known or [0] * n), turned_by=turned_by,
             turner=(turned_by + 1) % n, window=window, turned_count=max(1, len(middle)),
             last_turned=middle[-1], choices=[None] * n, last_slaps=[None] * n,
             last_gains=[0] * n, current_player=0, phase="react")
    if rng is not None:
        d["rng"] = list(rng)
    env.load_state_dict(d)
    return env


def act(env, *codes: str) -> int:
    """Action index of slapping ``codes`` (computed from the documented table)."""
    table = ref_actions(env.game.codes)
    key = tuple(sorted(codes, key=env.game.codes.index))
    return table.index(key)


def window(env, *slaps) -> dict:
    """Play one window: ``slaps[q]`` is () for pass or a tuple of codes."""
    for q, s in enumerate(slaps):
        assert env.agent_selection == f"player_{q}"
        env.step(act(env, *s) if s else 0)
    return env.state_dict()
