# Two commands on a fresh clone: `make demo` and `make test`; both start with `make install`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test test-fast bench soundness clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[all]'
	@touch $(STAMP)

demo: install
	$(VENV)/bin/dpaudit run configs/quickstart.yaml --out results --overwrite

# make test leaves out the many-seed soundness runs and the few slow checks; make soundness runs them.
# Two pytest-xdist workers: the suite is CPU-bound and the machines it runs on have two cores.
# ruff first: a dead import or an undefined name fails in a second, before the suite's minutes.
test: install
	$(VENV)/bin/ruff check dpaudit tests benchmarks experiments
	$(PY) -m pytest -q -n 2 -m "not soundness and not slow"

test-fast: test

bench: install
	$(PY) benchmarks/run_all.py

soundness: install
	$(PY) -m pytest -q -m "soundness or slow"
	$(PY) benchmarks/soundness.py

clean:
	rm -rf $(VENV) results .pytest_cache build *.egg-info
