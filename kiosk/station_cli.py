"""Placeholder until its issue lands."""


def register(sub) -> None:
    return None
