"""What the fuzzing (``tests/support/fuzz.py``) starts from and draws on, per game: plausible
values of the state-dict header keys and of each option, the default deck as plain data, decks built
from scratch, and a case's options with every default spelled out.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

import card_envs
from card_envs.testing import Case
from fuzz_mutations import Draw


# --- state-dict headers ----------------------------------------------------------------------
def header_values(game: Any) -> dict[str, list]:
    """Plausible (right type, maybe wrong) values of the shared header keys."""
    n = game.num_players
    return {
        "phase": list(game.phases),
        "current_player": [None, *range(-1, n + 1)],
        "truncated": [True, False],
        "steps": [0, 1, 2**30, 2**31 - 1, 2**31, -1],
        "rng": [[0, 0], [-1, -1], [2**31 - 1, -2**31], [2**31, 0], [0, 2**32], [1],
                [1, 2, 3], [0.0, 0], [True, 0]],
    }


# --- decks and options -------------------------------------------------------------------------
def default_deck_data(env_id: str) -> Any:
    """The game's default deck as plain data (what a user would pass as ``deck``)."""
    if env_id == "op_glad_ijs_v0":
        from card_envs.op_glad_ijs.parts.deck import default_deck

        return [{"code": c, "count": n, "set": s} for c, n, s in default_deck()]
    if env_id == "flipology_v0":
        from card_envs.flipology.parts.deck import default_deck as flip_deck

        return copy.deepcopy(flip_deck())
    if env_id == "if_it_fits_v0":
        from card_envs.if_it_fits.parts.deck import load_default

        return copy.deepcopy(load_default())
    return None


def random_deck(draw: Draw, env_id: str) -> Any:
    """A deck built from scratch (not a mutation of the default): few or many types, extreme
    counts, points, toys and shapes -- valid as a rule, sometimes just past a limit."""
    ints = st.integers
    if env_id == "op_glad_ijs_v0":
        from card_envs.op_glad_ijs.parts.deck import ANIMALS, HABITATS

        codes = [(f"{a}/{h}", "base") for a in ANIMALS for h in HABITATS] + \
            [(f"animals:{a}+{b}", "two_animals") for i, a in enumerate(ANIMALS)
             for b in ANIMALS[i + 1:]] + \
            [(f"habitats:{a}+{b}", "two_habitats") for i, a in enumerate(HABITATS)
             for b in HABITATS[i + 1:]]
        chosen = draw(st.lists(st.sampled_from(codes), min_size=1, max_size=50, unique=True))
        return [{"code": c, "count": draw(ints(1, 9)), "set": kset} for c, kset in chosen]
    if env_id == "flipology_v0":
        from card_envs.flipology.layout import KIND_NAMES

        groups = draw(st.lists(st.sampled_from(KIND_NAMES), min_size=1, max_size=30))
        return {"cards": [{"kind": k, "points": [0 if k == "null" else draw(ints(0, 31))
                                                 for _ in range(draw(ints(1, 12)))]}
                          for k in groups]}
    if env_id == "if_it_fits_v0":
        sides = st.sampled_from(["", "N", "E", "NS", "EW", "NE", "ESW", "NESW", "SW", "W"])
        toys = st.dictionaries(st.sampled_from(["ball", "mouse", "yarn"]), ints(0, 9))

        def card(name: str) -> dict[str, Any]:
            return {"name": name, "open": draw(sides), "toys": draw(toys),
                    "sprayer": draw(st.sampled_from([0, 0, 1, 9]))}

        return {"box_cards": [card(f"b{i}") for i in range(draw(ints(8, 112)))],
                "start_cards": [card(f"s{i}") for i in range(5)],
                "special_toy_cards": [{"name": f"t{i}", "toys": draw(toys)}
                                      for i in range(draw(ints(0, 11)))]}
    return None


def full_options(case: Case) -> dict[str, Any]:
    """The case's options with every default spelled out and the deck as data."""
    game_class = card_envs.env_class(case.env_id).game_class
    opts = {**{k: copy.deepcopy(s.default) for k, s in game_class.option_specs().items()},
            **copy.deepcopy(case.options)}
    if "deck" in opts and opts["deck"] is None:
        opts["deck"] = default_deck_data(case.env_id)
    if isinstance(opts.get("table"), tuple):
        opts["table"] = list(opts["table"])
    if case.env_id == "isflak_v0" and opts["penguins_per_player"] is None:
        from card_envs.isflak.game import PENGUINS_TABLE

        opts["penguins_per_player"] = PENGUINS_TABLE[opts["num_players"]]
    return opts


def option_values(case: Case) -> dict[str, list]:
    """Plausible values per option (right type, maybe out of range)."""
    g = card_envs.env_class(case.env_id).game_class
    bools = [True, False, 0, 1, None]
    out: dict[str, list] = {
        "num_players": list(range(g.min_players - 1, g.max_players + 2)),
        "start_player": ["random", -1, 0, 1, g.max_players, "first"],
        "reward_mode": [*g.reward_modes, "score"],
    }
    extra = {
        "isflak_v0": {"penguins_per_player": [None, 0, 1, 2, 3, 4, 5, 8, 9, 16, 17],
                      "card_points": [[0, 0, 0], [20, 20, 20], [21, 0, 0], [-1, 1, 1],
                                      {"ace": 1, "face": 1}, [1, 2]]},
        "op_glad_ijs_v0": {"max_turned": [0, 1, 2, 5, 10**6, 10**6 + 1, 2**31],
                           "advanced": bools, "two_animals": bools, "two_habitats": bools,
                           "deck": [None, [], "deck.json"]},
        "flipology_v0": {"variant": ["nature", "great_tree", "tree"], "moon": bools,
                         "wolves": bools, "series": bools, "max_games": [0, 1, 2, 100, 101],
                         "deck": [None, {"cards": []}]},
        "if_it_fits_v0": {"table": [[3, 5], [21, 21], [2, 5], [3, 4], [22, 5], (4, 6),
                                    [3, 5, 1]], "advanced": bools,
                          "deck": [None, "no/such/deck.json", {}]},
    }
    out.update(extra.get(case.env_id, {}))
    return out


