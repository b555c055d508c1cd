"""Three Cards (``toy_v0``): a test-only toy game that joins card-envs through its manifest
alone (``card_envs.register(toy_cards.manifest.MANIFEST)``), proving that a game folder with the
standard files is all a new game needs."""
