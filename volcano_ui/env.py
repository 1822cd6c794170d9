"""Strict parsers for settings read from the environment.

Every parser raises ``django.core.exceptions.ImproperlyConfigured`` naming the variable and the
value it could not read, so a typo in a deployment fails at start-up with one clear line instead of
silently falling back to a default. Secrets may also be given as ``NAME_FILE``: the path of a file
whose content (stripped of surrounding whitespace) is the value.
"""

from __future__ import annotations

import ipaddress
import os
import zoneinfo
from collections.abc import Mapping

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _raw(name: str, env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    file_name = env.get(f"{name}_FILE")
    if file_name:
        if name in env:
            raise ImproperlyConfigured(f"Set {name} or {name}_FILE, not both.")
        try:
            with open(file_name, encoding="utf-8") as fh:
                return fh.read().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={file_name!r} cannot be read: {exc}") from exc
    return env.get(name)


def env_str(name: str, default: str = "", env: Mapping[str, str] | None = None) -> str:
    """Return the string value of ``name`` (or ``name_FILE``), or ``default`` when unset."""
    value = _raw(name, env)
    return default if value is None else value


def env_bool(name: str, default: bool = False, env: Mapping[str, str] | None = None) -> bool:
    """Parse a boolean: 1/true/yes/on or 0/false/no/off (case-insensitive); anything else is an error."""
    value = _raw(name, env)
    if value is None:
        return default
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use true/false, 1/0, yes/no, on/off).")


def env_int(
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Parse a base-10 integer within ``[minimum, maximum]`` when those bounds are given."""
    value = _raw(name, env)
    if value is None or value.strip() == "":
        return default
    try:
        number = int(value.strip(), 10)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer.") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below the minimum {minimum}.")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"{name}={number} is above the maximum {maximum}.")
    return number


def env_float(
    name: str,
    default: float,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    env: Mapping[str, str] | None = None,
) -> float:
    """Parse a decimal number within ``[minimum, maximum]`` when those bounds are given."""
    value = _raw(name, env)
    if value is None or value.strip() == "":
        return default
    try:
        number = float(value.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number.") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ImproperlyConfigured(f"{name}={value!r} is not a finite number.")
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below the minimum {minimum}.")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"{name}={number} is above the maximum {maximum}.")
    return number


def env_list(name: str, default: list[str], env: Mapping[str, str] | None = None) -> list[str]:
    """Parse a comma-separated list; blank items are dropped, surrounding spaces stripped."""
    value = _raw(name, env)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_choice(
    name: str, default: str, choices: tuple[str, ...], env: Mapping[str, str] | None = None
) -> str:
    """Return one of ``choices``; any other value is an error listing the choices."""
    value = _raw(name, env)
    if value is None or value.strip() == "":
        return default
    value = value.strip()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of: {', '.join(choices)}.")
    return value


def env_time_zone(name: str, default: str = "UTC", env: Mapping[str, str] | None = None) -> str:
    """Return an IANA time zone name ("UTC", "Europe/Berlin") that zoneinfo can load.

    Checked here because Django's own check ("ValueError: Incorrect timezone setting") names
    neither the variable nor what it accepts. Names are case-sensitive, as in the tz database.
    """
    value = _raw(name, env)
    if value is None or value.strip() == "":
        return default
    value = value.strip()
    try:
        zoneinfo.ZoneInfo(value)
    # NotFound: no such zone; ValueError: not a relative key ("/etc/x", "../x"); OSError: a
    # directory of the database such as "Europe".
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise ImproperlyConfigured(
            f"{name}={value!r} is not a time zone of the tz database "
            "(case-sensitive names such as UTC, Europe/Berlin, America/New_York)."
        ) from None
    return value


def env_networks(
    name: str, default: list[str], env: Mapping[str, str] | None = None
) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Parse a comma-separated list of IP addresses or CIDR blocks ("10.0.0.0/8, ::1").

    A bare address means that one host (/32 or /128). Host bits set in a block ("10.0.0.1/8") are an
    error rather than silently masked: a typo in a trust boundary must not widen it unnoticed.
    """
    items = env_list(name, default, env)
    networks = []
    for item in items:
        try:
            networks.append(ipaddress.ip_network(item, strict=True))
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"{name}: {item!r} is not an IP address or CIDR block ({exc})."
            ) from None
    return networks
