"""Rows of hand-written statements loaded into model instances exactly as the ORM loads them.

For the few reads on the hottest paths (a bet, a token), where building the query each time costs
more than running it: the statement is written once, and its columns converted by the same
converters the ORM applies (JSON fields, say).
"""

from django.db import DEFAULT_DB_ALIAS, connections
from django.utils.connection import ConnectionProxy


def row_loader(model, fields, start: int, using: str = DEFAULT_DB_ALIAS):
    """A function making a ``model`` instance of ``fields`` from row[start:], read from the database
    ``using``, converted as the ORM converts what it reads (JSON fields, say). ``fields`` are in the
    model's order (Model.from_db reads values in that order); the model's other fields are deferred."""
    connection = ConnectionProxy(connections, using)  # this thread's connection, at each use
    order = [field for field in model._meta.concrete_fields if field in fields]
    if list(fields) != order:
        raise ValueError(f"{model.__name__}: give the fields in the model's order, {[f.name for f in order]}")
    columns = [field.get_col(model._meta.db_table) for field in fields]
    converters = [[*connection.ops.get_db_converters(column), *column.field.get_db_converters(connection)]
                  for column in columns]
    names = [field.attname for field in fields]

    def load(row):
        values = []
        for index, column in enumerate(columns):
            value = row[start + index]
            for converter in converters[index]:
                value = converter(value, column, connection)
            values.append(value)
        return model.from_db(using, names, values)
    return load
