"""The allocation-candidate engine behind GET /allocation_candidates.

It answers "which sets of providers could satisfy these request groups?"
with upstream Placement's semantics, but works on whole sets: a handful of
SQL queries load the providers with enough free capacity for each requested
(resource class, amount), the sharing providers and their anchors, and then
the trees involved (providers, inventories with usage, traits); everything
after that is set arithmetic in memory, never a query per provider.

Terms: a *tree* is a root provider and its descendants; the *anchor* of an
allocation request is the root of the tree it is for (a sharing provider's
resources can be used by every tree it shares an aggregate with).
"""

import itertools
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import os_traits
from django.conf import settings
from django.db import connection

from placement import errors
from placement.models import (
    Inventory,
    PlacementAggregate,
    ResourceClass,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
)
from placement.services.providers import providers_in_aggregates

if TYPE_CHECKING:
    from placement.api.queryparams import RequestGroup, RequestWideParams

SHARING_TRAIT = os_traits.MISC_SHARES_VIA_AGGREGATE
# Above this many ids, read whole tables and filter in Python instead of
# sending huge IN (...) lists (SQLite caps bound parameters).
MAX_IN_LIST = 5000
# Trees read at first by a limited single-group request over the whole cloud
# (at least its limit; each further slice twice the one before).
SLICE_ROOTS = 200

DEPTH_FIRST = "depth-first"
BREADTH_FIRST = "breadth-first"
GENERATION_STRATEGIES = (DEPTH_FIRST, BREADTH_FIRST)

RP = ResourceProvider._meta.db_table
INV = Inventory._meta.db_table
RP_TRAIT = ResourceProviderTrait._meta.db_table
RP_AGG = ResourceProviderAggregate._meta.db_table
AGG = PlacementAggregate._meta.db_table


# (provider id, resource class name, amount)
Resource = tuple[int, str, int]
# (group suffix, the uuids of the providers that satisfied it)
GroupMapping = tuple[str, frozenset[str]]
# provider id -> the id of its tree's root
Roots = dict[int, int]


class NoCandidates(Exception):
    """Some filter already rules out every candidate."""


def _query(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _in_clause(column: str, ids: Collection[int]) -> tuple[str, list[Any]]:
    """(" AND column IN (...)", params), or no filter for big sets."""
    return _ids_clause(column, ids)


def _ids_clause(column: str, ids: Collection[int], conjunction: str = "AND") -> tuple[str, list[Any]]:
    """(" AND column IN (...)", params), or no filter for big sets. On
    PostgreSQL the ids are one array parameter: a placeholder per id cost
    the client more to bind than the query took (thousands of ids)."""
    if len(ids) > MAX_IN_LIST:
        return "", []
    if connection.vendor == "postgresql":
        return f" {conjunction} {column} = ANY(%s::bigint[])", [_id_array(ids)]
    return f" {conjunction} {column} IN ({', '.join(['%s'] * len(ids))})", list(ids)


def _id_array(ids: Iterable[int]) -> str:
    """``ids`` as one PostgreSQL array literal, bound as a single parameter."""
    return "{" + ",".join(str(int(i)) for i in ids) + "}"


# --- results ---------------------------------------------------------------------


@dataclass(slots=True)
class AllocationRequest:
    """One way to satisfy the request: ``resources`` is a tuple of
    (provider id, class name, amount); ``mappings`` maps group suffixes to the
    provider uuids that satisfied them."""

    anchor: int
    resources: tuple[Resource, ...]
    mappings: tuple[GroupMapping, ...]
    use_same_provider: bool = False

    def key(self) -> tuple[frozenset[Resource], tuple[GroupMapping, ...]]:
        return (frozenset(self.resources), self.mappings)


@dataclass(slots=True)
class Provider:
    id: int
    uuid: str
    parent_id: int | None
    root_id: int
    traits: set[str] = field(default_factory=set)
    # class name -> (capacity, used, max_unit)
    resources: dict[str, tuple[int, int, int]] = field(default_factory=dict)


@dataclass
class Candidates:
    allocation_requests: list[AllocationRequest]
    providers: dict[int, Provider]  # id -> Provider, for the trees of the allocation requests
    # The ids of the resource classes and traits the providers have, by name
    # (upstream lists them in provider summaries in id order).
    class_ids: dict[str, int] = field(default_factory=dict)
    trait_ids: dict[str, int] = field(default_factory=dict)
    # The search they were found by: held as long as they are, so that its
    # objects (an unlimited query reads every provider's inventories) are
    # freed with theirs, after the response is sent, not before it.
    search: "Search | None" = None


# --- the search ------------------------------------------------------------------


class Search:
    """State shared by all request groups of one GET /allocation_candidates."""

    def __init__(self, wide: "RequestWideParams", nested_aware: bool) -> None:
        self.wide = wide
        self.nested_aware = nested_aware
        self.has_trees = ResourceProvider.objects.filter(parent__isnull=False).exists()
        self.sharing = set(
            ResourceProviderTrait.objects.filter(trait__name=SHARING_TRAIT).values_list(
                "resource_provider_id", flat=True
            )
        )
        self.providers: dict[int, Provider] = {}  # id -> Provider, from load_snapshot
        # The ids of the classes and traits load_snapshot has read, by name.
        self.class_ids: dict[str, int] = {}
        self.trait_ids: dict[str, int] = {}
        # class id -> [(provider id, root id, free, min_unit, max_unit, step_size)]
        self.inventory: defaultdict[int, list[tuple[int, int, int, int, int, int]]] = defaultdict(list)
        self._capacity: dict[tuple[int, int], Roots] = {}
        # When the search reads the cloud a slice of trees at a time: the
        # roots of the current slice (candidates are anchored in it only).
        self.chunk_roots: set[int] | None = None
        self._anchors: defaultdict[int, set[int]] | None = None
        self._chunk_range: tuple[int, int] | None = None
        self._chunk_ids: str | None = None  # on PostgreSQL, the slice's provider ids (an array literal)
        # root_required: the roots a candidate may be anchored in (None: any
        # root), and those it may not (forbidden traits: every provider that
        # has one, so that no decision reads every root of a large cloud).
        self.anchor_roots = self._anchor_roots()
        self.anchor_forbidden = self._anchor_forbidden()

    # -- loading --

    def load_snapshot(self, scope: Collection[int] | None, roots_between: tuple[int, int] | None = None) -> None:
        """Read, in three queries, everything the search needs about the
        providers in ``scope`` (ids, or None for all): their tree links, their
        inventories with current usage, and their traits. With
        ``roots_between`` (lowest, highest root id), the providers of those
        trees are read too."""
        if scope is not None and not scope and roots_between is None:
            return

        def _in_clause(column: str, ids: Collection[int]) -> tuple[str, list[Any]]:
            if roots_between is None:
                return _ids_clause(column, ids)
            ids_sql, ids_params = _ids_clause(column, ids, "OR") if ids else ("", [])
            trees = (
                "root_id BETWEEN %s AND %s"
                if column == "id"
                else f"{column} IN (SELECT id FROM {RP} WHERE root_id BETWEEN %s AND %s)"
            )
            return f" AND ({trees}{ids_sql})", [*roots_between, *ids_params]

        rp_clause, rp_params = _in_clause("id", scope) if scope is not None else ("", [])
        rows = _query(f"SELECT id, uuid, parent_id, root_id FROM {RP} WHERE 1=1{rp_clause}", rp_params)
        providers = self.providers
        for pid, uuid, parent_id, root_id in rows:
            providers[pid] = Provider(pid, uuid, parent_id, root_id, set(), {})
        rows_clause = _in_clause
        if roots_between is not None and connection.vendor == "postgresql":
            # A slice's rows by the ids of its providers just read: PostgreSQL
            # reads them by index (for the slice's subquery it scanned the
            # whole inventory table, 45 ms at 50,000 providers against 7).
            chunk_ids = self._chunk_ids = _id_array(row[0] for row in rows)

            def rows_clause(column: str, ids: Collection[int]) -> tuple[str, list[Any]]:
                return f" AND {column} = ANY(%s::bigint[])", [chunk_ids]

        inv_clause, inv_params = rows_clause("inv.resource_provider_id", scope) if scope is not None else ("", [])
        class_names = dict(ResourceClass.objects.values_list("id", "name"))
        self.class_ids.update((name, class_id) for class_id, name in class_names.items())
        inventory = self.inventory
        for pid, class_id, total, reserved, ratio, min_unit, max_unit, step, used in _query(
            f"SELECT inv.resource_provider_id, inv.resource_class_id, inv.total, inv.reserved, "
            f"inv.allocation_ratio, inv.min_unit, inv.max_unit, inv.step_size, inv.used "
            f"FROM {INV} inv WHERE 1=1{inv_clause}",
            inv_params,
        ):
            provider = providers.get(pid)
            if provider is None:
                continue
            capacity = int((total - reserved) * ratio)
            provider.resources[class_names[class_id]] = (capacity, used, max_unit)
            inventory[class_id].append((pid, provider.root_id, capacity - used, min_unit, max_unit, step))
        trait_clause, trait_params = rows_clause("resource_provider_id", scope) if scope is not None else ("", [])
        trait_rows = _query(
            f"SELECT resource_provider_id, trait_id FROM {RP_TRAIT} WHERE 1=1{trait_clause}", trait_params
        )
        names = dict(Trait.objects.filter(id__in={t for _p, t in trait_rows}).values_list("id", "name"))
        self.trait_ids.update((name, trait_id) for trait_id, name in names.items())
        for pid, trait_id in trait_rows:
            provider = providers.get(pid)
            if provider is not None:
                provider.traits.add(names[trait_id])

    def load_chunk(self, roots: Sequence[int]) -> None:
        """Forget the capacity read so far and read the trees of ``roots``
        (every root between the lowest and the highest of them) and the
        sharing providers instead."""
        self.inventory = defaultdict(list)
        self._capacity = {}
        self.chunk_roots = set(roots)
        self._chunk_range = (min(roots), max(roots))
        self._anchors = None  # the sharing providers' anchors in this slice only
        self.load_snapshot(self.sharing, roots_between=self._chunk_range)

    def providers_with_capacity(self, class_id: int, amount: int, root_id: int | None = None) -> Roots:
        """{provider id: root id} for providers that can take ``amount`` more."""
        key = (class_id, amount)
        if key not in self._capacity:
            self._capacity[key] = {
                pid: root
                for pid, root, free, min_unit, max_unit, step in self.inventory.get(class_id, ())
                if min_unit <= amount <= max_unit and amount % step == 0 and amount <= free
            }
        found = self._capacity[key]
        if root_id is not None:
            return {rp: root for rp, root in found.items() if root == root_id}
        return found

    def sharing_anchors(self) -> defaultdict[int, set[int]]:
        """{sharing provider id: {root ids of trees sharing an aggregate with
        it}} (while the search reads a slice of trees: those of the slice's
        range of roots only)."""
        if self._anchors is None:
            anchors: defaultdict[int, set[int]] = defaultdict(set)
            self._anchors = anchors
            if self.sharing:
                clause, params = _in_clause("mine.resource_provider_id", self.sharing)
                if self._chunk_ids is not None:
                    # the slice's providers by id: PostgreSQL then reads
                    # their links by index, not every link of the cloud
                    clause += " AND other.resource_provider_id = ANY(%s::bigint[])"
                    params = [*params, self._chunk_ids]
                elif self._chunk_range is not None:
                    clause += " AND rp.root_id BETWEEN %s AND %s"
                    params = [*params, *self._chunk_range]
                rows = _query(
                    f"SELECT mine.resource_provider_id, rp.root_id FROM {RP_AGG} mine "
                    f"JOIN {RP_AGG} other ON other.aggregate_id = mine.aggregate_id "
                    f"JOIN {RP} rp ON rp.id = other.resource_provider_id WHERE 1=1{clause}",
                    params,
                )
                for sharing_id, root_id in rows:
                    if sharing_id in self.sharing:
                        anchors[sharing_id].add(root_id)
        return self._anchors

    def _anchor_roots(self) -> set[int] | None:
        """Roots with every trait root_required requires (None: any root)."""
        required = self.wide.root_required
        if not required:
            return None
        ids = _trait_ids(required | self.wide.root_forbidden)
        roots: set[int] | None = None
        for name in required:
            having = set(
                ResourceProviderTrait.objects.filter(
                    trait_id=ids[name], resource_provider__parent__isnull=True
                ).values_list("resource_provider_id", flat=True)
            )
            roots = having if roots is None else roots & having
        if not roots:
            raise NoCandidates()
        return roots

    def _anchor_forbidden(self) -> set[int]:
        """Providers with a trait root_required forbids (a root among them anchors nothing)."""
        forbidden = self.wide.root_forbidden
        if not forbidden:
            return set()
        ids = _trait_ids(forbidden)
        return _providers_with_any_trait({ids[name] for name in forbidden})

    def anchor_allowed(self, root_id: int) -> bool:
        return (self.anchor_roots is None or root_id in self.anchor_roots) and root_id not in self.anchor_forbidden


def _trait_ids(names: Collection[str]) -> dict[str, int]:
    found = dict(Trait.objects.filter(name__in=names).values_list("name", "id"))
    missing = sorted(set(names) - set(found))
    if missing:
        raise errors.Invalid(f"No such trait(s): {', '.join(missing)}.")
    return found


def _roots_of(provider_ids: Collection[int]) -> set[int]:
    """The roots of the trees of ``provider_ids``."""
    if not provider_ids:
        return set()
    if len(provider_ids) > MAX_IN_LIST:
        return {root for pid, root in _query(f"SELECT id, root_id FROM {RP}") if pid in provider_ids}
    clause, params = _in_clause("id", provider_ids)
    return {root for (root,) in _query(f"SELECT DISTINCT root_id FROM {RP} WHERE 1=1{clause}", params)}


def _providers_of_roots(root_ids: Collection[int]) -> set[int]:
    """Every provider of the trees of ``root_ids`` (at most MAX_IN_LIST)."""
    if not root_ids:
        return set()
    clause, params = _in_clause("root_id", root_ids)
    return {pid for (pid,) in _query(f"SELECT id FROM {RP} WHERE 1=1{clause}", params)}


def _providers_with_any_trait(trait_ids: Collection[int]) -> set[int]:
    return set(
        ResourceProviderTrait.objects.filter(trait_id__in=trait_ids).values_list("resource_provider_id", flat=True)
    )


class GroupSearch:
    """One request group, its filters resolved to ids."""

    def __init__(self, search: Search, group: "RequestGroup", class_ids: Mapping[str, int]) -> None:
        self.search = search
        self.group = group
        self.suffix = group.suffix
        self.resources = {class_ids[name]: amount for name, amount in group.resources.items()}
        self.class_names = {class_ids[name]: name for name in group.resources}
        names = set(group.forbidden_traits).union(*group.required_traits)
        ids: dict[str, int] = _trait_ids(names) if names else {}
        self.required = [{ids[n] for n in any_of} for any_of in group.required_traits]
        self.required_names = [set(any_of) for any_of in group.required_traits]
        self.forbidden = {ids[n] for n in group.forbidden_traits}
        self.forbidden_names = set(group.forbidden_traits)
        self.in_aggregates: set[int] | None = None
        if group.member_of:
            self.in_aggregates = providers_in_aggregates(group.member_of)
            if not self.in_aggregates:
                raise NoCandidates()
        self.bad_aggregates = (
            providers_in_aggregates([group.forbidden_aggregates]) if group.forbidden_aggregates else set()
        )
        self.tree_root: int | None = None
        if group.in_tree:
            tree = ResourceProvider.objects.filter(uuid=group.in_tree).values_list("root_id", flat=True).first()
            if tree is None:
                raise NoCandidates()
            self.tree_root = tree
        self.with_capacity: dict[int, Roots] = {}

    def scope(self) -> set[int] | None:
        """Ids of the only providers this group can use, or None (any).

        Without nested providers a candidate is one provider, or a compute
        node plus sharing providers, so it must involve a provider of the
        requested aggregates (or that carries the required traits, when no
        sharing provider has any of them). With nested providers the same
        holds for whole trees: the scope is every provider of the trees
        that have such a provider (or whose root is one, or that a sharing
        provider of the aggregates serves), plus the sharing providers."""
        search = self.search
        if self.tree_root is not None:
            return None
        if search.has_trees:
            return self._tree_scope()
        scope: set[int] | None = None
        if self.in_aggregates is not None:
            scope = set(self.in_aggregates)
        if self.required and not self._sharing_has_required_traits():
            scope = self._with_required_traits() if scope is None else scope & self._with_required_traits()
        if scope is None:
            return None
        return scope | search.sharing

    def _sharing_has_required_traits(self) -> bool:
        return bool(set().union(*(_providers_with_any_trait(a) for a in self.required)) & self.search.sharing)

    def _with_required_traits(self) -> set[int]:
        with_traits: set[int] | None = None
        for any_of in self.required:
            found = _providers_with_any_trait(any_of)
            with_traits = found if with_traits is None else with_traits & found
        assert with_traits is not None  # self.required is not empty
        return with_traits

    def _tree_scope(self) -> set[int] | None:
        search = self.search
        roots: set[int] | None = None
        if self.in_aggregates is not None:
            roots = _roots_of(self.in_aggregates)
            anchors = search.sharing_anchors()
            for sharing_id in search.sharing & self.in_aggregates:
                roots |= anchors.get(sharing_id, set())
        if self.required and not self._sharing_has_required_traits():
            for any_of in self.required:
                found = _roots_of(_providers_with_any_trait(any_of))
                roots = found if roots is None else roots & found
        if roots is not None and search.anchor_roots is not None:
            roots &= search.anchor_roots
        if roots is not None:
            roots -= search.anchor_forbidden
        if roots is None or len(roots) > MAX_IN_LIST:
            return None
        return _providers_of_roots(roots) | search.sharing

    def find_capacity(self) -> None:
        """Providers with room for each requested class (after load_snapshot)."""
        for class_id, amount in self.resources.items():
            found = self.search.providers_with_capacity(class_id, amount, self.tree_root)
            if not found:
                raise NoCandidates()
            self.with_capacity[class_id] = found

    # -- one provider per group (granular groups, or no trees and no sharing) --

    def single_provider_requests(self) -> list[AllocationRequest]:
        return list(self.each_single_provider_request())

    def each_single_provider_request(self) -> Iterator[AllocationRequest]:
        """The group's one-provider requests, provider by provider, lazily."""
        matching = self._single_providers()
        search, same_provider = self.search, self.group.use_same_provider
        amounts = list(self.resources.items())
        for rp_id, root_id in matching.items():
            provider = search.providers[rp_id]
            resources = tuple((rp_id, self.class_names[c], a) for c, a in amounts)
            mappings = ((self.suffix, frozenset([provider.uuid])),)
            if search.anchor_allowed(root_id):
                yield AllocationRequest(root_id, resources, mappings, same_provider)
            if SHARING_TRAIT in provider.traits:
                for anchor in sorted(search.sharing_anchors().get(rp_id, ())):
                    if anchor != root_id and search.anchor_allowed(anchor):
                        yield AllocationRequest(anchor, resources, mappings, same_provider)

    def _single_providers(self) -> Roots:
        """{provider id: root id} of providers that alone satisfy the group."""
        allowed: set[int] | None = None
        if self.required:
            allowed = None
            for any_of in self.required:
                found = _providers_with_any_trait(any_of)
                allowed = found if allowed is None else allowed & found
            if not allowed:
                return {}
        if self.in_aggregates is not None:
            allowed = self.in_aggregates if allowed is None else allowed & self.in_aggregates
            if not allowed:
                return {}
        excluded = set(self.bad_aggregates)
        if self.forbidden:
            excluded |= _providers_with_any_trait(self.forbidden)
        if not self.resources:
            # Resourceless groups (same_subtree): as upstream, only providers
            # picked out by traits or aggregates qualify.
            if not allowed:
                return {}
            roots = dict(ResourceProvider.objects.filter(id__in=allowed - excluded).values_list("id", "root_id"))
            return roots
        result: Roots | None = None
        for capable in self.with_capacity.values():
            result = dict(capable) if result is None else {rp: root for rp, root in result.items() if rp in capable}
        assert result is not None  # find_capacity found providers for each of the group's classes
        if allowed is not None:
            result = {rp: root for rp, root in result.items() if rp in allowed}
        return {rp: root for rp, root in result.items() if rp not in excluded}

    # -- several providers of one tree (plus sharing providers) --

    def tree_requests(self) -> Iterator[AllocationRequest]:
        """Allocation requests tree by tree (in root id order), lazily."""
        return itertools.chain.from_iterable(self.tree_request_generators())

    def tree_request_generators(self) -> list[Iterable[AllocationRequest]]:
        """The allocation requests of each tree (lazily where a tree has a
        choice of providers), one iterable per tree, in root id order."""
        if self.required and not _providers_with_any_trait(set().union(*self.required)):
            return []
        anchors, per_class = self._tree_options()
        classes = sorted(self.resources)
        names = [self.class_names[c] for c in classes]
        amounts = [self.resources[c] for c in classes]
        # {provider id: its mapping}: most trees are served by one provider.
        alone: dict[int, tuple[GroupMapping, ...]] = {}
        trees: list[Iterable[AllocationRequest]] = []
        for root_id in anchors:
            options = [by_anchor[root_id] for by_anchor in per_class]
            if max(map(len, options)) > 1:
                trees.append(self._product_requests(root_id, options, names, amounts, alone))
            # Most trees (a compute node alone) have one way only: made here,
            # without a generator per tree (an unlimited query makes thousands).
            elif (request := self._tree_request(root_id, [c[0] for c in options], names, amounts, alone)) is not None:
                trees.append((request,))
        return trees

    def _product_requests(
        self,
        root_id: int,
        options: list[list[int]],
        names: list[str],
        amounts: list[int],
        alone: dict[int, tuple[GroupMapping, ...]],
    ) -> Iterator[AllocationRequest]:
        """The requests of a tree with a choice of providers: one provider of
        ``options[i]`` for ``amounts[i]`` of the class ``names[i]``, in
        product order."""
        products = itertools.product(*(sorted(choices) for choices in options))
        return (
            request
            for choice in products
            if (request := self._tree_request(root_id, choice, names, amounts, alone)) is not None
        )

    def _tree_request(
        self,
        root_id: int,
        choice: Sequence[int],
        names: list[str],
        amounts: list[int],
        alone: dict[int, tuple[GroupMapping, ...]],
    ) -> AllocationRequest | None:
        """The request taking ``amounts[i]`` of ``names[i]`` from ``choice[i]``
        (None when the providers' traits do not do); a choice of one provider
        takes its mapping from ``alone``, made once per provider."""
        providers = self.search.providers
        if (self.required_names or self.forbidden_names) and not self._traits_ok([providers[rp] for rp in choice]):
            return None
        first = choice[0]
        if all(rp == first for rp in choice):
            mappings = alone.get(first)
            if mappings is None:
                mappings = alone[first] = ((self.suffix, frozenset([providers[first].uuid])),)
        else:
            mappings = ((self.suffix, frozenset([providers[rp].uuid for rp in choice])),)
        return AllocationRequest(
            root_id, tuple(zip(choice, names, amounts, strict=True)), mappings, self.group.use_same_provider
        )

    def _traits_ok(self, chosen: Iterable[Provider]) -> bool:
        traits: set[str] = set()
        for provider in chosen:
            if provider.traits & self.forbidden_names:
                return False
            traits |= provider.traits
        return all(any_of & traits for any_of in self.required_names)

    def _tree_options(self) -> tuple[list[int], list[dict[int, list[int]]]]:
        """The anchors (root ids, in order) of the trees that can serve every
        requested class, and for each class in class id order {anchor: the
        providers that could serve it} (a sharing provider counts under each
        anchor it serves)."""
        search = self.search
        sharing = search.sharing
        if self.in_aggregates is not None:
            sharing = sharing & self.in_aggregates
        filtered = (
            search.anchor_roots is not None
            or bool(search.anchor_forbidden)
            or search.chunk_roots is not None
            or self.in_aggregates is not None
            or bool(self.bad_aggregates)
        )
        per_class: list[dict[int, list[int]]] = []
        common: set[int] | None = None  # the anchors that serve every class so far
        for class_id in sorted(self.resources):
            found = self.with_capacity[class_id]
            pairs: Iterable[tuple[int, int]] = found.items()
            shared_here = sharing & found.keys()
            if shared_here and self.tree_root is None:
                anchors = search.sharing_anchors()
                pairs = itertools.chain(pairs, ((rp, anchor) for rp in shared_here for anchor in anchors.get(rp, ())))
            if filtered:
                pairs = [(rp, anchor) for rp, anchor in pairs if self._tree_pair_allowed(rp, anchor)]
            by_anchor: dict[int, list[int]] = {}
            for rp, anchor in pairs:
                these = by_anchor.get(anchor)
                if these is None:
                    by_anchor[anchor] = [rp]
                elif rp not in these:
                    these.append(rp)
            common = set(by_anchor) if common is None else common & by_anchor.keys()
            if not common:
                return [], []
            per_class.append(by_anchor)
        # Only groups with resources search trees: find_capacity filled with_capacity.
        assert common is not None
        if self.required or self.forbidden:
            if not search.sharing:
                common = self._trees_with_traits(common, per_class)
        return sorted(common), per_class

    def _tree_pair_allowed(self, rp: int, anchor: int) -> bool:
        """Whether provider ``rp`` may serve the tree of ``anchor`` (the
        request's root_required, slice, member_of and forbidden aggregates)."""
        search = self.search
        if not search.anchor_allowed(anchor):
            return False
        if search.chunk_roots is not None and anchor not in search.chunk_roots:
            return False
        if self.in_aggregates is not None and rp not in self.in_aggregates and anchor not in self.in_aggregates:
            return False
        return not (self.bad_aggregates and (rp in self.bad_aggregates or anchor in self.bad_aggregates))

    def _trees_with_traits(self, anchors: set[int], per_class: list[dict[int, list[int]]]) -> set[int]:
        """The ``anchors`` whose trees' trait-clean candidates together have
        the required traits (upstream's tree-level trait filter); without
        sharing providers each candidate is in its anchor's tree."""
        root_of = {rp: anchor for by_anchor in per_class for anchor in anchors for rp in by_anchor[anchor]}
        bad = _providers_with_any_trait(self.forbidden) & root_of.keys() if self.forbidden else set()
        good = root_of.keys() - bad
        if not self.required:
            return anchors & {root_of[rp] for rp in good}
        traits_by_root: defaultdict[int, set[int]] = defaultdict(set)
        for rp_id, trait_id in ResourceProviderTrait.objects.filter(resource_provider_id__in=good).values_list(
            "resource_provider_id", "trait_id"
        ):
            traits_by_root[root_of[rp_id]].add(trait_id)
        return {root for root, traits in traits_by_root.items() if all(any_of & traits for any_of in self.required)}

    def uses_trees(self) -> bool:
        return not self.group.use_same_provider and bool(self.search.sharing or self.search.has_trees)

    def requests(self) -> list[AllocationRequest]:
        if self.uses_trees():
            return list(self.tree_requests())
        return self.single_provider_requests()


# --- combining groups --------------------------------------------------------------


def generation_limits() -> tuple[int | None, str]:
    """(the most candidates one request may generate, None for no limit;
    the order trees are visited in), from upstream's
    [placement]max_allocation_candidates (-1: none) and
    allocation_candidates_generation_strategy."""
    most = int(getattr(settings, "PLACEMENT_MAX_ALLOCATION_CANDIDATES", -1))
    strategy = getattr(settings, "PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY", DEPTH_FIRST)
    if strategy not in GENERATION_STRATEGIES:
        raise ValueError(f"Strategy '{strategy}' not recognized")
    return (most if most >= 0 else None), strategy


def find_candidates(
    groups: Mapping[str, "RequestGroup"], wide: "RequestWideParams", nested_aware: bool = True
) -> Candidates:
    """Candidates for ``groups`` ({suffix: RequestGroup}) and the request-wide
    parameters ``wide``. Unknown resource classes or traits raise errors.Invalid.

    As upstream, at most PLACEMENT_MAX_ALLOCATION_CANDIDATES are generated
    (before the nested-provider filter of old microversions and before
    ``limit``), visiting the anchors' trees one after the other (depth-first)
    or one candidate of each in turn (breadth-first)."""
    class_names = {name for g in groups.values() for name in g.resources}
    class_ids = dict(ResourceClass.objects.filter(name__in=class_names).values_list("name", "id"))
    for name in sorted(class_names):
        if name not in class_ids:
            raise errors.Invalid(f"Invalid resource class in resources parameter: No such resource class {name}.")
    most, strategy = generation_limits()
    try:
        search = Search(wide, nested_aware)
        group_searches = {suffix: GroupSearch(search, group, class_ids) for suffix, group in groups.items()}
        scopes = [g.scope() for g in group_searches.values()]
        if len(groups) == 1 and None in scopes and strategy == DEPTH_FIRST:
            (group_search,) = group_searches.values()
            stop = min((n for n in (wide.limit, most) if n is not None), default=None)
            if (
                stop is not None
                and group_search.tree_root is None
                and (nested_aware or not search.has_trees)
                and (group_search.uses_trees() or not search.sharing)
            ):
                return _in_slices(search, group_search, stop, nested_aware)
        search.load_snapshot(None if None in scopes else set().union(*[s for s in scopes if s is not None]))
        per_group: dict[str, list[AllocationRequest]] = {}
        for suffix, group_search in group_searches.items():
            group_search.find_capacity()
            if len(groups) == 1 and (wide.limit is not None or most is not None):
                # Requests come anchor by anchor (trees; single providers,
                # each its own anchor, when no provider is shared and there
                # are no trees): stop once the limit is reached.
                stop = min(n for n in (wide.limit, most) if n is not None)
                if group_search.uses_trees() and (nested_aware or not search.has_trees):
                    trees = group_search.tree_request_generators()
                    ordered = _roundrobin(trees) if strategy == BREADTH_FIRST else itertools.chain.from_iterable(trees)
                    return _with_providers(search, _unique(search, ordered, stop), nested_aware)
                if (
                    not group_search.uses_trees()
                    and not search.sharing
                    and (strategy == DEPTH_FIRST or not search.has_trees)
                ):
                    requests = _unique(search, group_search.each_single_provider_request(), stop)
                    return _with_providers(search, requests, nested_aware)
            found = group_search.requests()
            if not found:
                return Candidates([], {})
            per_group[suffix] = found
    except NoCandidates:
        return Candidates([], {})
    keep = None
    if not nested_aware and search.has_trees:

        def keep(request: AllocationRequest) -> bool:
            return _one_provider_per_tree(search, request)

    requests = _combine(search, per_group, most=most, limit=wide.limit, strategy=strategy, keep=keep)
    return _with_providers(search, requests, nested_aware)


def _in_slices(search: Search, group_search: GroupSearch, stop: int, nested_aware: bool) -> Candidates:
    """The first ``stop`` candidates of a single-group request that may use
    any provider, reading the cloud a slice of trees at a time (in root id
    order, the order candidates come in) instead of every provider's
    inventory and usage at once: a limited request over a large cloud
    usually finds its candidates in the first slice."""
    size = max(stop, SLICE_ROOTS)
    found: list[AllocationRequest] = []
    seen: set[tuple[frozenset[Resource], tuple[GroupMapping, ...]]] = set()
    after = 0  # the last root of the slice before (ids start at 1)
    while True:
        # The next slice's roots only (not every root of the cloud at first).
        roots = [
            pid
            for (pid,) in _query(
                f"SELECT id FROM {RP} WHERE parent_id IS NULL AND id > %s ORDER BY id LIMIT %s", [after, size]
            )
        ]
        if not roots:
            break
        search.load_chunk(roots)
        after, size = roots[-1], 2 * size
        try:
            group_search.find_capacity()
        except NoCandidates:
            continue
        if group_search.uses_trees():
            requests: Iterator[AllocationRequest] = group_search.tree_requests()
        else:
            requests = group_search.each_single_provider_request()
        if _take_distinct(search, requests, found, seen, stop):
            break
    return _with_providers(search, found, nested_aware)


def _with_providers(search: Search, requests: list[AllocationRequest], nested_aware: bool) -> Candidates:
    """Candidates for ``requests``, with the providers to summarise."""
    used = {rp for r in requests for rp, _c, _a in r.resources}
    if not nested_aware and search.has_trees:
        providers = {pid: p for pid, p in search.providers.items() if pid in used}
    else:
        used_roots = {search.providers[rp].root_id for rp in used}
        providers = {pid: p for pid, p in search.providers.items() if p.root_id in used_roots}
    return Candidates(requests, providers, search.class_ids, search.trait_ids, search)


def _one_provider_per_tree(search: Search, request: AllocationRequest) -> bool:
    providers = {rp for rp, _c, _a in request.resources}
    return len(providers) == len({search.providers[rp].root_id for rp in providers})


def _combine(
    search: Search,
    per_group: Mapping[str, list[AllocationRequest]],
    most: int | None = None,
    limit: int | None = None,
    strategy: str = DEPTH_FIRST,
    keep: Callable[[AllocationRequest], bool] | None = None,
) -> list[AllocationRequest]:
    """Merge one allocation request per group, anchor by anchor, into whole
    allocation requests; keep those within group_policy, same_subtree and
    capacity. At most ``most`` distinct ones are generated; of those, the
    first ``limit`` that ``keep`` accepts are returned."""
    suffixes = list(per_group)
    per_anchor: list[Iterable[AllocationRequest]]
    if len(suffixes) == 1:
        # One group: its requests are already whole, and each takes every
        # (provider, class) at most once, within the capacity found for it.
        one_group: dict[int, list[AllocationRequest]] = {}
        for request in per_group[suffixes[0]]:
            same_anchor = one_group.get(request.anchor)
            if same_anchor is None:
                one_group[request.anchor] = [request]
            else:
                same_anchor.append(request)
        per_anchor = list(one_group.values())
    else:
        by_anchor: defaultdict[int, defaultdict[str, list[AllocationRequest]]] = defaultdict(lambda: defaultdict(list))
        for suffix, found in per_group.items():
            for request in found:
                by_anchor[request.anchor][suffix].append(request)
        granular = len([s for s in suffixes if s])
        per_anchor = [
            _anchor_requests(search, anchor, [lists[s] for s in suffixes], granular)
            for anchor, lists in by_anchor.items()
            if len(lists) == len(suffixes)
        ]
    ordered = _roundrobin(per_anchor) if strategy == BREADTH_FIRST else itertools.chain.from_iterable(per_anchor)
    # One group's requests are distinct but for those _may_repeat: only
    # those are keyed.
    merged = len(suffixes) > 1
    sharing = search.sharing
    check_subtree = not merged and bool(search.wide.same_subtrees)
    if not (merged or sharing or check_subtree or keep or limit is not None or most is not None):
        return list(ordered)
    generated: set[tuple[frozenset[Resource], tuple[GroupMapping, ...]]] = set()
    count = 0
    results: list[AllocationRequest] = []
    for request in ordered:
        if check_subtree and not _same_subtree_ok(search, request):
            continue
        if merged or _may_repeat(search, request):
            key = request.key()
            if key in generated:
                continue
            generated.add(key)
        count += 1
        if keep is None or keep(request):
            results.append(request)
            if limit is not None and len(results) >= limit:
                break
        if most is not None and count >= most:
            break
    return results


def _anchor_requests(
    search: Search, anchor: int, lists: Sequence[Sequence[AllocationRequest]], granular: int
) -> Iterator[AllocationRequest]:
    """The merged requests of one anchor, one request of each group's list,
    in product order, leaving out every combination a prefix of which
    already exceeds a provider's capacity (upstream's filtered product: the
    same results, without visiting the combinations that cannot fit)."""
    isolate = search.wide.group_policy == "isolate"
    for combination in _fitting_product(search, lists):
        if isolate and not _isolated(combination, granular):
            continue
        merged = _merge(anchor, combination)
        if _same_subtree_ok(search, merged):
            yield merged


def _fitting_product(
    search: Search, lists: Sequence[Sequence[AllocationRequest]]
) -> Iterator[tuple[AllocationRequest, ...]]:
    """itertools.product(*lists) without the tuples whose summed amounts
    exceed some provider's free capacity or max_unit, pruned by prefix."""
    providers = search.providers
    depth = len(lists)
    chosen: list[AllocationRequest] = []
    amounts: dict[tuple[int, str], int] = {}

    def fits(request: AllocationRequest) -> bool:
        for rp_id, class_name, amount in request.resources:
            capacity, used, max_unit = providers[rp_id].resources[class_name]
            total = amounts.get((rp_id, class_name), 0) + amount
            if used + total > capacity or total > max_unit:
                return False
        return True

    def add(request: AllocationRequest, sign: int) -> None:
        for rp_id, class_name, amount in request.resources:
            amounts[(rp_id, class_name)] = amounts.get((rp_id, class_name), 0) + sign * amount

    def walk(level: int) -> Iterator[tuple[AllocationRequest, ...]]:
        for request in lists[level]:
            if not fits(request):
                continue
            chosen.append(request)
            if level + 1 == depth:
                yield tuple(chosen)
            else:
                add(request, 1)
                yield from walk(level + 1)
                add(request, -1)
            chosen.pop()

    if depth:
        yield from walk(0)


def _unique(search: Search, requests: Iterable[AllocationRequest], limit: int | None = None) -> list[AllocationRequest]:
    """The distinct ``requests`` of one group within same_subtree, in order, at most ``limit``."""
    results: list[AllocationRequest] = []
    _take_distinct(search, requests, results, set(), limit)
    return results


def _take_distinct(
    search: Search,
    requests: Iterable[AllocationRequest],
    results: list[AllocationRequest],
    seen: set[tuple[frozenset[Resource], tuple[GroupMapping, ...]]],
    limit: int | None,
) -> bool:
    """Append to ``results`` the ``requests`` of one group within
    same_subtree that are not already there (``seen`` holds the keys of
    those that may repeat), until it holds ``limit``; whether it does."""
    for request in requests:
        if not _same_subtree_ok(search, request):
            continue
        if _may_repeat(search, request):
            key = request.key()
            if key in seen:
                continue
            seen.add(key)
        results.append(request)
        if limit is not None and len(results) >= limit:
            return True
    return False


def _may_repeat(search: Search, request: AllocationRequest) -> bool:
    """Whether one group's ``request`` may come again under another anchor:
    only one made of sharing providers alone (the same under every anchor
    they serve). Any other has a provider of its anchor's tree, and a
    tree's requests are distinct choices of its providers."""
    sharing = search.sharing
    if not sharing:
        return False
    for rp, _class, _amount in request.resources:  # a loop: no generator per request (one per tree)
        if rp not in sharing:
            return False
    return True


def _roundrobin(iterators: Sequence[Iterable[AllocationRequest]]) -> Iterator[AllocationRequest]:
    """One item of each iterator in turn, dropping those that are done
    (upstream's breadth-first order)."""
    active = [iter(it) for it in iterators]
    while active:
        still = []
        for it in active:
            item = next(it, None)
            if item is not None:
                yield item
                still.append(it)
        active = still


def _isolated(combination: Iterable[AllocationRequest], granular: int) -> bool:
    providers: set[str] = set()
    for request in combination:
        if request.use_same_provider:
            providers |= request.mappings[0][1]
    return len(providers) == granular


def _merge(anchor: int, combination: Iterable[AllocationRequest]) -> AllocationRequest:
    amounts: dict[tuple[int, str], int] = {}
    mappings: defaultdict[str, set[str]] = defaultdict(set)
    for request in combination:
        for rp_id, class_name, amount in request.resources:
            amounts[(rp_id, class_name)] = amounts.get((rp_id, class_name), 0) + amount
        for suffix, uuids in request.mappings:
            mappings[suffix] |= uuids
    return AllocationRequest(
        anchor,
        tuple((rp, c, a) for (rp, c), a in amounts.items()),
        tuple((s, frozenset(u)) for s, u in mappings.items()),
    )


def _same_subtree_ok(search: Search, request: AllocationRequest) -> bool:
    if not search.wide.same_subtrees:
        return True
    mappings = dict(request.mappings)
    by_uuid = {p.uuid: p for p in search.providers.values()}
    for suffixes in search.wide.same_subtrees:
        uuids = set().union(*(mappings.get(s, set()) for s in suffixes))
        if len(uuids) <= 1:
            continue
        ancestors = [_ancestors(by_uuid, search.providers, u) for u in uuids]
        if not set.intersection(*ancestors) & uuids:
            return False
    return True


def _ancestors(by_uuid: Mapping[str, Provider], providers: Mapping[int, Provider], uuid: str) -> set[str]:
    found = {uuid}
    provider = by_uuid[uuid]
    while provider.parent_id is not None:
        provider = providers[provider.parent_id]
        found.add(provider.uuid)
    return found
