# The pinned environment, shared by the course's Makefile and the student edition's (grader/edition.py copies this
# file): .venv from requirements.txt and the grader (editable), rebuilt when either file is newer than .venv.
PYTHON ?= python3.11
VENV := .venv
STAMP := $(VENV)/.requirements-installed
BIN := $(VENV)/bin
# The venv's scripts first on PATH: nbgrader (the Formgrader included) runs its `alembic` command by name.
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: venv

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; set PYTHON=/path/to/python3.11"; exit 1; }
	@echo "Installing the course's pinned packages (torch, JupyterLab, nbgrader: about 1.7 GB) into $(VENV)/."
	@echo "The first time this takes a few minutes (about 3 to 10, with the downloads); later runs skip it until requirements.txt changes."
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	# the grader itself, editable: `grader` and `python -m grader` run this checkout from anywhere
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)
