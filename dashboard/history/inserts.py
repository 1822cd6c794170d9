"""History rows written as tuples: one INSERT statement per table, run with ``executemany`` in
small batches, giving way to requests between them.

The recorder writes thousands of rows a minute. ``bulk_create`` builds a model instance per row
and assembles the SQL of every value of every row (SQLInsertCompiler), which made most of the
recorder's time under churn. Here the statement is assembled once per write from the
connection's own operations (``insert_statement`` and ``on_conflict_suffix_sql``: the SQL
``bulk_create`` writes with ``ignore_conflicts`` or ``update_conflicts``, on SQLite and on
PostgreSQL), and each value is converted as the model's field converts it for the database:
datetimes and dates through the connection's ``adapt_*`` operations, JSON through the field.
Strings, numbers, booleans and None go to the driver as they are, as the fields leave them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from typing import Any

from django.db import connections, models
from django.db.models.constants import OnConflict

from dashboard.priority import REQUESTS

# Rows per executemany: about a millisecond of the interpreter's time for the widest row.
BATCH = 50

_UNSEEN = object()
_CONFLICTS = {"": None, "ignore": OnConflict.IGNORE, "update": OnConflict.UPDATE}


class TableInsert:
    """INSERTs into ``model``'s table of rows given as tuples of ``columns`` (field names, the
    primary key left to the database). ``conflict``: "" (a plain insert), "ignore" (a row that
    conflicts with a stored one on a unique field is skipped, as ``ignore_conflicts``) or
    "update" (an upsert on the fields ``unique``: a stored row gets every other column, as
    ``update_conflicts`` with those ``update_fields``)."""

    def __init__(
        self,
        model: type[models.Model],
        columns: Sequence[str],
        conflict: str = "",
        unique: Sequence[str] = (),
    ) -> None:
        if conflict not in _CONFLICTS or (conflict == "update") != bool(unique):
            raise ValueError(f"conflict={conflict!r} with unique={unique!r}")
        self.model = model
        self.fields = [_column(model, c) for c in columns]
        self.on_conflict = _CONFLICTS[conflict]
        self.unique = [_column(model, c) for c in unique]

    def sql(self, using: str) -> str:
        """The statement for one row, with the connection's placeholders (%s)."""
        ops = connections[using].ops
        qn = ops.quote_name
        columns = [f.column for f in self.fields]
        unique = [f.column for f in self.unique]
        update = [c for c in columns if c not in unique]
        table = qn(self.model._meta.db_table)
        sql = (
            f"{ops.insert_statement(on_conflict=self.on_conflict)} {table} "
            f"({', '.join(qn(c) for c in columns)}) VALUES ({', '.join(['%s'] * len(columns))})"
        )
        suffix = ops.on_conflict_suffix_sql(self.fields, self.on_conflict, update, unique)
        return f"{sql} {suffix}" if suffix else sql

    def converters(self, using: str) -> list[tuple[int, Callable[[Any], Any], bool]]:
        """(position, conversion, whether its values can be remembered) of the columns whose
        values the database needs converted (each conversion takes None too, as the field's
        does). Times and dates are remembered: the rows of a write share many."""
        connection = connections[using]
        ops = connection.ops
        out: list[tuple[int, Callable[[Any], Any], bool]] = []
        for i, field in enumerate(self.fields):
            kind = field.get_internal_type()
            if kind == "DateTimeField":
                out.append((i, ops.adapt_datetimefield_value, True))
            elif kind == "DateField":
                out.append((i, ops.adapt_datefield_value, True))
            elif kind == "JSONField":
                out.append((i, _prep_save(field, connection), False))
        return out

    def write(self, using: str, rows: Iterable[Sequence[Any]], batch: int = BATCH) -> int:
        """Insert ``rows`` (tuples in ``columns`` order) in batches of ``batch``, giving way to
        requests before each; returns how many were sent. Run it in the caller's transaction.
        ``rows`` is read a batch at a time: rows made as they are read are freed batch by batch."""
        sql, converters = self.sql(using), self.converters(using)
        sent = 0
        rows = iter(rows)
        with connections[using].cursor() as cursor:
            while True:
                REQUESTS.give_way()
                params = []
                converted: dict[Any, Any] = {}  # value -> its conversion, of the remembered columns
                for row in islice(rows, batch):
                    values = list(row)
                    for i, convert, remember in converters:
                        value = values[i]
                        if not remember:
                            values[i] = convert(value)
                        elif (known := converted.get(value, _UNSEEN)) is not _UNSEEN:
                            values[i] = known
                        else:
                            values[i] = converted[value] = convert(value)
                    params.append(values)
                if not params:
                    return sent
                cursor.executemany(sql, params)
                sent += len(params)


def _column(model: type[models.Model], name: str) -> models.Field[Any, Any]:
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field) or not field.column:
        raise ValueError(f"{model.__name__}.{name} is no column")
    return field


def _prep_save(field: models.Field[Any, Any], connection: Any) -> Callable[[Any], Any]:
    """The field's own conversion of a value for ``connection`` (as a save converts it)."""

    def convert(value: Any) -> Any:
        return field.get_db_prep_save(value, connection)

    return convert
