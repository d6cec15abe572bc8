# Two entry points: `make lab` and `make test`. Both build .venv from requirements.txt
# when it is missing or older than requirements.txt (venv.mk).
include venv.mk

.PHONY: lab test test-all lint outputs mutation portability hub hub-proxy

# JupyterLab on the course root, loopback only; extra options through LAB_ARGS (the tests pass a port and a token).
# WORK=DIR shows another grading work folder in the Formgrader (its gradebook, submissions, autograded notebooks and
# feedback), e.g. `make lab WORK=work/demo`. jupyter_config/ turns off nbgrader's Assignment and Course Lists and
# adds the course's own parts: its JupyterLab extension (Validate, hidden answers) and Formgrader (flags in view).
WORK_ARGS = $(foreach step,submitted autograded feedback,--CourseDirectory.$(step)_directory=$(abspath $(WORK))/$(step)) \
  --CourseDirectory.db_url=sqlite:///$(abspath $(WORK))/gradebook.db
lab: $(STAMP)
	mkdir -p work/exchange  # the Formgrader's gradebook and its local exchange live there
	$(if $(WORK),test -f $(WORK)/gradebook.db || { echo "error: no gradebook at $(WORK)/gradebook.db"; exit 1; })
	$(BIN)/python -m grader workspace  # students work in workspace/, a copy of the chapters and exercises git ignores
	JUPYTER_CONFIG_PATH=$(abspath jupyter_config)$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH)) \
	  $(BIN)/jupyter lab --ServerApp.root_dir=. --ServerApp.ip=127.0.0.1 --LabApp.news_url=None \
	  --LabApp.default_url=/lab/tree/workspace \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(if $(WORK),$(WORK_ARGS)) $(LAB_ARGS)

# `make test` leaves out the tests marked `sweep` (pyproject.toml): the same flow over more chapters, exercises or
# assignments than the representatives it runs (tests/conftest.py, `representatives`). `make test-all` runs them too.
test: $(STAMP)
	$(BIN)/ruff check grader tests solutions benchmarks scripts
	$(BIN)/python -m pytest -m "not sweep"

test-all: $(STAMP)
	$(BIN)/ruff check grader tests solutions benchmarks scripts
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check grader tests solutions benchmarks scripts

# Mutation analysis (benchmarks/mutation.py): every mutant mutmut makes of every solution cell, each killed or not by
# the exercise's hidden tests; fails on a survivor that solutions/<assignment>/equivalent_mutants.txt does not list.
# Minutes, not part of `make test`. One exercise: `make mutation ASSIGNMENT=ex08_calls_and_swaps`.
mutation: $(STAMP)
	$(BIN)/python -m benchmarks.mutation --assignment $(or $(ASSIGNMENT),all)

# The course on other CPU kernels (tests/test_portability.py): every assignment's scripted students observed under
# each kernel choice torch can be forced to on this machine (ATEN_CPU_CAPABILITY), against the solution's
# observations under every other; `release --check` and `validate` under each. Minutes; the suite checks a part.
portability: $(STAMP)
	GRADER_PORTABILITY=all $(BIN)/python -m pytest tests/test_portability.py -q

# Re-run every chapter top to bottom in the pinned environment and store its outputs. Consecutive stream outputs
# are merged after execution, so a line is never split between two outputs (it renders the same everywhere).
outputs: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.record_timing=False \
	  --NotebookExporter.preprocessors=nbconvert.preprocessors.CoalesceStreamsPreprocessor \
	  --CoalesceStreamsPreprocessor.enabled=True \
	  $(or $(NB),chapters/*.ipynb)
	$(BIN)/python scripts/hide_answers.py $(or $(NB),chapters/*.ipynb)

# JupyterHub on this checkout (hub/jupyterhub_config.py), a trial on one machine: every account must read the checkout
# (a class's hub runs from a copy of hub/: docs/grading-at-scale.md, "A class on JupyterHub"). Its proxy, configurable-http-proxy, is
# pinned in hub/package.json (npm ci); 127.0.0.1; run as root. COURSE_INSTRUCTOR=NAME COURSE_STUDENTS=A,B,... and the
# other settings the config file names pass through.
PROXY := hub/node_modules/.bin/configurable-http-proxy
hub-proxy: $(PROXY)

$(PROXY): hub/package.json hub/package-lock.json
	npm ci --prefix hub --no-audit --no-fund
	touch $(PROXY)

hub: $(STAMP) $(PROXY)
	mkdir -p work/hub
	cd work/hub && $(abspath $(BIN))/jupyterhub -f $(abspath hub/jupyterhub_config.py)
