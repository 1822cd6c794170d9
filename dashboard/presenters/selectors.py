"""Kubernetes label selectors for the list pages' filters."""

from __future__ import annotations

import re
from collections.abc import Mapping

from django.utils.translation import gettext as _


class SelectorError(ValueError):
    """A label selector that does not parse; the message says where."""


_SEL_TOKEN = re.compile(r"\s*(!=|==|=|!|,|\(|\)|[^\s!=,()]+)")


# Kubernetes label syntax (apimachinery validation: IsQualifiedName, IsValidLabelValue): a name is
# at most 63 characters of alphanumerics, "-", "_", "." beginning and ending alphanumeric; a key
# may carry a DNS-subdomain prefix ("example.com/") of at most 253 characters.
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _label_key(key: str) -> str:
    prefix, _sep, name = key.rpartition("/")
    if not _LABEL_NAME.fullmatch(name) or (
        _sep and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix))
    ):
        raise SelectorError(_("“%(key)s” is not a valid label key") % {"key": key})
    return key


def _label_value(value: str) -> str:
    if value and not _LABEL_NAME.fullmatch(value):
        raise SelectorError(_("“%(value)s” is not a valid label value") % {"value": value})
    return value


def parse_selector(text: str) -> list[tuple[str, str, frozenset[str]]]:
    """Parse a Kubernetes label selector ("team=ml,env!=dev,tier in (a,b),!legacy,owner") into
    (key, op, values) requirements with op in {"=", "!=", "in", "notin", "exists", "!exists"}.
    Raises SelectorError on bad syntax."""
    tokens = [t for t in _SEL_TOKEN.findall(text) if t.strip()]
    reqs: list[tuple[str, str, frozenset[str]]] = []
    i = 0

    def take() -> str:
        nonlocal i
        if i >= len(tokens):
            raise SelectorError(_("unexpected end of selector"))
        i += 1
        return tokens[i - 1]

    def value() -> str:
        # "a=" (and "a=,b") selects an empty value, as in Kubernetes.
        if i >= len(tokens) or tokens[i] == ",":
            return ""
        return _label_value(take())

    while i < len(tokens):
        tok = take()
        if tok == "!":
            key = _label_key(take())
            reqs.append((key, "!exists", frozenset()))
        else:
            key = tok
            if key in (",", "(", ")", "=", "==", "!="):
                raise SelectorError(_("unexpected “%(tok)s”") % {"tok": key})
            key = _label_key(key)
            nxt = tokens[i] if i < len(tokens) else ","
            if nxt in ("=", "=="):
                take()
                reqs.append((key, "=", frozenset([value()])))
            elif nxt == "!=":
                take()
                reqs.append((key, "!=", frozenset([value()])))
            elif nxt in ("in", "notin"):
                op = take()
                if take() != "(":
                    raise SelectorError(_("expected “(” after %(op)s") % {"op": op})
                values = []
                while True:
                    t = take()
                    if t == ")":
                        break
                    if t != ",":
                        values.append(_label_value(t))
                if not values:
                    raise SelectorError(_("%(op)s needs at least one value in its parentheses") % {"op": op})
                reqs.append((key, op, frozenset(values)))
            else:
                reqs.append((key, "exists", frozenset()))
        if i < len(tokens) and take() != ",":
            raise SelectorError(_("expected “,” between requirements"))
    return reqs


def selector_matches(labels: Mapping[str, str], reqs: list[tuple[str, str, frozenset[str]]]) -> bool:
    for key, op, values in reqs:
        present = key in labels
        if op == "exists" and not present:
            return False
        if op == "!exists" and present:
            return False
        if op in ("=", "in") and (not present or labels[key] not in values):
            return False
        if op in ("!=", "notin") and present and labels[key] in values:
            return False
    return True
