# volcano-ui: the two commands of the README's quick start are `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: demo test check setup browser lint bench soak faults bench-setup image-check

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,lint]'
	touch $@

setup: $(BIN)/.installed

# The simulated Volcano cluster plus the dashboard on http://127.0.0.1:$(PORT)/
# (more options of `manage.py demo` through DEMO_ARGS, e.g. DEMO_ARGS="--history-hours 0").
demo: setup
	$(BIN)/python manage.py demo --port $(PORT) $(DEMO_ARGS)

# Headless Chromium for the browser tests comes from Debian's package (never a downloaded build).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "chromium could not be installed: browser tests will be skipped"; \
	  else echo "chromium is absent and cannot be installed here: browser tests will be skipped"; fi; }

# ruff (lint rules and formatting) and mypy (configured in pyproject.toml).
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The whole test suite.
test: setup browser
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The fast loop while changing code: the domain, the pages and the templates, without
# the browser tests and those marked `slow` (they start processes: a fresh virtualenv, gunicorn,
# the demo, the benchmark; or crawl every page over HTTP). The simulator's own tests, the access
# modes over real HTTP, the cache's informer tests and the fault suite run in `make test`.
CHECK_PATHS ?= tests/volcano tests/pages tests/test_templates.py tests/test_translations.py tests/test_env.py
check: setup
	$(BIN)/python -m pytest -q -m "not browser and not slow" $(CHECK_PATHS) $(PYTEST_ARGS)

# The container image's steps without a Docker engine: fresh virtualenv, non-editable install,
# collectstatic, gunicorn with deploy/gunicorn.conf.py until /readyz is 200 (also part of `make test`).
image-check: setup
	$(BIN)/python -m pytest -q tests/prod/test_image_steps.py

# Benchmarks (docs/benchmarks.md): scripts that print numbers, not part of `make test`.
# Pass options through BENCH_ARGS, e.g. `make soak BENCH_ARGS="--minutes 5"`.
$(BIN)/.bench-installed: $(BIN)/.installed
	$(BIN)/pip install --quiet -e '.[test,lint,bench]'
	touch $@

bench-setup: $(BIN)/.bench-installed

bench: bench-setup
	$(BIN)/python -m bench.run $(BENCH_ARGS)

soak: bench-setup
	$(BIN)/python -m bench.soak $(BENCH_ARGS)

faults: bench-setup
	$(BIN)/python -m bench.faults $(BENCH_ARGS)
