# One-command entry points. Each target installs what it needs by itself:
# the site (build, serve) only MkDocs and Material in .venv-site/ (no torch);
# the pipeline and the tests everything in .venv/.
PY      := .venv/bin/python
SITE_PY := .venv-site/bin/python
DATA    ?= ../shared/data/tinystories/TinyStories-train-head.txt
NAMES   ?= ../shared/data/names/names.txt
HOST    ?= 127.0.0.1
PORT    ?= 8000
# The sub-path `make serve` serves the site under (e.g. PREFIX=/some/lesson/).
PREFIX  ?= /
# The public URL a build is made for (canonical links, sitemap.xml, which Material's
# instant navigation reads). `make build` leaves it out unless given:
# `make build SITE_URL=https://example.org/lesson/`. `make serve` uses the URL it serves.
SITE_URL ?=
# The date a build carries (sitemap.xml's lastmod, and so sw.js's revisions): the last
# commit's, so that the same sources build the same bytes on any day.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
ifneq ($(SOURCE_DATE_EPOCH),)
export SOURCE_DATE_EPOCH
endif
SERVE_URL = http://$(if $(filter 0.0.0.0 ::,$(HOST)),127.0.0.1,$(HOST)):$(PORT)/$(patsubst /%,%,$(PREFIX))

.PHONY: setup site-setup serve build site-check check format format-check lint test models train-runs extra-seeds record-runs microgpt bench clean

.venv/ready: pyproject.toml
	python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[pipeline,site,test]'
	touch $@

.venv-site/ready: pyproject.toml
	python3 -m venv .venv-site
	$(SITE_PY) -m pip install -q -e '.[site]'
	touch $@

node_modules/ready: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

/usr/bin/chromium:
	(apt-get update -qq && apt-get install -y -qq chromium) || \
	  (echo "Could not install Debian's chromium; install it by hand (apt-get install chromium)." >&2; exit 1)

# The other two engines of the cross-engine tests (tests/engines/): Firefox, driven by
# puppeteer-core (npm) over WebDriver BiDi, and WebKitGTK, Safari's engine, driven by its
# WebKitWebDriver through Selenium under a virtual X display.
/usr/bin/firefox-esr:
	(apt-get update -qq && apt-get install -y -qq firefox-esr) || \
	  (echo "Could not install Debian's firefox-esr; install it by hand (apt-get install firefox-esr)." >&2; exit 1)

/usr/bin/WebKitWebDriver /usr/bin/xvfb-run:
	(apt-get update -qq && apt-get install -y -qq webkit2gtk-driver xvfb xauth) || \
	  (echo "Could not install Debian's webkit2gtk-driver and xvfb; install them by hand (apt-get install webkit2gtk-driver xvfb xauth)." >&2; exit 1)

BROWSERS := /usr/bin/chromium /usr/bin/firefox-esr /usr/bin/WebKitWebDriver /usr/bin/xvfb-run

setup: .venv/ready node_modules/ready

site-setup: .venv-site/ready node_modules/ready

.venv-site/checks: pyproject.toml .venv-site/ready
	$(SITE_PY) -m pip install -q -e '.[site,site-check]'
	touch $@

# What the Pages workflow runs before it deploys, in the site's environment (no torch):
# both linters and the site-build tests.
site-check: site-setup .venv-site/checks
	$(SITE_PY) -m ruff check .
	$(SITE_PY) -m ruff format --check .
	node_modules/.bin/eslint .
	node_modules/.bin/prettier --check --log-level warn .
	$(SITE_PY) -m pytest tests/site_build -q

build: site-setup
	$(if $(SITE_URL),SITE_URL='$(SITE_URL)') $(SITE_PY) -m mkdocs build --strict

serve: site-setup
	SITE_URL='$(SERVE_URL)' $(SITE_PY) -m mkdocs build --strict
	$(SITE_PY) -m export.serve --dir site --host $(HOST) --port $(PORT) --prefix '$(PREFIX)'

# The fast loop, under two minutes on a 2-core machine: both linters and both formatters' checks,
# then every test that needs no browser and is not marked slow (tests/conftest.py marks
# everything under tests/browser/). `make format` rewrites the files the checks would refuse.
lint: setup
	$(PY) -m ruff check .
	node_modules/.bin/eslint .

format-check: setup
	$(PY) -m ruff format --check .
	node_modules/.bin/prettier --check --log-level warn .

format: setup
	$(PY) -m ruff format .
	node_modules/.bin/prettier --write --log-level warn .

check: lint format-check
	$(PY) -m pytest -m "not slow and not browser" -q

# Everything: the fast loop first, then the rest (the browsers and the slow tests); it ends with
# its fifteen slowest tests, so every run (CI's too) says where the time went (tests/README.md).
# One pytest process: two xdist workers on the 2-core machine took 36 min instead of 40 and
# failed time-limit and page-load tests under the load (tests/README.md).
test: check .venv-site/ready $(BROWSERS)
	xvfb-run -a $(PY) -m pytest -m "slow or browser" --durations=15

# Maintainers: rerun everything from the stories to wasm_assets/ (about an hour on 2 cores).
# One Make target per training run, so `make -j3 models` trains three at a time; a finished
# run is skipped by the command itself, so an interrupted `make models` resumes. Then the
# stage graph (python -m export all) runs in order, reusing the finished runs.
# PROTOCOL: options for every stage, e.g. a tiny one: PROTOCOL='--updates 4 --seeds 11'.
RUNS     ?= runs
OUT      ?= wasm_assets
PROTOCOL ?=
RUN_NAMES ?=

models: .venv/ready
	$(MAKE) train-runs RUN_NAMES="$$($(PY) -m export runs $(PROTOCOL))"
	$(PY) -m export all --data $(DATA) --out $(OUT) --runs $(RUNS) --no-progress $(PROTOCOL)

train-runs: $(addprefix run-,$(RUN_NAMES))

# run-four_heads-seed11: one run, one command, one folder runs/four_heads-seed11/.
run-%:
	$(PY) -m export train --data $(DATA) --runs $(RUNS) --no-progress $(PROTOCOL) \
	  --models $(word 1,$(subst -seed, ,$*)) --seeds $(word 2,$(subst -seed, ,$*))

# The extra seeds (export/defaults.py EXTRA_SEEDS) of the paired head-count comparison: every
# model once per extra seed, one torch thread per run, each finished run's result.json copied to
# its record in records/runs/ (tracked: commit it). `make -j2 extra-seeds` trains two at a time;
# a finished run is skipped, so it resumes across sessions. Then rerun the stages that read the
# records: python -m export run sweep evidence pagedata.
RECORDS ?= records/runs

extra-seeds: .venv/ready
	$(MAKE) record-runs RUN_NAMES="$$($(PY) -m export.run_records extra-runs)"

record-runs: $(addprefix record-,$(RUN_NAMES))

record-%:
	OMP_NUM_THREADS=1 $(PY) -m export train --data $(DATA) --runs $(RUNS) --no-progress --threads 1 $(PROTOCOL) \
	  --models $(word 1,$(subst -seed, ,$*)) --seeds $(word 2,$(subst -seed, ,$*))
	$(PY) -m export.run_records record $* --runs $(RUNS) --records $(RECORDS)

microgpt: .venv/ready
	$(PY) -m export.microgpt --names $(NAMES) --out wasm_assets/microgpt-trained.json
	$(PY) -m export.microgpt --names $(NAMES) --n-head 1 --out wasm_assets/microgpt-one-head.json
	$(PY) -m export microgpt_heads --names $(NAMES)
	$(PY) -m export pagedata

bench: setup /usr/bin/chromium
	$(PY) bench/train_step.py
	$(PY) bench/browser_inference.py
	$(PY) bench/site_visits.py

clean:
	rm -rf site .pytest_cache
