# memledger: `make run` serves the demo on embedded defaults; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=
# pytest-xdist workers for `make test`, each with its own test database (config/settings/test.py);
# whole files go to one worker. 0 runs the suite in one process.
TEST_WORKERS ?= 2

.PHONY: setup run test check lint browser db-stop clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=25.1"
	$(PY) -m pip install --quiet -e . --group test
	@rm -f $(VENV)/.installed-*
	@touch $@

# Debian's Chromium for the browser tests (Playwright's own download does not work here).
browser:
	@bash scripts/ensure_chromium.sh

run: setup
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	@HOST=$(HOST) PORT=$(PORT) $(PY) scripts/run_services.py

check: setup
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) manage.py check
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) manage.py makemigrations --check --dry-run

lint: setup
	$(VENV)/bin/ruff check .

test: setup browser check
	$(VENV)/bin/pytest -n $(TEST_WORKERS) --dist loadfile --durations=30 $(PYTEST_ARGS)

db-stop: setup
	$(PY) -m config.embedded stop

clean:
	rm -rf $(VENV) .data
