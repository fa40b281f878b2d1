"""Many rows updated by one statement, written once and run for every row (``executemany``).

``bulk_update`` builds a CASE expression per field over every row, and building it costs more than
running it (most of a settlement batch's time once went there); here the statement is the
same for every row, so it is built once and the database runs it row after row. The values are
prepared for the database exactly as the ORM's save prepares them (each field's
``get_db_prep_save``: JSON, decimals, dates in UTC).
"""

from django.db import DEFAULT_DB_ALIAS, connections


def update_rows(model, fields, rows, *, where=None, using: str = DEFAULT_DB_ALIAS) -> int:
    """For each row ``(pk, value, …)``, set ``fields`` of the ``model`` row with that primary key to
    the values, in order, only where every column of ``where`` ({field name: value}) still holds
    its value. Returns the number of rows written (a row ``where`` excludes is not written).
    ``using``: the database alias written to.
    """
    rows = list(rows)
    if not rows:
        return 0
    connection = connections[using]
    meta, quote = model._meta, connection.ops.quote_name
    columns = [meta.get_field(name) for name in fields]
    conditions = [(meta.get_field(name), value) for name, value in (where or {}).items()]
    sql = (f"UPDATE {quote(meta.db_table)} SET {', '.join(f'{quote(field.column)} = %s' for field in columns)} "
           f"WHERE {quote(meta.pk.column)} = %s"
           + "".join(f" AND {quote(field.column)} = %s" for field, _value in conditions))
    fixed = [field.get_db_prep_save(value, connection) for field, value in conditions]
    params = [[*(field.get_db_prep_save(value, connection) for field, value in zip(columns, values, strict=True)),
               meta.pk.get_db_prep_save(pk, connection), *fixed]
              for pk, *values in rows]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)
        return cursor.rowcount
