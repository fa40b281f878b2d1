"""A list filter that lists a column's values without reading the whole table.

A list filter on a plain column (``list_filter = ("object_type",)``) lists the column's distinct
values with ``SELECT DISTINCT``, which reads every row: a fifth of a second per page view on a
million audit events. ``IndexedValuesFieldListFilter``, where an index leads with the column,
walks the index from one value to the next instead (a recursive "loose index scan": one index
probe per distinct value). An admin asks for it per column:
``list_filter = [("object_type", IndexedValuesFieldListFilter)]``.
"""

from django.contrib.admin.filters import AllValuesFieldListFilter
from django.contrib.admin.utils import reverse_field_path
from django.db import connections

MAX_FILTER_VALUES = 500
_LEADING_INDEXES: dict = {}


def _index_leads_with(connection, table: str, column: str) -> bool:
    key = (connection.alias, connection.settings_dict.get("NAME"), table)
    if key not in _LEADING_INDEXES:
        with connection.cursor() as cursor:
            constraints = connection.introspection.get_constraints(cursor, table)
        _LEADING_INDEXES[key] = {c["columns"][0] for c in constraints.values()
                                 if (c["index"] or c["unique"] or c["primary_key"]) and c["columns"]}
    return column in _LEADING_INDEXES[key]


def distinct_values_by_index(connection, table: str, column: str, limit: int = MAX_FILTER_VALUES) -> list:
    """The distinct non-null values of an indexed column, in order, one index probe each."""
    t, c = connection.ops.quote_name(table), connection.ops.quote_name(column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""WITH RECURSIVE v(value) AS (
                    (SELECT {c} FROM {t} WHERE {c} IS NOT NULL ORDER BY {c} LIMIT 1)
                    UNION ALL
                    SELECT (SELECT {c} FROM {t} WHERE {c} > v.value ORDER BY {c} LIMIT 1) FROM v
                    WHERE v.value IS NOT NULL
                ) SELECT value FROM v WHERE value IS NOT NULL LIMIT %s""", [limit])
        return [row[0] for row in cursor.fetchall()]


class _ValuesOnDemand:
    """Filter values read only when the filter's choices are drawn: a CSV export builds the
    changelist's filters but never shows them, and must not pay for their queries."""

    def __init__(self, read):
        self._read = read
        self._values = None

    def __iter__(self):
        if self._values is None:
            self._values = self._read()
        return iter(self._values)


class IndexedValuesFieldListFilter(AllValuesFieldListFilter):
    """AllValuesFieldListFilter, with its values read by walking an index where one leads with the column."""

    def __init__(self, field, request, params, model, model_admin, field_path):
        super().__init__(field, request, params, model, model_admin, field_path)
        parent_model, _path = reverse_field_path(model, field_path)
        queryset = model_admin.get_queryset(request) if model == parent_model else parent_model._default_manager.all()
        connection = connections[queryset.db]
        table, column = parent_model._meta.db_table, field.column
        if queryset.query.where or not column:
            return
        every_value = self.lookup_choices  # Django's own (a lazy queryset), where no index leads

        def read() -> list:
            if not _index_leads_with(connection, table, column):
                return list(every_value)
            values = distinct_values_by_index(connection, table, column)
            if field.null and queryset.filter(**{f"{field.name}__isnull": True}).exists():
                values.append(None)
            return values

        self.lookup_choices = _ValuesOnDemand(read)
