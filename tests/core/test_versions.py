"""Every env's documentation states the version its ``Game`` carries (a behaviour change bumps
``Game.version``, the golden playthroughs check it, and the doc page must say it)."""

from __future__ import annotations

import re

import pytest

import card_envs


@pytest.mark.parametrize("env_id", card_envs.ENV_IDS)
def test_docstring_states_the_game_version(env_id: str) -> None:
    cls = card_envs.env_class(env_id)
    doc = __import__(cls.__module__, fromlist=["_"]).__doc__ or ""
    found = re.findall(r"Version ``([^`]+)``", doc)
    assert found == [cls.game_class.version], \
        f"{env_id}: module docstring says version {found}, Game.version is " \
        f"{cls.game_class.version!r}"
