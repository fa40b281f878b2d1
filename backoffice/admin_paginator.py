"""Admin lists that never count a whole table, nor read one to list a filter's values.

Django's admin counts the rows of a list to number its pages: ``SELECT COUNT(*)`` of the filtered
query, which on a table of a million bets reads all of them for every page view.
``CappedCountPaginator`` counts at most ``CAP`` + 1 rows instead (``SELECT COUNT(*) FROM (… LIMIT
CAP + 1)``, which stops early). Beyond that, an unfiltered list of PostgreSQL takes the planner's
estimate of the table's rows (pg_class.reltuples, kept by autovacuum and ANALYZE), and a filtered
list says "more than CAP" and offers its first CAP rows' pages: narrow the filter to see further.
The count line of the list says which (templates/admin/pagination.html).

A list filter on a plain column (``list_filter = ("action",)``) lists the column's distinct values
with ``SELECT DISTINCT``, which reads every row: a fifth of a second per page view on a million
audit events. ``IndexedValuesFieldListFilter`` takes over where an index leads with the column, on
PostgreSQL, and walks the index from one value to the next instead (a recursive "loose index
scan": one index probe per distinct value).
"""

from django.contrib.admin.filters import AllValuesFieldListFilter, FieldListFilter
from django.contrib.admin.utils import reverse_field_path
from django.db import models

from django.core.paginator import Paginator
from django.db import connections
from django.db.models import QuerySet
from django.utils.functional import cached_property

CAP = 10_000


class CappedCountPaginator(Paginator):
    cap = CAP
    count_kind = "exact"  # or "estimate", or "at_least"

    @cached_property
    def count(self):
        queryset = self.object_list
        if not isinstance(queryset, QuerySet):
            return super().count
        bounded = queryset.order_by()[: self.cap + 1].count()
        if bounded <= self.cap:
            return bounded
        estimate = self._estimate(queryset)
        if estimate is not None and estimate > self.cap:
            self.count_kind = "estimate"
            return estimate
        self.count_kind = "at_least"
        return self.cap

    @staticmethod
    def _estimate(queryset):
        """The planner's row estimate of the table, for an unfiltered list on PostgreSQL; else None."""
        query = queryset.query
        connection = connections[queryset.db]
        if connection.vendor != "postgresql" or query.where or query.distinct or query.combinator:
            return None
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(%s)",
                           [connection.ops.quote_name(queryset.model._meta.db_table)])
            row = cursor.fetchone()
        return int(row[0]) if row and row[0] and row[0] > 0 else None

    @property
    def count_note(self) -> str:
        """How the list's count line reads when it is not an exact count ("" when it is)."""
        count = self.count
        if self.count_kind == "estimate":
            return f"about {count:,}"
        if self.count_kind == "at_least":
            return f"more than {count:,}"
        return ""


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
        if connection.vendor != "postgresql" or queryset.query.where or not column:
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


def _plain_column(field) -> bool:
    """A field AllValuesFieldListFilter would list (no choices, not related, boolean or date)."""
    return (isinstance(field, models.Field) and not field.choices and not field.remote_field
            and not isinstance(field, (models.BooleanField, models.DateField)) and bool(field.column))


# Plain column filters of every admin list their values by index (Django's own filters register
# the same way, at import).
FieldListFilter.register(_plain_column, IndexedValuesFieldListFilter, take_priority=True)
