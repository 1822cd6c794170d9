"""The Volcano queue hierarchy and the room a gang has in it.

Queues form a tree by spec.parent (an empty parent means ``root``; the queue controller patches
it so). spec.capability is a hard limit for a queue and, in a hierarchy, for every queue below
it; status.allocated is what the scheduler has placed, summed up into parents. A PodGroup is
admitted (Pending -> Inqueue) only when, for every queue from its own up to the root that sets a
capability on a resource it needs, need <= capability - allocated - reserved, where reserved is
the spec.minResources of the PodGroups already Inqueue below that queue (Volcano's capacity
plugin with hierarchy enabled; its event "queue resource quota insufficient").
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dashboard.volcano.gang import podgroup_min_member, podgroup_min_resources
from dashboard.volcano.objects import as_dict, as_str, name, namespace, spec, status
from dashboard.volcano.phases import podgroup_phase
from dashboard.volcano.quantities import resource_amount, resource_sort_key

Obj = Mapping[str, Any]
QueueLookup = Callable[[str], Obj | None]
QueueChildren = Callable[[str], Iterable[Obj]]
InqueuePodGroups = Callable[[str], Iterable[Obj]]

# Walks along parents or down subtrees stop after this many queues (a cycle or absurd depth).
QUEUE_CHAIN_LIMIT = 10_000


def queue_of(obj: object) -> str:
    """spec.queue of a Job or PodGroup; the CRD default is "default"."""
    value = spec(obj).get("queue")
    return value if isinstance(value, str) and value else "default"


def declared_parent(queue: object) -> str:
    """spec.parent as written ("" when absent)."""
    return as_str(spec(queue).get("parent"))


def parent_name(queue: object) -> str | None:
    """The parent the scheduler uses: None for ``root``, "root" for an empty spec.parent."""
    if name(queue) == "root":
        return None
    parent = spec(queue).get("parent")
    return parent if isinstance(parent, str) and parent else "root"


def effective_parent(queue: object, names: Container[str]) -> str:
    """spec.parent, with an empty parent read as "root" when a root Queue is among ``names``
    ("" when the queue hangs nowhere: it is the root, or no root exists)."""
    parent = declared_parent(queue)
    if not parent and name(queue) != "root" and "root" in names:
        return "root"
    return parent


def queue_ancestry(queue: Obj | None, lookup: QueueLookup | None = None) -> list[dict[str, Any]]:
    """``queue`` followed by its ancestors (``parent_name``) as far as ``lookup(name)`` finds
    them; stops at a missing queue, a cycle or QUEUE_CHAIN_LIMIT queues. Without ``lookup``
    just [queue]; [] without a queue."""
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    current = as_dict(queue) if queue else None
    while current is not None and len(chain) < QUEUE_CHAIN_LIMIT:
        qname = name(current)
        if qname in seen:
            break
        seen.add(qname)
        chain.append(current)
        parent = parent_name(current)
        if lookup is None or parent is None:
            break
        found = lookup(parent)
        current = as_dict(found) if found else None
    return chain


# -- the tree ------------------------------------------------------------------------------------


@dataclass
class TreeNode:
    """One queue in the tree. ``parent`` is ``effective_parent``. ``problem`` is "" or why the
    queue hangs outside the real tree: "missing_parent" (spec.parent names no Queue),
    "self_parent" or "cycle" (``cycle``: the parent chain from this queue back to it, e.g.
    ("cyc-a", "cyc-b", "cyc-a"), ("q", "q") for a self-parent). Volcano's webhook rejects all
    three; the API may still hold them."""

    queue: dict[str, Any]
    depth: int
    has_children: bool
    parent: str = ""
    problem: str = ""
    cycle: tuple[str, ...] = ()


Problems = dict[str, tuple[str, tuple[str, ...]]]


def _problems(by_name: dict[str, dict[str, Any]], parent_of: dict[str, str]) -> Problems:
    """{queue: (problem, cycle)} for queues outside the real tree (see TreeNode)."""
    problems: Problems = {}
    for n in by_name:
        parent = parent_of[n]
        if parent == n:
            problems[n] = ("self_parent", (n, n))
        elif parent and parent not in by_name:
            problems[n] = ("missing_parent", ())
    # Follow each queue's parent chain until it ends (no parent, missing, itself) or reaches a
    # queue already resolved; reaching a queue on the current chain closes a cycle.
    resolved: set[str] = set()
    for start in sorted(by_name):
        chain: list[str] = []
        on_chain: dict[str, int] = {}
        n = start
        while n in by_name and n not in resolved and n not in on_chain and n not in problems:
            on_chain[n] = len(chain)
            chain.append(n)
            parent = parent_of[n]
            if not parent or parent == n:
                break
            n = parent
        if n in on_chain and parent_of[n] != n and parent_of[n]:
            members = chain[on_chain[n] :]
            for i, m in enumerate(members):
                loop = members[i:] + members[:i]
                problems[m] = ("cycle", (*loop, m))
        resolved.update(chain)
    return problems


def queue_tree(queues: list[dict[str, Any]]) -> list[TreeNode]:
    """Queues in depth-first order by parent, siblings by name.

    The real tree (queues with no parent, normally just ``root``) comes first; then, each as a
    top-level row of its own and in name order, the queues that cannot hang in it: a missing
    parent, their own parent, or the first (by name) member of a parent cycle, each with its
    descendants. Every queue appears exactly once, at any depth (no recursion)."""
    by_name = {name(q): q for q in queues}
    parent_of = {n: effective_parent(q, by_name) for n, q in by_name.items()}
    problems = _problems(by_name, parent_of)
    children: dict[str, list[dict[str, Any]]] = {}
    roots: list[dict[str, Any]] = []
    for n, q in by_name.items():
        parent = parent_of[n]
        if not parent:
            roots.append(q)
        elif parent != n and parent in by_name:
            children.setdefault(parent, []).append(q)

    detached = [by_name[n] for n, (kind, _c) in problems.items() if kind != "cycle"]
    cycles: dict[tuple[str, ...], str] = {}
    for n, (kind, loop) in problems.items():
        if kind == "cycle":
            key = tuple(sorted(loop[:-1]))
            cycles[key] = min(cycles.get(key, n), n)
    detached += [by_name[n] for n in cycles.values()]

    rows: list[TreeNode] = []
    seen: set[str] = set()

    def walk(top: dict[str, Any]) -> None:
        # An explicit stack: a chain of queues may be deeper than Python's recursion limit.
        # Children are pushed in reverse name order so they pop in name order.
        stack = [(top, 0)]
        while stack:
            q, depth = stack.pop()
            n = name(q)
            if n in seen:
                continue
            seen.add(n)
            kids = sorted((k for k in children.get(n, []) if name(k) not in seen), key=name)
            kind, loop = problems.get(n, ("", ()))
            rows.append(TreeNode(q, depth, bool(kids), parent_of[n], kind, loop))
            stack.extend((kid, depth + 1) for kid in reversed(kids))

    for q in sorted(roots, key=name):
        walk(q)
    for q in sorted(detached, key=name):
        walk(q)
    for q in sorted(queues, key=name):  # defensive: nothing should be left
        if name(q) not in seen:
            walk(q)
    return rows


# -- capability and room -------------------------------------------------------------------------


@dataclass(frozen=True)
class CapabilityLimit:
    """A resource the gang needs more of than a queue's capability allows, ever: ``queue`` is the
    queue whose capability is the tightest in the hierarchy (the gang's own queue or an ancestor)."""

    resource: str
    need: Decimal
    capability: Decimal
    queue: str


def capability_limits(needs: Mapping[str, Decimal], chain: Iterable[Obj]) -> list[CapabilityLimit]:
    """Resources in ``needs`` (Queue resource names) above the tightest spec.capability along
    ``chain`` (queue_ancestry): such a gang is never admitted while the capability stays. Values
    that are no usable amount are ignored."""
    tightest: dict[str, tuple[Decimal, str]] = {}
    for queue in chain:
        qname = name(queue)
        for res, raw in as_dict(spec(queue).get("capability")).items():
            value = resource_amount(raw)
            if value is not None and (as_str(res) not in tightest or value < tightest[as_str(res)][0]):
                tightest[as_str(res)] = (value, qname)
    return [
        CapabilityLimit(res, need, tightest[res][0], tightest[res][1])
        for res, need in needs.items()
        if res in tightest and need > tightest[res][0]
    ]


@dataclass(frozen=True)
class QueueRoom:
    """What one queue of the gang's chain (its own queue, ``depth`` 0, or an ancestor, depth 1 =
    parent) has left of one resource under its spec.capability: capability − allocated − reserved.

    ``allocated`` is the queue's status.allocated, or for a queue whose status.allocated lacks the
    resource the sum over its child queues; None when a value is no usable amount. ``reserved`` is
    the sum of spec.minResources over the Inqueue PodGroups in the queue and, for a parent, in
    every queue below it; ``reservers`` names them as (namespace, name), sorted. Amounts in base
    units (cores, bytes, counts). ``capability`` None: the value is no usable amount."""

    queue: str
    depth: int
    resource: str
    capability: Decimal | None
    allocated: Decimal | None
    reserved: Decimal
    reservers: tuple[tuple[str, str], ...]

    @property
    def left(self) -> Decimal | None:
        """capability − allocated − reserved (negative when over), None when not computable."""
        if self.capability is None or self.allocated is None:
            return None
        return self.capability - self.allocated - self.reserved


def _subtree(queue: Obj, children: QueueChildren | None) -> list[Obj]:
    """``queue`` and every queue below it, each once; at most QUEUE_CHAIN_LIMIT queues."""
    out: list[Obj] = []
    seen: set[str] = set()
    stack: list[Obj] = [queue]
    while stack and len(out) < QUEUE_CHAIN_LIMIT:
        current = as_dict(stack.pop())
        qname = name(current)
        if qname in seen:
            continue
        seen.add(qname)
        out.append(current)
        if children is not None:
            stack.extend(c for c in children(qname) or () if isinstance(c, dict))
    return out


def subtree_allocated(queue: Obj, resource: str, children: QueueChildren | None) -> Decimal | None:
    """status.allocated[resource] of ``queue``; when the key is absent, the sum over its children,
    each by the same rule (0 for a leaf). None when a value found is no usable amount."""
    total = Decimal(0)
    seen: set[str] = set()
    stack: list[Obj] = [queue]
    while stack and len(seen) < QUEUE_CHAIN_LIMIT:
        current = as_dict(stack.pop())
        qname = name(current)
        if qname in seen:
            continue
        seen.add(qname)
        alloc = as_dict(status(current).get("allocated"))
        if resource in alloc:
            value = resource_amount(alloc[resource])
            if value is None:
                return None
            total += value
        elif children is not None:
            stack.extend(c for c in children(qname) or () if isinstance(c, dict))
    return total


def queue_room(
    needs: Mapping[str, Decimal],
    chain: Iterable[Obj],
    *,
    children: QueueChildren | None = None,
    inqueue: InqueuePodGroups | None = None,
    exclude: tuple[str, str] | None = None,
) -> dict[str, list[QueueRoom]]:
    """Per resource in ``needs`` (Queue resource names), the room of each queue in ``chain``
    (queue_ancestry) that sets a capability on it, in chain order; an ancestor's allocated and
    reserved cover its whole subtree (siblings included).

    ``children(name)`` lists a queue's child queues; ``inqueue(name)`` the Inqueue PodGroups whose
    spec.queue is ``name``; either None counts nothing below the queue / nothing reserved.
    ``exclude`` is the gang's own PodGroup (namespace, name): it does not compete with its own
    reservation. Running PodGroups are in status.allocated already and are not counted again."""
    queues = [as_dict(q) for q in chain if q]
    out: dict[str, list[QueueRoom]] = {res: [] for res in needs}
    reserved_in: dict[str, dict[tuple[str, str], dict[str, Decimal]]] = {}

    def reservations(qname: str) -> dict[tuple[str, str], dict[str, Decimal]]:
        if qname not in reserved_in:
            found: dict[tuple[str, str], dict[str, Decimal]] = {}
            for pg in (inqueue(qname) or ()) if inqueue is not None else ():
                key = (namespace(pg), name(pg))
                if key == exclude or podgroup_phase(pg) != "Inqueue":
                    continue
                found[key] = podgroup_min_resources(pg)
            reserved_in[qname] = found
        return reserved_in[qname]

    for depth, queue in enumerate(queues):
        caps = as_dict(spec(queue).get("capability"))
        wanted = [res for res in needs if res in caps]
        if not wanted:
            continue
        held: dict[tuple[str, str], dict[str, Decimal]] = {}
        for member in _subtree(queue, children):
            held.update(reservations(name(member)))
        for res in wanted:
            amounts = {key: a[res] for key, a in held.items() if a.get(res)}
            out[res].append(
                QueueRoom(
                    queue=name(queue),
                    depth=depth,
                    resource=res,
                    capability=resource_amount(caps[res]),
                    allocated=subtree_allocated(queue, res, children),
                    reserved=sum(amounts.values(), Decimal(0)),
                    reservers=tuple(sorted(amounts)),
                )
            )
    return out


def binding_room(rooms: Iterable[QueueRoom]) -> QueueRoom | None:
    """The queue that limits a resource most: the least ``left`` among computable rooms, the
    nearest queue on a tie; None when none is computable."""
    known = [(r.left, r.depth, r) for r in rooms if r.left is not None]
    return min(known, key=lambda k: (k[0], k[1]))[2] if known else None


@dataclass(frozen=True)
class RoomRow:
    """One resource the gang needs at one queue of its chain (``depth`` 0: its own queue).

    ``limited``: the queue sets a capability on the resource (the own queue's row exists without
    one). ``capability``/``allocated``/``deserved`` are amounts (None: no usable amount) and the
    ``*_raw`` values as written (None: absent), for showing invalid values verbatim. ``binding``:
    this queue limits the resource most (``binding_room``). ``deserved*`` only at depth 0."""

    resource: str
    queue: str
    depth: int
    need: Decimal
    limited: bool
    capability: Decimal | None
    capability_raw: Any
    allocated: Decimal | None
    allocated_raw: Any
    reserved: Decimal
    reservers: tuple[tuple[str, str], ...]
    binding: bool = False
    deserved_set: bool = False
    deserved: Decimal | None = None
    deserved_raw: Any = None

    @property
    def unknown(self) -> bool:
        """A value needed for ``left`` is no usable amount."""
        return (self.limited and self.capability is None) or self.allocated is None

    @property
    def left(self) -> Decimal | None:
        if self.capability is None or self.allocated is None:
            return None
        return self.capability - self.allocated - self.reserved

    @property
    def short(self) -> bool:
        """The need exceeds what is left here."""
        left = self.left
        return left is not None and self.need > left

    @property
    def deserved_over_cap(self) -> bool:
        """The own queue's deserved share is above its capability: it can never be reached."""
        return self.deserved is not None and self.capability is not None and self.deserved > self.capability

    @property
    def effective_share(self) -> Decimal | None:
        """The share that counts at the own queue: deserved, or the capability when lower."""
        if self.deserved is None:
            return None
        return min(self.deserved, self.capability) if self.capability is not None else self.deserved

    @property
    def over_deserved(self) -> bool:
        """Placing the gang would take the own queue above its effective share."""
        share = self.effective_share
        return (
            self.depth == 0
            and share is not None
            and self.allocated is not None
            and self.allocated + self.need > share
        )


@dataclass
class Room:
    """The gang's room (``gang_room``): ``rows`` and the Queues and PodGroups read beyond the
    queue and its ancestors (child queues, Inqueue PodGroups), for version keys."""

    rows: list[RoomRow]
    read: list[Obj]


def gang_room(
    queue: Obj | None,
    pg: Obj | None,
    *,
    queue_lookup: QueueLookup | None = None,
    queue_children: QueueChildren | None = None,
    inqueue_podgroups: InqueuePodGroups | None = None,
) -> Room:
    """The room for the PodGroup ``pg``'s minResources (by Queue resource name, in resource order)
    under its queue and each ancestor that sets a capability on it (``queue_room``): per resource
    the own queue's row (also without a capability), then one per limiting ancestor."""
    if not queue or not pg:
        return Room([], [])
    read: list[Obj] = []

    def kids(qname: str) -> list[Obj]:
        found = list(queue_children(qname)) if queue_children is not None else []
        read.extend(found)
        return found

    def waiting(qname: str) -> list[Obj]:
        found = list(inqueue_podgroups(qname)) if inqueue_podgroups is not None else []
        read.extend(found)
        return found

    chain = queue_ancestry(queue, queue_lookup)
    needs = podgroup_min_resources(pg)
    rooms = queue_room(
        needs,
        chain,
        children=kids if queue_children is not None else None,
        inqueue=waiting if inqueue_podgroups is not None else None,
        exclude=(namespace(pg), name(pg)),
    )
    rows: list[RoomRow] = []
    for res in sorted(needs, key=resource_sort_key):
        rows.extend(_resource_rows(res, needs[res], queue, chain, rooms[res]))
    return Room(rows, read)


def _resource_rows(
    res: str, need: Decimal, queue: Obj, chain: list[dict[str, Any]], rooms: list[QueueRoom]
) -> list[RoomRow]:
    """The rows of one resource ``res`` the gang needs (``need``): its own ``queue``'s row when that
    queue sets no capability on it, then one per queue of ``chain`` whose capability limits it
    (``rooms``, from ``queue_room``)."""
    alloc = as_dict(status(queue).get("allocated"))
    des = as_dict(spec(queue).get("deserved"))
    rows: list[RoomRow] = []
    binding = binding_room(rooms)
    own = next((r for r in rooms if r.depth == 0), None)
    des_set, des_amount, des_raw = res in des, resource_amount(des.get(res)), des.get(res)
    if own is None:  # the own queue sets no capability on it: "no limit" there
        rows.append(
            RoomRow(
                res,
                name(queue),
                0,
                need,
                limited=False,
                capability=None,
                capability_raw=None,
                allocated=resource_amount(alloc[res]) if res in alloc else Decimal(0),
                allocated_raw=alloc.get(res),
                reserved=Decimal(0),
                reservers=(),
                deserved_set=des_set,
                deserved=des_amount,
                deserved_raw=des_raw,
            )
        )
    for room in rooms:
        level = chain[room.depth]
        rows.append(
            RoomRow(
                res,
                room.queue,
                room.depth,
                need,
                limited=True,
                capability=room.capability,
                capability_raw=as_dict(spec(level).get("capability")).get(res),
                allocated=room.allocated,
                allocated_raw=as_dict(status(level).get("allocated")).get(res),
                reserved=room.reserved,
                reservers=room.reservers,
                binding=room is binding,
                deserved_set=des_set and room.depth == 0,
                deserved=des_amount if room.depth == 0 else None,
                deserved_raw=des_raw if room.depth == 0 else None,
            )
        )
    return rows


# -- leftovers -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Leftover:
    """A Running PodGroup with fewer live pods than its minMember whose owner is gone (its
    Volcano Job is not found, or it has no owner at all): likely left behind by a deleted Job.
    ``pods``: its pods not finished (phase neither Succeeded nor Failed); ``holds``:
    spec.minResources by Queue resource name, in base units."""

    namespace: str
    name: str
    pods: int
    min_member: int | None
    holds: Mapping[str, Decimal]


def _live(pod: Obj) -> bool:
    return as_str(status(pod).get("phase")) not in ("Succeeded", "Failed")


def possible_leftovers(
    podgroups: Iterable[Obj],
    pods_of: Callable[[Any], Iterable[Obj]],
    owner_found: Callable[[Any], bool],
) -> list[Leftover]:
    """The Running PodGroups among ``podgroups`` that set minResources, have fewer live pods
    (``pods_of``) than minMember, and whose owner is gone (``owner_found`` False), by namespace
    and name. Volcano's enqueue (proportion/capacity plugins) reserves a Running PodGroup's
    minResources beyond its allocated pods only while it has at least minMember allocated pods;
    versions before v1.6 judged by status.running instead, which a PodGroup left behind may
    still report. Either way such a PodGroup is a likely reason the scheduler refuses a queue
    whose numbers show room."""
    out: list[Leftover] = []
    for pg in podgroups:
        if podgroup_phase(pg) != "Running":
            continue
        holds = podgroup_min_resources(pg)
        if not holds or owner_found(pg):
            continue
        live = sum(1 for pod in pods_of(pg) if _live(pod))
        need = podgroup_min_member(pg)
        if live < max(1, need or 0):  # an invalid minMember (None): below a gang of at least 1
            out.append(Leftover(namespace(pg), name(pg), live, need, holds))
    out.sort(key=lambda x: (x.namespace, x.name))
    return out


def leftovers_hold(leftovers: Iterable[Leftover]) -> dict[str, Decimal]:
    """The minResources the leftovers hold, summed per resource (in resource order)."""
    total: dict[str, Decimal] = {}
    for left in leftovers:
        for res, amount in left.holds.items():
            total[res] = total.get(res, Decimal(0)) + amount
    return {res: total[res] for res in sorted(total, key=resource_sort_key)}
