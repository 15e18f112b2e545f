"""File names of scripts and goldens: stable per test and per case, never leaving their folder."""

from pathlib import Path

import pytest

from atif_pytest._names import base_name, sanitize


@pytest.mark.parametrize(
    ("nodeid", "expected"),
    [
        ("tests/test_agent.py::test_weather", "test_agent__test_weather"),
        ("tests/test_agent.py::TestWeather::test_paris", "test_agent__TestWeather__test_paris"),
        ("tests/test_agent.py::test_city[paris-oslo]", "test_agent__test_city__paris-oslo"),
        ("tests/test_agent.py::test_city[São Paulo/1]", "test_agent__test_city__S_o_Paulo_1"),
        ("tests/test_agent.py::test_path[../etc]", "test_agent__test_path____etc"),
    ],
)
def test_names_follow_the_node_id(nodeid: str, expected: str):
    assert base_name(Path("tests/test_agent.py"), nodeid) == expected


@pytest.mark.parametrize(
    ("part", "expected"),
    [("..", "_"), (".hidden", "_hidden"), ("", "_"), ("a b\tc", "a_b_c"), ("ok-1.2_x", "ok-1.2_x")],
)
def test_sanitize_keeps_names_inside_their_folder(part: str, expected: str):
    assert sanitize(part) == expected
