"""presenters.versions.resource_versions reads well-formed metadata directly; the result equals
the tolerant readers' for any object the CRD schema (or a hostile client) admits."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dashboard.presenters.versions import resource_versions
from dashboard.volcano.objects import name, namespace, resource_version

values = st.one_of(st.none(), st.text(max_size=8), st.integers(), st.lists(st.integers(), max_size=2))
metadata = st.one_of(
    st.none(),
    st.text(max_size=3),
    st.fixed_dictionaries(
        {}, optional={"name": values, "namespace": values, "resourceVersion": values, "uid": values}
    ),
)
objs = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"metadata": metadata, "kind": values}))


def _tolerant(o) -> str:
    return f"{namespace(o)}/{name(o)}@{resource_version(o)}" if o else "-"


@given(st.lists(objs, max_size=6))
def test_the_direct_read_equals_the_tolerant_one(items) -> None:
    assert resource_versions(items) == tuple(_tolerant(o) for o in items)


def test_a_well_formed_object() -> None:
    obj = {"metadata": {"namespace": "ns", "name": "a", "resourceVersion": "42"}}
    assert resource_versions([obj, None, {"metadata": {"name": "q", "resourceVersion": "7"}}]) == (
        "ns/a@42",
        "-",
        "/q@7",
    )
