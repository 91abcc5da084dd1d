# tfcoach: `make lab` and `make test` are the two quick-start commands.
# Every step is stamped so a second run on a ready machine starts in seconds.

SHELL := /bin/bash
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMPS := .make
ARGS ?=
PYTEST_ARGS ?=
export PATH := $(abspath $(VENV))/bin:$(PATH)
# Keep TensorFlow quiet in kernels and test output.
export TF_CPP_MIN_LOG_LEVEL ?= 2

EXAMPLE_NOTEBOOK := module-01-tensors-dtypes-shapes.ipynb
LABEXT_SOURCES := $(shell find labextension/src labextension/style labextension/schema -type f 2>/dev/null) \
	package.json tsconfig.json
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
APT_GET := $(if $(filter 0,$(shell id -u)),,sudo) env DEBIAN_FRONTEND=noninteractive apt-get

.PHONY: lab test test-fast install lint format pytest system-deps vsix clean help screenshots

help:
	@echo "make lab    install into $(VENV) if needed and start JupyterLab on examples/ (ARGS=...)"
	@echo "make test   install if needed, lint, and run the whole test suite"
	@echo "make test-fast  the tests without TensorFlow, a browser, an editor or a hub (while editing)"
	@echo "make vsix   package the VS Code extension (editors/vscode)"
	@echo "make screenshots  refresh the README's screenshots in docs/ from the browser tests"

$(PY):
	$(PYTHON) -m venv $(VENV)

# Build requirements first: the editable install runs hatch-jupyter-builder
# without build isolation (an isolated build reinstalls JupyterLab, ~30 s).
$(STAMPS)/build-deps: | $(PY)
	@mkdir -p $(STAMPS)
	$(PY) -m pip install --quiet "hatchling>=1.21" "hatch-jupyter-builder>=0.10" "jupyterlab>=4.6,<4.7" editables
	@touch $@

$(STAMPS)/node-deps: package.json .yarnrc.yml $(wildcard yarn.lock) $(STAMPS)/build-deps
	jlpm install
	@touch $@

$(STAMPS)/labextension: $(LABEXT_SOURCES) $(STAMPS)/node-deps
	jlpm build
	@touch $@

$(STAMPS)/install: pyproject.toml $(STAMPS)/build-deps $(STAMPS)/labextension
	$(PY) -m pip install --quiet --no-build-isolation -e ".[tensorflow,test]"
	@# On a re-install, pip writes the wheel's install.json through the symlink that
	@# `labextension develop` left, into the build output: remove it so that the tree is
	@# the same as after a first install (a wheel built from it would carry it twice).
	rm -f jupyterlab_tfcoach/labextension/install.json
	$(VENV)/bin/jupyter labextension develop --overwrite . > /dev/null
	@touch $@

install: $(STAMPS)/install $(STAMPS)/labextension

# The course notebooks ship in the package; Lab opens copies in examples/. A copy that is
# there already is left alone: it may hold the learner's edits.
COURSE_NOTEBOOKS := $(wildcard jupyterlab_tfcoach/course/notebooks/*.ipynb)

lab: install
	@for notebook in $(COURSE_NOTEBOOKS); do \
		copy="examples/$$(basename "$$notebook")"; \
		[ -e "$$copy" ] || cp "$$notebook" "$$copy"; \
	done
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=examples \
		--LabApp.default_url=/lab/tree/$(EXAMPLE_NOTEBOOK) $(ROOT_FLAG) $(ARGS)

# Debian packages the browser and editor tests drive (never a browser download).
SYSTEM_PACKAGES := chromium fonts-liberation neovim emacs-nox elpa-eglot
system-deps:
	@if ! dpkg -s $(SYSTEM_PACKAGES) > /dev/null 2>&1; then \
		$(APT_GET) update -qq && \
		$(APT_GET) install -y -qq $(SYSTEM_PACKAGES) > /dev/null; \
	fi

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	jlpm run lint
	jlpm run test

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Tiers (markers in pyproject.toml, added from what a test uses in tests/conftest.py): the
# fast tier runs on both cores; so do the kernel tests, one test file per worker (each file
# starts its kernel once, and while one kernel computes the other worker's kernel can use
# the second core); browsers, editors, a hub, megabyte inputs and timing run one test at a
# time, as their budgets assume.
SERIAL := browser or editor or hub or slow
HEAVY := kernel or tensorflow or $(SERIAL)

# Every test kernel imports the monitor (about 350 modules of ours) and TensorFlow. Where the
# environment sets PYTHONDONTWRITEBYTECODE (as container images often do), each of those
# imports compiled our sources again (0.5 s of CPU per kernel; the import-order test
# imports the monitor once per module). Tests keep compiled files in one folder of ours
# instead, outside the source tree and the learner's folders.
test-fast pytest: export PYTHONPYCACHEPREFIX := $(abspath $(STAMPS))/pycache
test-fast pytest: export PYTHONDONTWRITEBYTECODE :=

test-fast: install
	$(PY) -m pytest -n 2 -q -m "not ($(HEAVY))" $(PYTEST_ARGS)

pytest: install system-deps
ifeq ($(PYTEST_ARGS),)
	$(PY) -m pytest -n 2 -m "not ($(HEAVY))"
	$(PY) -m pytest -n 2 --dist loadfile -m "(kernel or tensorflow) and not ($(SERIAL))"
	$(PY) -m pytest -m "$(SERIAL)"
else
	$(PY) -m pytest $(PYTEST_ARGS)
endif

test: lint pytest

# The README's screenshots (docs/*.png): only this target writes them, never `make test`.
screenshots: install system-deps
	TFCOACH_UPDATE_SCREENSHOTS=1 $(PY) -m pytest tests/frontend/test_browser_coach.py tests/e2e/test_vscode_e2e.py

vsix: install
	cd editors/vscode && npm ci --no-audit --no-fund && npx --yes @vscode/vsce@3.9.1 package --allow-missing-repository -o tfcoach.vsix

clean:
	rm -rf $(STAMPS) lib jupyterlab_tfcoach/labextension node_modules
