"""HyperNodes (topology.volcano.sh/v1alpha1): the network topology tree and what sits where.

A HyperNode is a group of Nodes or of other HyperNodes (``spec.members[]``, each with exactly one
selector: ``exactMatch.name``, ``regexMatch.pattern`` or, for Node members, ``labelMatch`` as a
LabelSelector); ``spec.tier`` counts up from 1 at the leaves, ``spec.tierName`` names the tier.
Volcano matches a regexMatch pattern with Go's ``regexp.MatchString`` (unanchored, RE2 syntax,
time linear in the name); here RE2 itself (google-re2) searches the name, so a pattern means what
it means to Volcano and no pattern can take exponential time. RE2 refuses what Go's regexp refuses
(backreferences, lookaround, possessive repeats), with two lenient corners: it reads ``\\C`` (any
byte) and a repeat count too large to parse (``a{99999999999}``) as literal text where Go reports an
error; neither can match a valid Kubernetes name. Source: Volcano's hypernode_types.go,
pkg/util/hypernode/member_selector.go and the network-topology-aware scheduling design.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import re2

from dashboard.volcano.objects import as_dict, as_list, as_str, count, labels, name, spec, status


@dataclass(frozen=True)
class Member:
    """One ``spec.members[]`` entry: ``type`` ("Node"/"HyperNode"/as written), ``how`` the selector
    kind ("exactMatch", "regexMatch", "labelMatch", "" when none is usable), ``value`` its text."""

    type: str
    how: str
    value: str
    selector: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def error(self) -> str:
        """Why a regexMatch pattern matches nothing here (``pattern_error``), else ""."""
        return pattern_error(self.value) if self.how == "regexMatch" and self.value else ""


# RE2 as Go's regexp reads a pattern: UTF-8, Perl classes and flags, leftmost-first. RE2 would
# otherwise write a log line to stderr for each pattern it rejects.
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


def _utf8(text: str) -> bytes:
    # Names and patterns are searched as UTF-8 bytes, as Go holds them; a lone surrogate (which no
    # API server sends) is kept rather than raising.
    return text.encode("utf-8", "surrogatepass")


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> tuple[Any, str]:
    """``pattern`` compiled once by RE2 and the reason it cannot be: (regex, "") or (None, RE2's
    error message, e.g. "invalid escape sequence: \\1" for a backreference)."""
    try:
        return re2.compile(_utf8(pattern), _RE2_OPTIONS), ""
    except re2.error as exc:
        arg = exc.args[0] if exc.args else ""
        reason = arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)
        return None, reason or exc.__class__.__name__


def pattern_error(pattern: str) -> str:
    """Why RE2 cannot compile ``pattern`` (its error message), "" when it can. Such a pattern
    matches no name here, nor in Volcano (its hypernode controller skips a member whose pattern
    Go's regexp cannot compile)."""
    return _compiled(pattern)[1]


def _regex_matches(pattern: str, target: bytes) -> bool:
    """Whether ``pattern`` matches somewhere in the UTF-8 ``target`` (Go's ``regexp.MatchString``);
    False for a pattern RE2 cannot compile."""
    regex = _compiled(pattern)[0]
    return regex is not None and regex.search(target) is not None


def tier(hn: object) -> int | None:
    value = spec(hn).get("tier")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def tier_name(hn: object) -> str:
    return as_str(spec(hn).get("tierName"))


def reported_node_count(hn: object) -> int | None:
    """``status.nodeCount`` as the hypernode controller wrote it; None when absent."""
    st = status(hn)
    return count(st.get("nodeCount")) if "nodeCount" in st else None


def members(hn: object) -> list[Member]:
    out = []
    for raw in as_list(spec(hn).get("members")):
        m = as_dict(raw)
        sel = as_dict(m.get("selector"))
        mtype = as_str(m.get("type"))
        if "exactMatch" in sel:
            out.append(Member(mtype, "exactMatch", as_str(as_dict(sel["exactMatch"]).get("name")), sel))
        elif "regexMatch" in sel:
            out.append(Member(mtype, "regexMatch", as_str(as_dict(sel["regexMatch"]).get("pattern")), sel))
        elif "labelMatch" in sel:
            out.append(Member(mtype, "labelMatch", _selector_text(as_dict(sel["labelMatch"])), sel))
        else:
            out.append(Member(mtype, "", "", sel))
    return out


def _selector_text(sel: Mapping[str, Any]) -> str:
    parts = [f"{as_str(k)}={as_str(v)}" for k, v in sorted(as_dict(sel.get("matchLabels")).items())]
    for e in (as_dict(x) for x in as_list(sel.get("matchExpressions"))):
        values = ",".join(as_str(v) for v in as_list(e.get("values")))
        parts.append(f"{as_str(e.get('key'))} {as_str(e.get('operator'))} ({values})")
    return ", ".join(parts)


def label_selector_matches(sel: Mapping[str, Any], node_labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector against labels: every matchLabels pair and every matchExpression
    (In, NotIn, Exists, DoesNotExist) must hold; an unknown operator matches nothing."""
    for k, v in as_dict(sel.get("matchLabels")).items():
        if node_labels.get(as_str(k)) != as_str(v):
            return False
    for e in (as_dict(x) for x in as_list(sel.get("matchExpressions"))):
        key, op = as_str(e.get("key")), as_str(e.get("operator"))
        values = {as_str(v) for v in as_list(e.get("values"))}
        present = key in node_labels
        if op == "In" and not (present and node_labels[key] in values):
            return False
        if op == "NotIn" and present and node_labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


@functools.lru_cache(maxsize=256)
def _names_matching(pattern: str, names: tuple[str, ...]) -> frozenset[str]:
    """The ``names`` that ``pattern`` matches. Kept while the names stay the same: Node objects
    change all the time (their status), their names seldom, and each search through RE2's Python
    binding costs microseconds (2,000 nodes x tens of patterns at scale)."""
    regex = _compiled(pattern)[0]
    if regex is None:
        return frozenset()
    return frozenset(n for n in names if regex.search(_utf8(n)) is not None)


def _name_matches(member: Member, target: str) -> bool:
    if member.how == "exactMatch":
        return bool(member.value) and member.value == target
    if member.how == "regexMatch" and member.value:
        return _regex_matches(member.value, _utf8(target))
    return False


def member_matches_node(member: Member, node: object) -> bool:
    if member.type != "Node":
        return False
    if member.how == "labelMatch":
        sel = as_dict(member.selector.get("labelMatch"))
        # An empty selector would select every node; Volcano's CEL rules require some content.
        return bool(sel) and label_selector_matches(sel, labels(node))
    return _name_matches(member, name(node))


@dataclass(frozen=True)
class TreeLine:
    """One line of ``Topology.tree``: HyperNode ``name`` at ``depth`` (0 at the top). ``repeat``:
    "" where its subtree is drawn, "cycle" where it is a member of a HyperNode below it,
    "elsewhere" where it is a member again and drawn in another place. ``under``: the HyperNode
    this line sits under ("" at the top); for "elsewhere", the one it is drawn under instead
    ("" when drawn at the top)."""

    name: str
    depth: int
    repeat: str
    under: str


@dataclass
class Topology:
    """The HyperNode tree. ``children[hn]``: member HyperNodes (existing ones, sorted; ``hn``
    itself when a member selects its own name); ``direct_nodes[hn]``: member Nodes (existing ones,
    sorted); ``parents[hn]``: HyperNodes that list it; ``roots``: HyperNodes no other lists, by tier
    descending then name; ``missing[hn]``: exactMatch members that name nothing in the cluster."""

    hypernodes: dict[str, dict[str, Any]]
    children: dict[str, list[str]]
    direct_nodes: dict[str, list[str]]
    parents: dict[str, list[str]]
    roots: list[str]
    missing: dict[str, list[str]]
    _all_nodes: dict[str, frozenset[str]] = field(default_factory=dict)
    _holders: dict[str, list[str]] = field(default_factory=dict)
    _above: dict[str, frozenset[str]] = field(default_factory=dict)
    _rank: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    def holders(self, node: str) -> list[str]:
        """The HyperNodes that list ``node`` as a direct member."""
        if not self._holders and self.direct_nodes:
            for hn, names in self.direct_nodes.items():
                for n in names:
                    self._holders.setdefault(n, []).append(hn)
        return self._holders.get(node, [])

    def ancestors(self, hn: str) -> set[str]:
        """``hn`` and every HyperNode above it (cycle-safe)."""
        seen: set[str] = set()
        stack = [hn]
        while stack:
            cur = stack.pop()
            if cur not in seen:
                seen.add(cur)
                stack.extend(self.parents.get(cur, ()))
        return seen

    def cycle_of(self, hn: str) -> list[str]:
        """The shortest membership cycle through ``hn``, from ``hn`` back to it ("a", "b", "a";
        "a", "a" for a HyperNode that lists itself); [] when ``hn`` is in none."""
        came_from: dict[str, str] = {}
        queue = [hn]
        for cur in queue:
            for child in self.children.get(cur, ()):
                if child == hn:
                    path = [cur]
                    while path[-1] != hn:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), hn]
                if child not in came_from:
                    came_from[child] = cur
                    queue.append(child)
        return []

    def nodes_under(self, hn: str) -> frozenset[str]:
        """Every Node in ``hn``'s subtree: the union of its members' nodes, as Volcano counts them
        (a node reached through two members counts once). Each HyperNode is visited once (cycles
        and shared members included); a member whose nodes are already known is not walked again."""
        if hn in self._all_nodes:
            return self._all_nodes[hn]
        seen: set[str] = set()
        out: set[str] = set()
        stack = [hn]
        while stack:
            cur = stack.pop()
            if cur in seen:
                continue
            seen.add(cur)
            known = self._all_nodes.get(cur)
            if known is not None:
                out |= known
                continue
            out.update(self.direct_nodes.get(cur, ()))
            stack.extend(self.children.get(cur, ()))
        result = frozenset(out)
        self._all_nodes[hn] = result
        return result

    def tree(self) -> list[TreeLine]:
        """The tree as drawn, depth first from the roots (then from each HyperNode no root reaches,
        by name), members in ``children`` order. A HyperNode's subtree is drawn once, where the
        walk first reaches it; each other place it is a member of gets one line pointing there
        (``repeat`` "elsewhere"), and a member that is also above it on the way down (a membership
        cycle) one line saying so (``repeat`` "cycle"). So the lines number the HyperNodes plus the
        membership edges, whatever members HyperNodes share."""
        lines: list[TreeLine] = []
        drawn: dict[str, str] = {}  # HyperNode -> the parent it is drawn under, "" at the top
        on_path: set[str] = set()

        def draw(top: str) -> None:
            lines.append(TreeLine(top, 0, "", ""))
            drawn[top] = ""
            on_path.add(top)
            stack = [(top, iter(self.children.get(top, ())))]
            while stack:
                cur, members_left = stack[-1]
                child = next(members_left, None)
                if child is None:
                    stack.pop()
                    on_path.discard(cur)
                elif child in on_path:
                    lines.append(TreeLine(child, len(stack), "cycle", cur))
                elif child in drawn:
                    lines.append(TreeLine(child, len(stack), "elsewhere", drawn[child]))
                else:
                    lines.append(TreeLine(child, len(stack), "", cur))
                    drawn[child] = cur
                    on_path.add(child)
                    stack.append((child, iter(self.children.get(child, ()))))

        for name_ in [*self.roots, *sorted(self.hypernodes)]:
            if name_ not in drawn:
                draw(name_)
        return lines

    def smallest_containing(self, node_names: Iterable[str]) -> str | None:
        """The HyperNode of the lowest tier (then fewest nodes, then name) whose subtree holds
        every node of ``node_names``; None when none does or no node is given."""
        wanted = set(node_names)
        if not wanted:
            return None
        # Only the HyperNodes above one of the nodes can hold them all.
        best: tuple[int, int, str] | None = None
        for hn_name in self.above_node(next(iter(wanted))):
            if wanted <= self.nodes_under(hn_name):
                key = self._rank_of(hn_name)
                best = key if best is None or key < best else best
        return best[2] if best else None

    def above_node(self, node: str) -> frozenset[str]:
        """Every HyperNode whose subtree lists ``node`` (its holders and their ancestors)."""
        found = self._above.get(node)
        if found is None:
            candidates: set[str] = set()
            for holder in self.holders(node):
                candidates |= self.ancestors(holder)
            found = self._above[node] = frozenset(candidates)
        return found

    def _rank_of(self, hn: str) -> tuple[int, int, str]:
        """(tier, unknown last; nodes in the subtree; name): smaller is the smaller HyperNode."""
        rank = self._rank.get(hn)
        if rank is None:
            level = tier(self.hypernodes[hn])
            rank = self._rank[hn] = (level if level is not None else 1 << 30, len(self.nodes_under(hn)), hn)
        return rank


class _LabelIndex:
    """Node names by label pair, so a matchLabels-only member costs set intersections instead of
    a selector check per node (200 HyperNodes x 2,000 nodes at scale)."""

    def __init__(self, nodes: Sequence[dict[str, Any]]) -> None:
        self.nodes = nodes
        self.by_pair: dict[tuple[str, str], set[str]] = {}
        for n in nodes:
            for k, v in labels(n).items():
                self.by_pair.setdefault((k, v), set()).add(name(n))

    def matching(self, member: Member) -> set[str]:
        sel = as_dict(member.selector.get("labelMatch"))
        pairs = as_dict(sel.get("matchLabels"))
        if not sel or sel.get("matchExpressions") or not pairs:
            return {name(n) for n in self.nodes if member_matches_node(member, n)}
        sets = [self.by_pair.get((as_str(k), as_str(v)), set()) for k, v in pairs.items()]
        return set.intersection(*sets) if sets else set()


def build_topology(hypernodes: Sequence[dict[str, Any]], nodes: Sequence[dict[str, Any]]) -> Topology:
    by_name = {name(h): h for h in hypernodes if name(h)}
    node_names = tuple(sorted(name(n) for n in nodes if name(n)))
    node_set = set(node_names)
    children: dict[str, list[str]] = {}
    direct: dict[str, list[str]] = {}
    parents: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    label_index = _LabelIndex(nodes)
    for hn_name, hn in by_name.items():
        kids: set[str] = set()
        found: set[str] = set()
        for m in members(hn):
            if m.type == "HyperNode":
                # A member that names the HyperNode itself counts: a cycle of one, shown as any.
                kids.update(x for x in by_name if _name_matches(m, x))
                if m.how == "exactMatch" and m.value and m.value not in by_name:
                    missing.setdefault(hn_name, []).append(m.value)
            elif m.type == "Node":
                if m.how == "labelMatch":
                    found.update(label_index.matching(m))
                elif m.how == "exactMatch":
                    if m.value in node_set:
                        found.add(m.value)
                    elif m.value:
                        missing.setdefault(hn_name, []).append(m.value)
                elif m.how == "regexMatch" and m.value:
                    found.update(_names_matching(m.value, node_names))
        children[hn_name] = sorted(kids)
        direct[hn_name] = sorted(found)
        for k in kids:
            parents.setdefault(k, []).append(hn_name)
    roots = sorted(
        (h for h in by_name if all(p == h for p in parents.get(h, ()))),
        key=lambda h: (-(tier(by_name[h]) or 0), h),
    )
    if not roots and by_name:  # a cycle with no top: start anywhere rather than show nothing
        roots = [sorted(by_name)[0]]
    return Topology(by_name, children, direct, parents, roots, missing)


# The networkTopology.mode the CRD schema defaults to.
DEFAULT_TOPOLOGY_MODE = "hard"


@dataclass(frozen=True)
class NetworkTopology:
    """A ``networkTopology`` block (Job, JobTemplate, PodGroup, partitionPolicy, subGroupPolicy):
    ``mode`` as written ("" when absent: the CRD default is hard), the tier limits as written."""

    mode: str
    highest_tier_allowed: int | None
    highest_tier_name: str

    @property
    def effective_mode(self) -> str:
        """``mode``, or the CRD default "hard" when unset."""
        return self.mode or DEFAULT_TOPOLOGY_MODE

    @property
    def hard(self) -> bool:
        return self.effective_mode == "hard"


def network_topology(block: object) -> NetworkTopology | None:
    """The ``networkTopology`` of an object's spec (or of a policy dict holding one); None when
    there is none."""
    raw = block.get("networkTopology") if isinstance(block, dict) else None
    if not isinstance(raw, dict):
        return None
    allowed = raw.get("highestTierAllowed")
    return NetworkTopology(
        as_str(raw.get("mode")),
        allowed if isinstance(allowed, int) and not isinstance(allowed, bool) else None,
        as_str(raw.get("highestTierName")),
    )
