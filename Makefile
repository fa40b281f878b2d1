# The two set-up commands: `make run` (install, migrate, demo data, development server on SQLite)
# and `make test` (install with the test tools, run every test).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
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

test: install-test
	$(PY) -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles
