"""Strict environment parsing (volcano_ui/env.py)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from volcano_ui.env import env_bool, env_choice, env_int, env_list, env_str


def test_bool_accepts_the_usual_spellings():
    assert env_bool("X", env={"X": "Yes"}) is True
    assert env_bool("X", env={"X": "off"}) is False
    assert env_bool("X", True, env={}) is True


def test_bool_rejects_anything_else_naming_the_variable():
    with pytest.raises(ImproperlyConfigured, match="X='maybe'"):
        env_bool("X", env={"X": "maybe"})


def test_int_bounds_and_garbage():
    assert env_int("N", 5, env={}) == 5
    assert env_int("N", 5, minimum=1, env={"N": " 7 "}) == 7
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        env_int("N", 5, env={"N": "7s"})
    with pytest.raises(ImproperlyConfigured, match="below the minimum"):
        env_int("N", 5, minimum=1, env={"N": "0"})


def test_list_and_choice():
    assert env_list("L", ["a"], env={"L": " x, ,y "}) == ["x", "y"]
    assert env_choice("C", "a", ("a", "b"), env={"C": "b"}) == "b"
    with pytest.raises(ImproperlyConfigured, match="not one of"):
        env_choice("C", "a", ("a", "b"), env={"C": "z"})


def test_file_variant_reads_the_secret_and_refuses_both(tmp_path):
    secret = tmp_path / "s"
    secret.write_text("hunter2\n")
    assert env_str("S", env={"S_FILE": str(secret)}) == "hunter2"
    with pytest.raises(ImproperlyConfigured, match="not both"):
        env_str("S", env={"S_FILE": str(secret), "S": "x"})
    with pytest.raises(ImproperlyConfigured, match="cannot be read"):
        env_str("S", env={"S_FILE": str(tmp_path / "missing")})


def test_time_zone_names_come_from_the_tz_database():
    from volcano_ui.env import env_time_zone

    assert env_time_zone("TZ_", env={}) == "UTC"
    assert env_time_zone("TZ_", env={"TZ_": " Europe/Berlin "}) == "Europe/Berlin"
    # Not found, a directory of the database, a path outside it, the wrong case.
    for bad in ("Mars/Base", "Europe", "../etc/passwd", "/etc/localtime", "utc"):
        with pytest.raises(ImproperlyConfigured, match=f"TZ_={bad!r} is not a time zone"):
            env_time_zone("TZ_", env={"TZ_": bad})
