# The project's tasks, one target each; `.ci/run` is `make ci`.
#
#   make install   the development environment in .venv, from the lock (README's install, by uv)
#   make test      the fast tier: unit tests and nbval over every chapter (README's test command)
#   make lint      ruff's lint and format checks
#   make types     mypy over everything that ships (its file list is in pyproject.toml)
#   make slow      the slow tier: end-to-end flows, the book on a reader's folder, subprocess runs
#   make book      the book, from a clean _build, warnings as errors (with TJ_RERUN_TIMES=FILE, its time joins
#                  the rerun checks' there: copied to book/rerun-times.json, they are the times the book quotes)
#   make pdf       the whole book as one PDF in the site, _build/html/trajectory-judge.pdf (after `make book`)
#   make browser   Chromium over every page of the built book (after `make book`)
#   make rerun     the book rerun as Binder and Colab would, and the locks regenerated from their headers
#   make ci        all of the above, in four streams at once (see `ci` below)
#   make execute   execute every chapter whose .md, data or code key moved and write its committed notebook
#   make lock      compile both locks again with the commands in their headers (at the index's date LOCK_DATE,
#                  keeping every pin that still fits pyproject.toml)
#   make lock-fresh  the same commands with no lock to keep (after moving LOCK_DATE)
#
# Each tier's pytest line is written once, here; README, the guide's tests page and the publishing
# workflow name these targets or the same lines, and tests/test_tiers.py checks that together they
# select every test.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
VENV ?= .venv
PY := $(VENV)/bin/python
# the published release, for the cross-check tests and the audit chapter (never committed)
export TJ_RELEASE_DIR ?= $(abspath ..)/shared/upstream-release
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# bytecode is cached (__pycache__, which git ignores), so the many processes the tiers start (xdist's
# workers, the chapters' kernels, the command-line runs) do not each compile the package again
unexport PYTHONDONTWRITEBYTECODE
# how many processes pytest-xdist runs the tests in (a notebook's cells stay together in one of them)
WORKERS ?= auto
# the slow tier's: twice the cores, since its flows wait on servers, subprocesses and Ray as much as they compute
SLOW_WORKERS ?= $(shell echo $$((2 * $$(nproc))))
# the index's date that both locks are compiled at: a lock compiled again on another day is the same
LOCK_DATE := 2026-11-26T00:00:00Z
UV_COMPILE := uv pip compile pyproject.toml --python-version 3.11 --python-platform x86_64-unknown-linux-gnu --exclude-newer $(LOCK_DATE) --no-emit-package trajectory-judge

.PHONY: install test lint types slow book pdf browser rerun ci ci-slow ci-checks ci-pages ci-rerun checks pages execute lock lock-fresh

install: $(VENV)/.installed

# the lock installed by uv (at the lock's own uv pin): the same versions as README's pip command, in a
# fraction of its time, since uv fetches and unpacks in parallel
$(VENV)/.installed: .ci/requirements.lock pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q "$$(grep '^uv==' .ci/requirements.lock)"
	$(VENV)/bin/uv pip install -q --python $(VENV)/bin/python -r .ci/requirements.lock -e ".[dev]"
	touch $@

test: install
	$(PY) -m pytest -n $(WORKERS) --dist loadfile

lint: install
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

types: install
	$(VENV)/bin/mypy

slow: install
	$(PY) -m pytest -p no:nbval -o addopts="" -m slow -n $(SLOW_WORKERS) --dist loadfile tests

book: install
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/book.yml
	rm -rf _build
	start=$$SECONDS; $(VENV)/bin/jupyter-book build . --all -W --keep-going; \
	if [ -n "$${TJ_RERUN_TIMES:-}" ]; then $(PY) tools/record_time.py "$$TJ_RERUN_TIMES" book_build_s $$((SECONDS - start)); fi

# a single-page build from the book's doctrees, printed by Chromium; without Chromium it says so and goes on
pdf: install
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || true
	$(PY) book/_ext/tj_pdf.py

browser: install
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
	command -v pdftotext >/dev/null || (apt-get update -qq && apt-get install -y -qq poppler-utils >/dev/null)
	$(PY) -m pytest -p no:nbval -o addopts="" -m browser -n $(WORKERS) --dist loadfile tests/test_browser.py tests/test_book_html.py tests/test_book_pdf.py

rerun: install
	TJ_RERUN_CHECKS=1 $(PY) -m pytest -p no:nbval -o addopts="" -m rerun -n $(WORKERS) tests/test_rerun.py

# four streams at once, so that no core idles while a tier waits: the rerun tier (which waits on the
# package index more than on the processor) and then lint and types, the fast tier, the slow tier, and
# the book's (the build, its PDF, then Chromium over its pages). The book's stream and the slow tier run
# first: the build and the PDF are short, and Chromium then waits on pages as much as it computes, so
# its waits overlap the others' work. The fast tier takes the processor when they would leave it idle,
# and the rerun tier when all would. Lint and types follow the rerun tier, which ends first, so that
# the run does not end on mypy alone
ci: install
	$(MAKE) -j4 --output-sync=target ci-slow ci-checks ci-pages ci-rerun

ci-slow:
	$(MAKE) slow
ci-checks:
	nice -n 3 $(MAKE) test
ci-pages:
	$(MAKE) pages
ci-rerun:
	nice -n 8 $(MAKE) rerun
	nice -n 8 $(MAKE) lint
	nice -n 8 $(MAKE) types

checks: install
	$(MAKE) test
	$(MAKE) lint
	$(MAKE) types

pages: install
	$(MAKE) book
	$(MAKE) pdf
	$(MAKE) browser

execute: install
	$(PY) -m trajectory_judge.book execute

# the commands of the locks' headers, run where the locks are: uv keeps each pin that still fits, so a
# package index that lists an old release late moves nothing (a clone gets the committed locks back)
COMPILE_LOCKS := $(VENV)/bin/$(UV_COMPILE) --extra dev -o .ci/requirements.lock -q && \
	$(VENV)/bin/$(UV_COMPILE) --extra book --extra check -c .ci/requirements.lock -o .ci/book.lock -q

lock: install
	$(COMPILE_LOCKS)

# the same commands from nothing: every package at its newest release before LOCK_DATE
lock-fresh: install
	rm -f .ci/requirements.lock .ci/book.lock
	$(COMPILE_LOCKS)
