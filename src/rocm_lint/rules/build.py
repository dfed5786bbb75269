"""ROC5: build configuration (setup.py and other Python build code)."""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

from rocm_lint.finding import Applicability
from rocm_lint.python.gates import NVIDIA, ROCM
from rocm_lint.python.patterns import env_settings
from rocm_lint.registry import CONFIG_LANGUAGES, Hit, python_checker, register, source_checker

# -- ROC501 -----------------------------------------------------------------------------
# nvcc options that clang++ (what hipcc runs, and what torch's BuildExtension calls
# directly on ROCm >= 6) rejects with "unknown argument"/"unsupported option".  Each was
# checked against a clang++ driver; `-X<tool>` is listed from ROCm build logs (older
# clang only warned).  Deliberately absent, because clang accepts or merely ignores
# them: `-use_fast_math` (single dash: hipcc translated it; clang reads `-u se_fast_math`),
# `-lineinfo` (`-l ineinfo`, unused at -c), `-arch=sm_80` (Darwin `-arch`, ignored:
# ROC502's business), `-O3`, `-std=`, `-D`/`-U` macros, `--offload-arch`.
NVCC_ONLY_OPTIONS = frozenset({
    "-gencode", "--generate-code", "--gpu-architecture", "--gpu-code", "-code",
    "--use_fast_math", "--extended-lambda", "--expt-extended-lambda", "--expt-relaxed-constexpr",
    "--ptxas-options", "-Xptxas", "-Xcompiler", "-Xcudafe", "-Xnvlink", "-Xfatbin",
    "--compiler-options", "--nvlink-options", "--generate-line-info", "--threads",
    "-maxrregcount", "--maxrregcount", "-ftz", "--ftz", "-prec-div", "--prec-div",
    "-prec-sqrt", "--prec-sqrt", "-fmad", "--fmad", "-res-usage", "--resource-usage",
    "--extra-device-vectorization", "--diag-suppress", "-ccbin", "--compiler-bindir",
    "--default-stream", "--split-compile", "-rdc", "--relocatable-device-code",
    "--allow-unsupported-compiler", "--disable-warnings", "--source-in-ptx",
})

register(
    "ROC501", "nvcc-only-build-flag",
    "nvcc-only flag in a torch extension's nvcc compile args without a ROCm gate: "
    "clang++ under hipcc stops with `unknown argument`",
    triggers=("use_fast_math", "gencode", "generate-code", "gpu-architecture", "gpu-code", "-code=",
              "extended-lambda", "relaxed-constexpr", "ptxas", "-Xcompiler", "-Xcudafe", "-Xnvlink",
              "-Xfatbin", "compiler-options", "nvlink-options", "generate-line-info", "--threads",
              "maxrregcount", "ftz", "prec-div", "prec-sqrt", "fmad", "res-usage", "resource-usage",
              "extra-device-vectorization", "diag-suppress", "ccbin", "compiler-bindir",
              "default-stream", "split-compile", "-rdc", "relocatable-device-code",
              "allow-unsupported-compiler", "disable-warnings", "source-in-ptx"),
    # every finding reaches an nvcc sink: a "nvcc" key, dict(nvcc=...) or extra_cuda_cflags=
    precheck=r"nvcc|extra_cuda_cflags",
    fix=Applicability.UNSAFE,
)


def nvcc_only_option(text: str) -> Optional[str]:
    """The first nvcc-only option in a flag string (``"-gencode=arch=..."``, ``"--threads 4"``)."""
    for token in text.split():
        name = token.split("=", 1)[0]
        if name in NVCC_ONLY_OPTIONS:
            return name
    return None


_LIST_METHODS = {"append", "extend", "insert", "__iadd__"}


def _nvcc_key(node: Optional[ast.AST], ctx) -> bool:
    return node is not None and ctx.constant(node) == "nvcc"


class _BuildFacts:
    """What one module feeds to the nvcc step of a torch extension build, learnt once.

    A *sink* is an expression whose strings reach nvcc (hipcc/clang++ on ROCm): the
    ``"nvcc"`` entry of a dict (``extra_compile_args={"nvcc": [...]}``, ``dict(nvcc=...)``,
    ``args["nvcc"] = ...``, ``args["nvcc"].append(...)``) and the ``extra_cuda_cflags=``
    argument of ``load``/``load_inline``.  The analyser's own gate walk sorts the sinks:
    NVIDIA-only ones are dropped, ROCm-only ones only count for ROC503 (``sink_constants``),
    the rest for both (``nvcc_constants``).  Names read by the live
    sinks are followed to every list the module binds to them (``flags = [...]``,
    ``flags += [...]``, ``flags.append(...)``/``.extend([...])``), except where the name is
    a parameter of the enclosing function (the caller decides, maybe behind a gate).
    """

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.live_values: List[ast.AST] = []  # sink expressions reached on ROCm (not gated)
        self.rocm_values: List[ast.AST] = []  # sink expressions only reached on ROCm
        self.bindings: Dict[str, List[ast.AST]] = {}  # name -> values appended/assigned
        self.nvcc_constants: Set[int] = set()  # strings reaching nvcc in ungated code
        self.sink_constants: Set[int] = set()  # strings reaching the device compiler on ROCm
        self._learn()

    # -- learning ------------------------------------------------------------------------
    def _learn(self) -> None:
        from rocm_lint.python.analyzer import Analyzer

        facts = self

        class _Walk(Analyzer):
            def __init__(self, ctx) -> None:  # no checkers: only the gate walk is wanted
                self.ctx = ctx
                self.enabled = set()
                self.lines = None
                self.dispatch = {}
                self.findings = []
                self.rocm_side_codes = set()

            def check(self, node, state) -> None:
                facts._see(node, state)

        saved = (self.ctx.statement, self.ctx.function, self.ctx.state)
        try:
            _Walk(self.ctx).run()
        finally:
            self.ctx.statement, self.ctx.function, self.ctx.state = saved
        self.nvcc_constants = self._reach(self.live_values)
        self.sink_constants = self.nvcc_constants | self._reach(self.rocm_values)

    def _reach(self, values: List[ast.AST]) -> Set[int]:
        """The strings in ``values``, following the names they read to what is bound to them."""
        names: Set[str] = set()
        found: Set[int] = set()
        for value in values:
            self._collect(value, names, found)
        seen: Set[str] = set()
        while names - seen:  # ``all_flags = base_flags + arch_flags`` chains
            name = (names - seen).pop()
            seen.add(name)
            for value in self.bindings.get(name, ()):
                self._collect(value, names, found)
        return found

    def _see(self, node: ast.AST, state) -> None:
        if state.nvidia_only:
            return
        sinks = self.rocm_values if state.rocm_only else self.live_values
        ctx = self.ctx
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if _nvcc_key(k, ctx):
                    sinks.append(v)
        elif isinstance(node, ast.Call):
            func = node.func
            for kw in node.keywords:
                if kw.arg == "extra_cuda_cflags" or (kw.arg == "nvcc" and ctx.qualname(func) == "dict"):
                    sinks.append(kw.value)
            if isinstance(func, ast.Attribute) and func.attr in _LIST_METHODS:
                owner = func.value
                values = node.args[-1:] if func.attr == "insert" else node.args
                if isinstance(owner, ast.Subscript) and _nvcc_key(owner.slice, ctx):
                    sinks.extend(values)
                elif isinstance(owner, ast.Name) and not self._is_parameter(owner.id):
                    self.bindings.setdefault(owner.id, []).extend(values)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and _nvcc_key(target.slice, ctx):
                    sinks.append(node.value)
                elif isinstance(target, ast.Name) and not self._is_parameter(target.id):
                    self.bindings.setdefault(target.id, []).append(node.value)

    def _is_parameter(self, name: str) -> bool:
        fn = self.ctx.function
        if fn is None:
            return False
        args = fn.args
        every = list(getattr(args, "posonlyargs", [])) + args.args + args.kwonlyargs
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        return any(a.arg == name for a in every)

    def _collect(self, node: ast.AST, names: Set[str], found: Set[int]) -> None:
        """Mark the strings in a value that reaches nvcc, and the names it reads."""
        if isinstance(node, ast.IfExp):
            # ``nvcc_flags if not IS_HIP_EXTENSION else hip_flags``: only ROCm's arm counts.
            t, f = self.ctx.gates.facts(node.test)
            if not (t == NVIDIA or f == ROCM):
                self._collect(node.body, names, found)
            if not (f == NVIDIA or t == ROCM):
                self._collect(node.orelse, names, found)
            return
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                found.add(id(node))
            return
        if isinstance(node, ast.Name):
            names.add(node.id)
            return
        if isinstance(node, (ast.Lambda, ast.FunctionDef)):
            return
        for child in ast.iter_child_nodes(node):
            self._collect(child, names, found)


def build_facts(ctx) -> _BuildFacts:
    return ctx.memo("roc5.build_facts", lambda: _BuildFacts(ctx))


def _is_bare_string(node: ast.AST, ctx) -> bool:
    """A docstring or a string statement on its own: never a flag."""
    stmt = ctx.statement
    return isinstance(stmt, ast.Expr) and stmt.value is node


@python_checker(ast.Constant, codes=("ROC501",))
def find_nvcc_only_flags(node: ast.Constant, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    if not isinstance(node.value, str) or _is_bare_string(node, ctx):
        return
    option = nvcc_only_option(node.value)
    if option is None or id(node) not in build_facts(ctx).nvcc_constants:
        return
    yield node, "ROC501", (
        f"nvcc-only flag `{option}` in a torch extension's nvcc args: ROCm builds hand them to "
        "hipcc/clang++, which stops with `unknown argument`; add it only when not IS_HIP_EXTENSION")


# -- ROC502 / ROC503: hard-coded GPU architectures ----------------------------------------
register(
    "ROC502", "nvidia-arch-list-without-rocm",
    "hard-coded NVIDIA arch list (TORCH_CUDA_ARCH_LIST, -gencode, CMAKE_CUDA_ARCHITECTURES) "
    "in a file that names no ROCm arch: ignored by ROCm builds",
    triggers=("TORCH_CUDA_ARCH_LIST", "CUDAARCHS", "CMAKE_CUDA_ARCHITECTURES", "CUDA_ARCHITECTURES", "arch=",
              "gpu-architecture"),
    fix=Applicability.DISPLAY,
    languages=("python", *CONFIG_LANGUAGES),
)
register(
    "ROC503", "hard-coded-amd-arch",
    "hard-coded AMD GPU arch (--offload-arch=gfx942, PYTORCH_ROCM_ARCH=gfx90a): wrong on every other GPU",
    triggers=("offload-arch", "amdgpu-target", "cuda-gpu-arch", "PYTORCH_ROCM_ARCH", "HIP_ARCHITECTURES",
              "GPU_TARGETS", "HCC_AMDGPU_TARGET"),
    fix=Applicability.DISPLAY,
    rocm_side=True,  # a hard-coded gfx arch is always on the ROCm side
    languages=("python", *CONFIG_LANGUAGES),
)

NVIDIA_ARCH_VARS = {"TORCH_CUDA_ARCH_LIST", "CUDAARCHS", "CMAKE_CUDA_ARCHITECTURES"}
AMD_ARCH_VARS = {"PYTORCH_ROCM_ARCH", "HCC_AMDGPU_TARGET", "AMDGPU_TARGETS", "GPU_TARGETS",
                 "CMAKE_HIP_ARCHITECTURES"}
# A flag string that names an NVIDIA arch: the whole string starts with the flag.
_NVIDIA_ARCH_FLAG = re.compile(
    r"\s*(?:(?:-gencode|--generate-code)[=\s]*)?(?:arch|code)=(?:sm|compute|lto)_\d"
    r"|\s*(?:-arch|--gpu-architecture|--gpu-code|-code)[=\s]+(?:sm|compute)_\d"
    r"|\s*-DCMAKE_CUDA_ARCHITECTURES=\"?\d")
# Strings that ROC501 already reports when they reach nvcc (the -gencode spelling).
_ROC501_ARCH_FLAG = re.compile(r"\s*(?:-gencode|--generate-code|--gpu-architecture|--gpu-code|-code|arch=|code=)")
_AMD_ARCH_FLAG = re.compile(
    r"\s*(?:--offload-arch|--amdgpu-target|--cuda-gpu-arch|-D(?:CMAKE_HIP_ARCHITECTURES|AMDGPU_TARGETS"
    r"|GPU_TARGETS))=\"?gfx\d")
# The file also builds for ROCm: names an AMD arch setting or detects the GPU.
_ROCM_COUNTERPART = re.compile(
    r"PYTORCH_ROCM_ARCH|offload-arch|amdgpu-target|HIP_ARCHITECTURES|GPU_TARGETS|gcnArchName"
    r"|rocm_agent_enumerator|amdgpu-arch|\bgfx\d")
# The file takes the AMD arch from the environment or from the GPU: literal archs are fallbacks.
_AMD_ARCH_SOURCE = re.compile(
    r"(?:getenv|environ\.get)\(\s*[\"'](?:%s)[\"']|[\"'](?:%s)[\"']\s+(?:not\s+)?in\s+"
    r"(?:os\.)?environ|gcnArchName|rocm_agent_enumerator|amdgpu-arch|rocminfo|_get_rocm_arch_flags"
    % ("|".join(sorted(AMD_ARCH_VARS)), "|".join(sorted(AMD_ARCH_VARS))))


def _fstring_parts(ctx) -> Set[int]:
    parts = getattr(ctx, "_rocm_lint_fstring_parts", None)
    if parts is None:
        parts = set()
        ctx._rocm_lint_fstring_parts = parts
    return parts


def _file_matches(ctx, attr: str, pattern: "re.Pattern[str]") -> bool:
    key = "_rocm_lint_" + attr
    cached = getattr(ctx, key, None)
    if cached is None:
        cached = bool(pattern.search(ctx.text or ""))
        setattr(ctx, key, cached)
    return cached


def _literal(value: ast.AST, ctx) -> Optional[str]:
    """The value's text when it is a plain literal (no f-string holes), else None."""
    text = ctx.string_text(value)
    if text is None or "{}" in text or not text.strip():
        return None
    return text


def _is_setdefault(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == "setdefault"


_READ_METHODS = {"startswith", "endswith", "find", "index", "count", "remove", "discard", "replace", "split"}


@python_checker(ast.JoinedStr, ast.Compare, ast.Call, codes=("ROC502", "ROC503"))
def _remember_non_settings(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    """Strings that set nothing: f-string pieces (``f"--offload-arch={arch}"`` is not
    hard-coded), and strings compared or searched for (``"-gencode=..." in flags``,
    ``assert args == ["-gencode=..."]``, ``flag.startswith("-arch=sm_")``)."""
    parts = _fstring_parts(ctx)
    if isinstance(node, ast.JoinedStr):
        parts.update(id(value) for value in node.values)
    elif isinstance(node, ast.Compare):
        for operand in [node.left, *node.comparators]:
            parts.update(id(n) for n in ast.walk(operand) if isinstance(n, ast.Constant))
    elif isinstance(node.func, ast.Attribute) and node.func.attr in _READ_METHODS:
        for arg in node.args:
            parts.update(id(n) for n in ast.walk(arg) if isinstance(n, ast.Constant))
    return iter(())


def _is_test_file(ctx) -> bool:
    """Test modules hold expected values for the CUDA arch logic they test, not build settings."""
    name = re.split(r"[\\/]", ctx.path or "")[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def _nvidia_message(what: str) -> str:
    return (f"hard-coded NVIDIA arch {what} in a file that names no ROCm arch: ROCm builds ignore it "
            "and build for whatever PyTorch defaults to; add the ROCm counterpart "
            "(PYTORCH_ROCM_ARCH / `--offload-arch`, or detect with `gcnArchName`)")


def _amd_message(what: str) -> str:
    return (f"hard-coded AMD arch {what}: no code is built for any other GPU, which then fails with "
            "`invalid device function`/`hipErrorNoBinaryForGpu`; honour PYTORCH_ROCM_ARCH from the "
            "environment or detect the arch at build time (`gcnArchName`)")


@python_checker(ast.Assign, ast.AnnAssign, ast.Call, ast.Dict, codes=("ROC502", "ROC503"))
def find_arch_env_settings(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    if _is_test_file(ctx):
        return
    for where, name, value in env_settings(node, ctx):
        if name in NVIDIA_ARCH_VARS:
            text = _literal(value, ctx)
            if text is not None and re.search(r"\d", text) \
                    and not _file_matches(ctx, "rocm_counterpart", _ROCM_COUNTERPART):
                yield where, "ROC502", _nvidia_message(f"`{name}={text.strip()}`")
        elif name in AMD_ARCH_VARS and not _is_setdefault(node):
            text = _literal(value, ctx)
            if text is not None and re.search(r"gfx\d", text) \
                    and not _file_matches(ctx, "amd_arch_source", _AMD_ARCH_SOURCE):
                yield where, "ROC503", _amd_message(f"`{name}={text.strip()}`")


@python_checker(ast.Constant, codes=("ROC502", "ROC503"))
def find_arch_flags(node: ast.Constant, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    if not isinstance(node.value, str) or _is_bare_string(node, ctx) \
            or id(node) in _fstring_parts(ctx) or _is_test_file(ctx):
        return
    text = node.value
    if _NVIDIA_ARCH_FLAG.match(text) and not _file_matches(ctx, "rocm_counterpart", _ROCM_COUNTERPART):
        # Passed to nvcc unguarded, the -gencode spelling is ROC501's finding already.
        if not (_ROC501_ARCH_FLAG.match(text) and ctx.config.is_enabled("ROC501")
                and id(node) in build_facts(ctx).nvcc_constants):
            yield node, "ROC502", _nvidia_message(f"`{text.strip()}`")
    elif _AMD_ARCH_FLAG.match(text) and not _file_matches(ctx, "amd_arch_source", _AMD_ARCH_SOURCE) \
            and (text.lstrip().startswith("-D") or id(node) in build_facts(ctx).sink_constants):
        yield node, "ROC503", _amd_message(f"`{text.strip()}`")


# -- shell, Dockerfile, YAML, .env, CMake --------------------------------------------------------------
_CONFIG_NVIDIA_ARCH_VARS = NVIDIA_ARCH_VARS | {"CUDA_ARCHITECTURES"}  # + the CMake target property
_CONFIG_AMD_ARCH_VARS = AMD_ARCH_VARS | {"HIP_ARCHITECTURES"}
# NVIDIA arch flags in a command line or a flags variable (words joined by blanks; CMake lists by `;`).
_NVIDIA_ARCH_WORD = re.compile(
    r"(?<![\w-])(?:(?:-gencode|--generate-code)[=\s;]+)?arch=compute_\d+[a-z]?(?:,\s*code=\[?(?:sm|compute|lto)_\d+[a-z]?"
    r"(?:,(?:sm|compute|lto)_\d+[a-z]?)*\]?)?"
    r"|(?<![\w-])(?:-arch|--gpu-architecture|--gpu-code|-code|--cuda-gpu-arch)[=\s;]+(?:sm|compute)_\d+[a-z]?")
_AMD_ARCH_WORD = re.compile(r"(?<![\w-])(?:--offload-arch|--amdgpu-target|--cuda-gpu-arch)=gfx[0-9a-f]+[\w:+-]*"
                            r"(?:,gfx[0-9a-f]+[\w:+-]*)*")
# The file deals with ROCm: an AMD arch setting, a gfx name, or ROCm/HIP named at all (a platform
# switch, a ROCm install path, hipify).  Its NVIDIA arch list is then one side of a split.
_ROCM_AWARE = re.compile(_ROCM_COUNTERPART.pattern + r"|(?i:rocm(?!-lint)|(?<![a-z])hip(?![a-z])|hipcc|hipify|amdgpu)")
# A recipe for NVIDIA machines: it points at the CUDA toolkit or an NVIDIA image or wheel.
_NVIDIA_RECIPE = re.compile(r"/usr/local/cuda|\bCUDA_HOME\b|\bCUDA_PATH\b|\bnvcc\b|nvidia/cuda|nvcr\.io|nvidia-smi"
                            r"|/whl/cu1\d|\+cu1\d{1,2}\b|cuda-toolkit")
# The AMD arch comes from the user or the GPU: literal archs in the file are fallbacks.
_CONFIG_AMD_ARCH_SOURCE = re.compile(
    r"rocm_agent_enumerator|amdgpu-arch|rocminfo|gcnArchName|offload-arch=native"
    r"|(?:\$ENV\{|DEFINED\s+ENV\{)(?:%s)\}|\$\{(?:%s):?[-=]" % ("|".join(sorted(AMD_ARCH_VARS)),
                                                             "|".join(sorted(AMD_ARCH_VARS))))


@source_checker(*CONFIG_LANGUAGES, codes=("ROC502", "ROC503"))
def find_arch_settings_in_config(unit) -> Iterator[Hit]:
    """Arch settings and flags written out in shell, Dockerfile, YAML, .env and CMake files.

    Silent on values computed from variables (``${ARCH}``, ``$(...)``, ``$ENV{...}``), on defaults
    the user overrides (Dockerfile ``ARG``, CMake ``CACHE`` without ``FORCE``, a branch that tests
    the same variable first, or an ``if``/``else`` whose other branch takes it from a variable), on
    code that never runs on ROCm, and in CI definitions (``.github/``, ``.gitlab-ci.yml`` ...)."""
    from rocm_lint.configfiles.scanner import NVIDIA

    if unit.ci_config and unit.language in ("yaml", "shell"):
        return  # CI jobs and their scripts build for the GPUs of their own runners
    # ROC502: NVIDIA archs in a file that does not deal with ROCm at all
    if not (unit.matches("rocm_aware", _ROCM_AWARE) or _ROCM_AWARE.search(re.split(r"[\\/]", unit.path)[-1])
            or unit.nvidia_only_file
            or unit.language != "cmake" and unit.matches("nvidia_recipe", _NVIDIA_RECIPE)):
        for s in unit.settings_of(_CONFIG_NVIDIA_ARCH_VARS):
            if not (s.computed or s.default or s.gate == NVIDIA) and re.search(r"\d", s.value) \
                    and "gfx" not in s.value.lower():
                yield Hit(unit.anchor(s), s.value_end, "ROC502",
                          _nvidia_message(f"`{s.name}={' '.join(s.value.split())}`"))
        for start, end, flag, gate in unit.flag_matches(_NVIDIA_ARCH_WORD):
            if gate != NVIDIA:
                yield Hit(start, end, "ROC502", _nvidia_message(f"`{' '.join(flag.split())}`"))
    # ROC503: a gfx arch written out (ROCm-side code included: that is where it lives)
    if unit.nvidia_only_file or unit.matches("amd_arch_source", _CONFIG_AMD_ARCH_SOURCE):
        return
    for s in unit.settings_of(_CONFIG_AMD_ARCH_VARS):
        if not (s.computed or s.default or s.gate == NVIDIA) and re.search(r"gfx\d", s.value):
            yield Hit(unit.anchor(s), s.value_end, "ROC503", _amd_message(f"`{s.name}={s.value.strip()}`"))
    for start, end, flag, gate in unit.flag_matches(_AMD_ARCH_WORD):
        if gate != NVIDIA:
            yield Hit(start, end, "ROC503", _amd_message(f"`{flag}`"))
