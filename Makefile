# The two set-up commands: `make run` (install, migrate, demo data, development server on SQLite)
# and `make test` (install with the test tools, run every test).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/baccarat
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install install-test run test migrate clean

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
	DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

# Two passes: the embedded default (SQLite), then PostgreSQL with the tests that need the real
# services (Celery workers, Redis). Where PostgreSQL does not answer, the second pass is skipped,
# unless REQUIRE_SERVICES=1 (CI), where it runs and fails.
test: install-test
	$(PY) -m pytest -m "not services" $(PYTEST_ARGS)
	@if [ "$$REQUIRE_SERVICES" = 1 ] || $(PY) -c "import psycopg; psycopg.connect('$(TEST_DATABASE_URL)', dbname='postgres', connect_timeout=3).close()" 2>/dev/null; then \
	    echo "--- PostgreSQL pass ($(TEST_DATABASE_URL))"; \
	    DATABASE_URL=$(TEST_DATABASE_URL) $(PY) -m pytest $(PYTEST_ARGS); \
	else \
	    echo "--- PostgreSQL does not answer at $(TEST_DATABASE_URL): the PostgreSQL pass is skipped"; \
	fi

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles
