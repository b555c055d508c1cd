"""Shared machinery of every game: engine protocol, AEC base env, batched driver, raw engine."""
