# One-command entry points. Each target installs what it needs by itself.
PY      := .venv/bin/python
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
SERVE_URL = http://$(if $(filter 0.0.0.0 ::,$(HOST)),127.0.0.1,$(HOST)):$(PORT)/$(patsubst /%,%,$(PREFIX))

.PHONY: setup serve build test models microgpt bench clean

.venv/ready: pyproject.toml
	python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

node_modules/ready: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

/usr/bin/chromium:
	(apt-get update -qq && apt-get install -y -qq chromium) || \
	  (echo "Could not install Debian's chromium; install it by hand (apt-get install chromium)." >&2; exit 1)

setup: .venv/ready node_modules/ready

build: setup
	$(if $(SITE_URL),SITE_URL='$(SITE_URL)') $(PY) -m mkdocs build --strict

serve: setup
	SITE_URL='$(SERVE_URL)' $(PY) -m mkdocs build --strict
	$(PY) -m export.serve --dir site --host $(HOST) --port $(PORT) --prefix '$(PREFIX)'

test: setup /usr/bin/chromium
	$(PY) -m pytest

# Maintainers: rerun everything from the stories to wasm_assets/ (about an hour on 2 cores).
models: .venv/ready
	$(PY) -m export all --data $(DATA) --out wasm_assets --runs runs

microgpt: .venv/ready
	$(PY) -m export.microgpt --names $(NAMES) --out wasm_assets/microgpt-trained.json
	$(PY) -m export.microgpt --names $(NAMES) --n-head 1 --out wasm_assets/microgpt-one-head.json

bench: setup /usr/bin/chromium
	$(PY) bench/train_step.py
	$(PY) bench/browser_inference.py
	$(PY) bench/site_visits.py

clean:
	rm -rf site .pytest_cache
