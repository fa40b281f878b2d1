# The two set-up commands: `make run` (install, migrate, demo data, development server on SQLite)
# and `make test` (install with the test tools, run every test).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/baccarat
HOST ?= 127.0.0.1
PORT ?= 8000

PROD_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/baccarat_prod
PROD_BROKER_URL ?= redis://127.0.0.1:6379/0
WORKERS ?= 2
# The secret key: $SECRET_KEY when set, else a random key made once by `make secret-key` and kept in a
# file only its owner may read (never one derived from anything guessable). This machine serves plain
# HTTP on localhost, hence HTTPS_ONLY=0 unless set; a real deployment terminates TLS and keeps the default.
SECRET_KEY_FILE ?= .secret_key
PROD_ENV = DATABASE_URL=$(PROD_DATABASE_URL) CELERY_BROKER_URL=$(PROD_BROKER_URL) \
	SECRET_KEY=$${SECRET_KEY:-$$(cat $(SECRET_KEY_FILE))} ALLOWED_HOSTS=$${ALLOWED_HOSTS:-localhost,127.0.0.1} \
	HTTPS_ONLY=$${HTTPS_ONLY:-0} CACHE_URL=$${CACHE_URL:-redis://127.0.0.1:6379/1}

.PHONY: install install-test run test migrate clean prod prod-setup prod-web prod-worker prod-beat secret-key

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

install: $(PY)
	$(PY) -m pip install --quiet -e .

install-test: $(PY)
	$(PY) -m pip install --quiet -e ".[test]"

migrate: install
	DEBUG=1 $(PY) manage.py migrate --noinput

run: migrate
	DEBUG=1 $(PY) manage.py seed_demo
	DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

# The linter first (ruff, configured in pyproject.toml; the import contracts are tests/test_architecture.py),
# then two passes: the embedded default (SQLite), then PostgreSQL with the tests that need the real
# services (Celery workers, Redis). Where PostgreSQL does not answer, the second pass is skipped,
# unless REQUIRE_SERVICES=1 (CI), where it runs and fails.
test: install-test
	$(PY) -m ruff check .
	$(PY) -m pytest -m "not services" $(PYTEST_ARGS)
	@if [ "$$REQUIRE_SERVICES" = 1 ] || $(PY) -c "import psycopg; psycopg.connect('$(TEST_DATABASE_URL)', dbname='postgres', connect_timeout=3).close()" 2>/dev/null; then \
	    echo "--- PostgreSQL pass ($(TEST_DATABASE_URL))"; \
	    DATABASE_URL=$(TEST_DATABASE_URL) $(PY) -m pytest $(PYTEST_ARGS); \
	else \
	    echo "--- PostgreSQL does not answer at $(TEST_DATABASE_URL): the PostgreSQL pass is skipped"; \
	fi

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles

# --- Production shape on this machine: PostgreSQL, Redis, Celery workers and beat, gunicorn ---
secret-key: $(SECRET_KEY_FILE)

$(SECRET_KEY_FILE):
	umask 077 && $(PYTHON) -c "import secrets; print(secrets.token_urlsafe(64))" > $@.tmp && mv $@.tmp $@

prod-setup: install $(SECRET_KEY_FILE)
	psql -h 127.0.0.1 -U postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'baccarat_prod'" | grep -q 1 \
	    || createdb -h 127.0.0.1 -U postgres baccarat_prod
	$(PROD_ENV) $(PY) manage.py migrate --noinput
	$(PROD_ENV) $(PY) manage.py collectstatic --noinput -v0

prod-web: $(SECRET_KEY_FILE)
	$(PROD_ENV) $(VENV)/bin/gunicorn baccarat_site.wsgi --bind $(HOST):$(PORT) --workers 3 --access-logfile -

prod-worker: $(SECRET_KEY_FILE)
	$(PROD_ENV) $(VENV)/bin/celery -A baccarat_site worker --loglevel=INFO --concurrency=2

prod-beat: $(SECRET_KEY_FILE)
	$(PROD_ENV) $(VENV)/bin/celery -A baccarat_site beat --loglevel=INFO

prod: prod-setup
	@trap 'kill 0' EXIT INT TERM; \
	for i in $$(seq 1 $(WORKERS)); do \
	    $(PROD_ENV) $(VENV)/bin/celery -A baccarat_site worker --loglevel=INFO --concurrency=1 -n worker$$i@%h & \
	done; \
	$(PROD_ENV) $(VENV)/bin/celery -A baccarat_site beat --loglevel=INFO & \
	$(PROD_ENV) $(VENV)/bin/gunicorn baccarat_site.wsgi --bind $(HOST):$(PORT) --workers 3 --access-logfile -
