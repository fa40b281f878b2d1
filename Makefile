# The two set-up commands: `make run` (install, migrate, demo data, development server on SQLite)
# and `make test` (install with the test tools, run every test).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/baccarat
HOST ?= 127.0.0.1
PORT ?= 8000

# Migrations run as the tables' owner; the application as a role that owns nothing (db_roles).
MIGRATION_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/baccarat_prod
PROD_APP_ROLE ?= baccarat_app
PROD_APP_PASSWORD ?= change-me-app-password
PROD_DATABASE_URL ?= postgres://$(PROD_APP_ROLE):$(PROD_APP_PASSWORD)@127.0.0.1:5432/baccarat_prod
PROD_BROKER_URL ?= redis://127.0.0.1:6379/0
WORKERS ?= 2
PROD_ENV = DATABASE_URL=$(PROD_DATABASE_URL) CELERY_BROKER_URL=$(PROD_BROKER_URL) \
	AUDIT_SIGNING_KEY_FILE=$${AUDIT_SIGNING_KEY_FILE:-$(CURDIR)/audit-signing-key.pem} \
	SECRET_KEY=$${SECRET_KEY:-change-me-$$(hostname)} ALLOWED_HOSTS=$${ALLOWED_HOSTS:-localhost,127.0.0.1}

.PHONY: install install-test run test migrate clean prod prod-setup prod-web prod-worker prod-beat

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
prod-setup: install
	psql -h 127.0.0.1 -U postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'baccarat_prod'" | grep -q 1 \
	    || createdb -h 127.0.0.1 -U postgres baccarat_prod
	test -f audit-signing-key.pem || DEBUG=1 AUDIT_SIGNING_KEY_FILE=$(CURDIR)/audit-signing-key.pem $(PY) -c \
	    "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'baccarat_site.settings'); django.setup(); \
	    from audit.heads import public_key_b64; print('audit public key', public_key_b64())"
	$(PROD_ENV) DATABASE_URL=$(MIGRATION_DATABASE_URL) $(PY) manage.py migrate --noinput
	$(PROD_ENV) DATABASE_URL=$(MIGRATION_DATABASE_URL) $(PY) manage.py db_roles $(PROD_APP_ROLE) --password $(PROD_APP_PASSWORD)
	$(PROD_ENV) $(PY) manage.py collectstatic --noinput -v0

prod-web:
	$(PROD_ENV) $(VENV)/bin/gunicorn baccarat_site.wsgi --bind $(HOST):$(PORT) --workers 3 --access-logfile -

prod-worker:
	$(PROD_ENV) $(VENV)/bin/celery -A baccarat_site worker --loglevel=INFO --concurrency=2

prod-beat:
	$(PROD_ENV) $(VENV)/bin/celery -A baccarat_site beat --loglevel=INFO

prod: prod-setup
	@trap 'kill 0' EXIT INT TERM; \
	for i in $$(seq 1 $(WORKERS)); do \
	    $(PROD_ENV) $(VENV)/bin/celery -A baccarat_site worker --loglevel=INFO --concurrency=1 -n worker$$i@%h & \
	done; \
	$(PROD_ENV) $(VENV)/bin/celery -A baccarat_site beat --loglevel=INFO & \
	$(PROD_ENV) $(VENV)/bin/gunicorn baccarat_site.wsgi --bind $(HOST):$(PORT) --workers 3 --access-logfile -
