"""The installed `atif` distribution: what it declares."""

from importlib.metadata import requires, version

import pytest


def test_the_wheel_declares_the_pytest_it_needs_and_this_pytest_meets_it():
    declared = requires("atif") or []
    assert "pytest>=7.0" in declared, declared
    major, minor = (int(part) for part in version("pytest").split(".")[:2])
    assert (major, minor) >= (7, 0)
    # The plugin's first need of 7.0: the stash it keeps its state in.
    assert hasattr(pytest, "StashKey")
