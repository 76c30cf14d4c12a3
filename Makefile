# The two set-up commands of the README. Both build a local virtual environment first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch goes in first and pinned: a bare `torch` requirement would pull GBs of CUDA wheels.
TORCH_SPEC ?= torch==2.13.0

.PHONY: demo test lint venv clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

venv: $(BIN)/.installed

demo: venv
	$(BIN)/python -m benchmarks.demo

test: venv
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) build *.egg-info
