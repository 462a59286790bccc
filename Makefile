# Two commands on a fresh clone: `make demo` and `make test`; both start with `make install`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test test-fast bench soundness clean

install: $(STAMP)

# pip's output goes to $(VENV)/pip.log: all of it when the install fails, its ERROR lines (a dependency
# conflict pip reports with exit status 0) when it succeeds. The build's notices stay in the log.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@echo "$(PY) -m pip install --quiet -e '.[all]'   (log: $(VENV)/pip.log)"
	@$(PY) -m pip install --quiet -e '.[all]' > $(VENV)/pip.log 2>&1 || { cat $(VENV)/pip.log; exit 1; }
	@grep '^ERROR' $(VENV)/pip.log || true
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
