# Two commands set up everything: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test lint fuzz lint-sample docs bench bench-lsp bench-cpp bench-semgrep accuracy clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# CPU torch for the runtime tests only (the linter never depends on torch); the 2.13.0
# wheel is served from local disk on the project's machines. Debian's chromium for the HTML
# report's browser test (Playwright drives it, no browser download; without it the test skips).
$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	command -v chromium >/dev/null 2>&1 || apt-get install -y -qq chromium >/dev/null 2>&1 \
		|| (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1) \
		|| sudo -n apt-get install -y -qq chromium >/dev/null 2>&1 || true
	$(BIN)/python -m pip install --quiet torch==2.13.0 numpy
	touch $@

## make run: set up and lint the bundled sample project
run: $(STAMP)
	$(BIN)/rocm-lint check fixtures/sample-project --output-format full --exit-zero

## make test: set up with test dependencies and run every test, both tiers (plain `python -m pytest`
## runs the fast tier: unit, snapshot and property tests; --all-tiers adds the integration tier)
test: $(TEST_STAMP)
	$(BIN)/python -m pytest -q --all-tiers

## make lint: the project's own checks, as CI runs them: ruff format --check, ruff check (the
## rules [tool.ruff.lint] selects), mypy against scripts/mypy-baseline.txt (a list that only shrinks)
lint: $(TEST_STAMP)
	$(BIN)/ruff format --check --quiet src tests benchmarks scripts
	$(BIN)/ruff check --quiet src tests benchmarks scripts
	$(BIN)/python scripts/typecheck.py

## make fuzz: the fuzz targets' long run (>100k inputs: Python, C++ and config; CI runs 40 each)
fuzz: $(TEST_STAMP)
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-35000} FUZZ_RANDOM=1 $(BIN)/python -m pytest -q -p no:cacheprovider \
		tests/test_fuzz_targets.py --hypothesis-show-statistics

## make docs: regenerate docs/rules/ from the registry and the rule pages
docs: $(STAMP)
	$(BIN)/python -m rocm_lint.docgen docs/rules

## make bench: every goal of the speed issue, each printing the profile of what is left where it is not met:
## rocm-lint against ruff, ast.parse, flake8 (with/without the plugin) and TorchFix on the torch and diffusers wheels
## (bench_python.py, one file included); the C++ scanner (bench_cpp.py); the editor (bench_lsp.py);
## then what fixes cost (bench_fix.py: JSON/concise warm, --fix/check, quick-fix latency; BENCH_FIX_TREE=<project> picks the tree)
bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/bench_python.py
	$(BIN)/python benchmarks/bench_cpp.py
	$(BIN)/python benchmarks/bench_lsp.py $(BENCH_LSP_ARGS)
	$(BIN)/python benchmarks/bench_fix.py $(if $(BENCH_FIX_TREE),--tree $(BENCH_FIX_TREE))

## make bench-lsp: didChange -> diagnostics through `rocm-lint server` on two 3,000-line torch modules
## (the torch wheel's sources as bench.py unpacks them; BENCH_LSP_ARGS="--baseline-src ../main/src ...")
bench-lsp: $(TEST_STAMP)
	$(BIN)/python benchmarks/bench_lsp.py $(BENCH_LSP_ARGS)

## make bench-cpp: the C++ scanner on FBGEMM, apex and flash-attention (cloned outside the repo)
bench-cpp: $(TEST_STAMP)
	$(BIN)/python benchmarks/bench_cpp.py

## make bench-semgrep: the built-in C++ scanner against Semgrep with semgrep-rules/, same CUDA files
bench-semgrep: $(TEST_STAMP)
	$(BIN)/python benchmarks/bench_semgrep.py

## make accuracy: recall and precision on labeled real repositories (ACCURACY_CORPUS=<folder of
## <owner>+<name> snapshots>; labels in benchmarks/accuracy/labels/; ACCURACY_ARGS="--details -j 2 ...")
accuracy: $(STAMP)
	@test -n "$(ACCURACY_CORPUS)" || (echo "set ACCURACY_CORPUS to a folder of <owner>+<name> repository snapshots" >&2; exit 2)
	$(BIN)/python benchmarks/accuracy/score.py "$(ACCURACY_CORPUS)" $(ACCURACY_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
