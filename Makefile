# The two set-up commands: `make run` (install, migrate, demo data, development server on the
# checkout's embedded PostgreSQL) and `make test` (install with the test tools, run every test).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Unset: the tests run on an embedded PostgreSQL server of their own, made for the run and deleted
# after it. Set (postgres://user@host:port/name): pytest-django creates test_<name> on that server.
TEST_DATABASE_URL ?=
# With DATABASE_URL unset, `make run` serves on the checkout's embedded PostgreSQL (.data/postgres)
# and stops that server when it stops (exec: make's SIGTERM reaches the wrapper, not only its shell).
EMBEDDED_RUN = $(if $(DATABASE_URL),,$(PY) -m dbutils.embedded_server run --)
HOST ?= 127.0.0.1
PORT ?= 8000

# Migrations run as the tables' owner; the application as a role that owns nothing (db_roles).
PROD_DATABASE ?= baccarat_prod
MIGRATION_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/$(PROD_DATABASE)
PROD_APP_ROLE ?= baccarat_app
PROD_APP_PASSWORD ?= change-me-app-password
PROD_DATABASE_URL ?= postgres://$(PROD_APP_ROLE):$(PROD_APP_PASSWORD)@127.0.0.1:5432/$(PROD_DATABASE)
PROD_BROKER_URL ?= redis://127.0.0.1:6379/0
# The Celery workers `make prod` starts: one per queue (settings' CELERY_TASK_ROUTES), each
# queue:processes, so a hung webhook endpoint or a slow report never holds settlement back; sized as
# docs/operations/scaling.md says. `make prod-worker WORKER_QUEUE=webhooks WORKER_CONCURRENCY=4` starts one of them.
WORKER_QUEUES ?= settlement:2 audit:1 webhooks:4 partitions:1 reports:1
WORKER_QUEUE ?= settlement,audit,webhooks,partitions,reports
WORKER_CONCURRENCY ?= 2
# Workers and beat started by root drop to PROD_USER (which must be able to read Python and this
# directory). Without PROD_USER, root keeps them as root, knowingly: Celery's superuser warning is
# silenced (the JSON-only workers accept no pickle, the case where Celery refuses root outright).
PROD_USER ?=
PROD_GROUP ?= $(PROD_USER)
IS_ROOT := $(filter 0,$(shell id -u))
CELERY_USER = $(if $(IS_ROOT),$(if $(PROD_USER),--uid $(PROD_USER) --gid $(PROD_GROUP)))
CELERY_ENV = $(if $(IS_ROOT),$(if $(PROD_USER),,PYTHONWARNINGS="ignore:You're running the worker with superuser privileges"))
# With LOG_FORMAT=json, Celery's start-up banners (plain text) are left out, so every line is JSON.
CELERY = $(VENV)/bin/celery -A baccarat_site $(if $(filter json,$(LOG_FORMAT)),--quiet)
# gunicorn's and the Celery workers' metrics, summed by /metrics (docs/operations/monitoring.md);
# /metrics answers this machine's addresses (METRICS_ALLOWED_IPS) unless told otherwise.
METRICS_DIR ?= $(CURDIR)/.data/metrics
# The secret key: $SECRET_KEY when set, else a random key made once by `make secret-key` and kept in a
# file only its owner may read (never one derived from anything guessable). This machine serves plain
# HTTP on localhost, hence HTTPS_ONLY=0 unless set; a real deployment terminates TLS and keeps the default.
SECRET_KEY_FILE ?= .secret_key
# The API tokens' pepper (API_TOKEN_PEPPERS): the environment's when set, else one made once, as the key.
API_TOKEN_PEPPER_FILE ?= .api_token_pepper
# Production's own audit signing key and published heads, apart from development's (never in .data,
# which `make clean` deletes).
PROD_DIR ?= $(CURDIR)/prod-data
PROD_ENV = DATABASE_URL=$(PROD_DATABASE_URL) CELERY_BROKER_URL=$(PROD_BROKER_URL) \
	AUDIT_SIGNING_KEY_FILE=$${AUDIT_SIGNING_KEY_FILE:-$(PROD_DIR)/audit-signing-key.pem} \
	AUDIT_HEAD_SINK_DIR=$${AUDIT_HEAD_SINK_DIR:-$(PROD_DIR)/audit-heads} \
	SECRET_KEY=$${SECRET_KEY:-$$(cat $(SECRET_KEY_FILE))} API_TOKEN_PEPPERS=$${API_TOKEN_PEPPERS:-$$(cat $(API_TOKEN_PEPPER_FILE))} \
	ALLOWED_HOSTS=$${ALLOWED_HOSTS:-localhost,127.0.0.1} \
	HTTPS_ONLY=$${HTTPS_ONLY:-0} CACHE_URL=$${CACHE_URL:-redis://127.0.0.1:6379/1} \
	PROMETHEUS_MULTIPROC_DIR=$${PROMETHEUS_MULTIPROC_DIR:-$(METRICS_DIR)} \
	METRICS_ALLOWED_IPS=$${METRICS_ALLOWED_IPS:-127.0.0.1,::1}

.PHONY: install install-test run db-stop test docs migrate clean prod prod-setup prod-manage prod-web prod-worker prod-beat secret-key

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# pip runs again only when pyproject.toml changes: a reinstall rewrites the editable install's
# modules in the venv, which would make a running development server reload.
install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@ $(VENV)/.installed

migrate: install
	DEBUG=1 $(PY) manage.py migrate --noinput

run: migrate
	DEBUG=1 $(PY) manage.py seed_demo --server $(HOST):$(PORT) --server-starts
	DEBUG=1 exec $(EMBEDDED_RUN) $(PY) -m baccarat_site.dev_server $(HOST):$(PORT)

# Stops the checkout's embedded PostgreSQL, where a manage.py command left it running.
db-stop:
	$(PY) -m dbutils.embedded_server stop

# The linter (ruff, configured in pyproject.toml; the import contracts are tests/test_architecture.py),
# then every test in one pass on PostgreSQL: a temporary embedded server, or TEST_DATABASE_URL's.
# Tests needing Redis or the browser skip without them, unless REQUIRE_SERVICES=1 (CI): then they fail.
test: install-test
	$(PY) -m ruff check .
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet --site-dir .data/docs-site
	$(if $(TEST_DATABASE_URL),DATABASE_URL=$(TEST_DATABASE_URL),$(PY) -m dbutils.embedded_server run --temporary --) \
	    $(PY) -m pytest $(PYTEST_ARGS)
	$(if $(TEST_DATABASE_URL),DATABASE_URL=$(TEST_DATABASE_URL),$(PY) -m dbutils.embedded_server run --temporary --) \
	    env DATABASE_POOLER=transaction $(PY) -m pytest -q $(POOLED_TESTS)

# The pooled pass: these modules once more through a PgBouncer in transaction mode (tests/pooler.py).
POOLED_TESTS ?= tests/dbutils/test_pgbouncer.py tests/api/test_token_rows_pooled.py tests/api/test_games.py \
	tests/api/test_bets.py tests/games/test_bet_races.py tests/settlement/test_workers.py \
	tests/webhooks/test_slow_receiver.py

# The documentation site (mkdocs.yml, docs/) into site/, strict: a broken link or a warning fails it.
docs: install-test
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

clean: db-stop
	rm -rf $(VENV) .data staticfiles

# --- Production shape on this machine: PostgreSQL, Redis, Celery workers and beat, gunicorn ---
secret-key: $(SECRET_KEY_FILE) $(API_TOKEN_PEPPER_FILE)

$(SECRET_KEY_FILE):
	umask 077 && $(PYTHON) -c "import secrets; print(secrets.token_urlsafe(64))" > $@.tmp && mv $@.tmp $@

$(API_TOKEN_PEPPER_FILE):
	umask 077 && $(PYTHON) -c "import secrets; print(secrets.token_hex(32))" > $@.tmp && mv $@.tmp $@

# Recipes that carry PROD_ENV are not echoed (@): its URLs hold the application role's password.
prod-setup: install $(SECRET_KEY_FILE) $(API_TOKEN_PEPPER_FILE)
	@$(PY) -m baccarat_site.ensure_database "$(MIGRATION_DATABASE_URL)" --app-url "$(PROD_DATABASE_URL)"
	@mkdir -p $(PROD_DIR) && chmod 700 $(PROD_DIR)
	@test -n "$$AUDIT_SIGNING_KEY$$AUDIT_SIGNING_KEY_FILE" -o -f $(PROD_DIR)/audit-signing-key.pem || \
	    DEBUG=1 AUDIT_SIGNING_KEY_FILE=$(PROD_DIR)/audit-signing-key.pem $(PY) -c \
	    "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'baccarat_site.settings'); django.setup(); \
	    from audit.heads import public_key_b64; print('production audit public key', public_key_b64())"
	@echo "make prod: migrate as the owner, then db_roles $(PROD_APP_ROLE)"
	@$(PROD_ENV) DATABASE_URL=$(MIGRATION_DATABASE_URL) $(PY) manage.py migrate --noinput
	@$(PROD_ENV) DATABASE_URL=$(MIGRATION_DATABASE_URL) $(PY) manage.py db_roles $(PROD_APP_ROLE) "--password=$(PROD_APP_PASSWORD)"
	@$(PROD_ENV) $(PY) manage.py collectstatic --noinput -v0

# Any management command with exactly the environment `make prod` gives its processes, e.g.
#   make prod-manage ARGS="create_staff_user table-server --role integration --password …"
prod-manage: $(SECRET_KEY_FILE) $(API_TOKEN_PEPPER_FILE)
	@$(PY) -m baccarat_site.ensure_database "$(MIGRATION_DATABASE_URL)" --app-url "$(PROD_DATABASE_URL)" --check-only
	@$(PROD_ENV) $(PY) manage.py $(ARGS)

prod-web: $(SECRET_KEY_FILE) $(API_TOKEN_PEPPER_FILE)
	@$(PROD_ENV) $(VENV)/bin/gunicorn baccarat_site.wsgi -c gunicorn.conf.py --bind $(HOST):$(PORT) --workers 3 --access-logfile -

prod-worker: $(SECRET_KEY_FILE) $(API_TOKEN_PEPPER_FILE)
	@$(PROD_ENV) $(CELERY_ENV) $(if $(findstring partitions,$(WORKER_QUEUE)),PARTITIONS_DATABASE_URL=$(MIGRATION_DATABASE_URL)) \
	    $(CELERY) worker --loglevel=INFO -Q $(WORKER_QUEUE) \
	    --concurrency=$(WORKER_CONCURRENCY) $(CELERY_USER)

prod-beat: $(SECRET_KEY_FILE) $(API_TOKEN_PEPPER_FILE)
	@$(PROD_ENV) $(CELERY_ENV) $(CELERY) beat --loglevel=INFO $(CELERY_USER)

# The partitions queue's worker runs the daily partition maintenance, which only the tables' owner may do:
# it alone gets the owner's URL (PARTITIONS_DATABASE_URL, docs/operations/partitions.md).
# Each process runs in a session of its own (setsid), so a Ctrl-C at the terminal reaches only this
# shell; on Ctrl-C or SIGTERM (which make passes on) the shell sends each process one SIGTERM (warm
# shutdown: running tasks finish) and waits for them. It signals before it writes: behind
# `make prod | tee log`, Ctrl-C ends tee too, and a write to its pipe must not end the shell first. When gunicorn stops, everything stops.
prod: prod-setup
	@pids=""; \
	stop() { trap '' INT TERM PIPE; kill -TERM $$pids 2>/dev/null; echo "make prod: stopping $$pids" 2>/dev/null; \
	    wait; echo "make prod: stopped" 2>/dev/null; exit 0; }; \
	trap stop INT TERM; \
	for spec in $(WORKER_QUEUES); do \
	    $(PROD_ENV) $(CELERY_ENV) PARTITIONS_DATABASE_URL=$$(test $${spec%%:*} = partitions && echo "$(MIGRATION_DATABASE_URL)") \
	        setsid $(CELERY) worker --loglevel=INFO -Q $${spec%%:*} --concurrency=$${spec##*:} -n $${spec%%:*}@%h $(CELERY_USER) & \
	    pids="$$pids $$!"; \
	done; \
	$(PROD_ENV) $(CELERY_ENV) setsid $(CELERY) beat --loglevel=INFO $(CELERY_USER) & pids="$$pids $$!"; \
	$(PROD_ENV) setsid $(VENV)/bin/gunicorn baccarat_site.wsgi -c gunicorn.conf.py --bind $(HOST):$(PORT) --workers 3 --access-logfile - & \
	web=$$!; pids="$$pids $$web"; \
	wait $$web; stop

# --- A many-node run on one machine (docs/operations/scaling.md): a primary and a streaming replica,
# two gunicorn web nodes, a Celery worker per queue (settlement twice) and beat, each its own process
# as if on its own host, in CLUSTER_DIR (data, secrets, logs, cluster.env). Ctrl-C stops it all.
# Ports, workers, broker and cache: CLUSTER_ARGS (python -m dbutils.cluster --help).
CLUSTER_DIR ?= $(CURDIR)/.data/cluster
CLUSTER_ARGS ?=
CLUSTER_URLS ?= http://127.0.0.1:18001 http://127.0.0.1:18002
.PHONY: cluster cluster-bench
cluster: install
	exec $(PY) -m dbutils.cluster --dir $(CLUSTER_DIR) $(CLUSTER_ARGS)

# bench_intake through the running cluster's web nodes, one node beside both (BENCH_ARGS: --seconds …).
cluster-bench:
	@set -a && . $(CLUSTER_DIR)/cluster.env && set +a && \
	    $(PY) manage.py bench_intake $(foreach url,$(CLUSTER_URLS),--url $(url)) $(BENCH_ARGS)
