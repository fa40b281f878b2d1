"""Django's PostgreSQL backend, with a health check that costs no round trip while the connection
is quiet.

Django checks a persistent connection before the first query of every request with ``SELECT 1``: on
a bet, one round trip in four. A connection the server has closed (a restart, an administrator's
terminate, an idle timeout) does not stay quiet: the server's farewell or the end of the stream
makes its socket readable. So an idle connection whose socket has nothing to read is taken as
healthy without asking, and any other is checked by Django's own ``SELECT 1`` (and replaced if that
fails). A link cut without a word (no FIN, no reset) is the one case only a query reveals; that
query then fails, and Django closes the connection at the end of the request. Off
(``settings.DATABASE_QUIET_HEALTH_CHECK``), every check is Django's ``SELECT 1``.

With DATABASE_URL unset (settings' EMBEDDED_DATA_DIR), a connection that fails starts the checkout's
embedded server (dbutils.embedded_server) and tries once more: any command reaches it, running or not.
"""

import select

from django.conf import settings
from django.db.backends.postgresql import base
from psycopg import pq


def _idle_and_quiet(connection) -> bool:
    """Open, outside any transaction, and nothing from the server waiting to be read."""
    if connection.closed or connection.broken or connection.info.transaction_status != pq.TransactionStatus.IDLE:
        return False
    readable, _, _ = select.select([connection.fileno()], [], [], 0)
    return not readable


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        try:
            return super().get_new_connection(conn_params)
        except base.Database.OperationalError:
            data_dir = self.settings_dict.get("EMBEDDED_DATA_DIR")
            if not data_dir:
                raise
        from dbutils import embedded_server

        embedded_server.start(data_dir)
        return super().get_new_connection(conn_params)

    def close_if_health_check_failed(self):
        if (settings.DATABASE_QUIET_HEALTH_CHECK and self.connection is not None and self.health_check_enabled
                and not self.health_check_done and _idle_and_quiet(self.connection)):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()
