"""Admin lists that never count a whole table.

Django's admin counts the rows of a list to number its pages: ``SELECT COUNT(*)`` of the filtered
query, which on a table of a million bets reads all of them for every page view.
``CappedCountPaginator`` counts at most ``CAP`` + 1 rows instead (``SELECT COUNT(*) FROM (… LIMIT
CAP + 1)``, which stops early). Beyond that, an unfiltered list takes the planner's
estimate of the table's rows (pg_class.reltuples, kept by autovacuum and ANALYZE), and a filtered
list says "more than CAP" and offers its first CAP rows' pages: narrow the filter to see further.
The count line of the list says which (templates/admin/pagination.html).
"""

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
        """The planner's row estimate of the table, for an unfiltered list (on the list's database);
        else None."""
        query = queryset.query
        if query.where or query.distinct or query.combinator:
            return None
        connection = connections[queryset.db]
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
