"""ROC4: NVIDIA-only packages and tools."""

from __future__ import annotations

import ast
import os
import re
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Set, Union

from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.finding import Applicability, GuardImport
from rocm_lint.lazy import LazyPattern
from rocm_lint.python.context import ModuleContext
from rocm_lint.rules.package_gates import path_tokens, under_if_naming
from rocm_lint.rule import FixAvailability, Hit, PyHit, Rule

if TYPE_CHECKING:
    from rocm_lint.configfiles.unit import ConfigUnit

ROC401 = Rule(
    "ROC401",
    "unguarded-pynvml-import",
    "module-level `import pynvml` without try/except ImportError or a ROCm gate: no NVML on AMD hosts",
    triggers=("pynvml",),
    fix=Applicability.UNSAFE,
    fix_availability=FixAvailability.ALWAYS,
    messages={
        "default": "module-level `import pynvml` with no fallback: AMD hosts have no NVML "
        "(nvmlInit fails, or the package is missing); wrap it in try/except "
        "ImportError and use amdsmi when `is_rocm`"
    },
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)
ROC402 = Rule(
    "ROC402",
    "nvidia-only-package-import",
    "module-level import of an NVIDIA-only package (TensorRT, Torch-TensorRT, nvtx, PyCUDA, DALI) "
    "with no fallback: it has no ROCm build",
    triggers=("tensorrt", "nvtx", "pycuda", "dali"),
    # Its one checker fires on an import whose module's first name is tensorrt, tensorrt_llm,
    # torch_tensorrt, nvtx, pycuda or nvidia (``nvidia.dali``, ``from nvidia import dali``): that
    # name is spelled in the text.  "dali" alone is in every "modality" (42 of diffusers' 68
    # parsed files were parsed for ROC402 only, none with a finding).
    precheck=r"tensorrt|nvtx|pycuda|nvidia",
    messages={
        "default": "module-level import of {what}, which has no ROCm build: this module "
        "fails to import on AMD hosts; import it in try/except ImportError or "
        "behind `if not is_rocm:` (on ROCm use {instead})"
    },
)
ROC403 = Rule(
    "ROC403",
    "flash-attn-import-without-fallback",
    "module-level `import flash_attn` with no fallback: the CUDA wheel does not build or import on ROCm",
    triggers=("flash_attn",),
    messages={
        "default": "`flash_attn` imported with no fallback: flash-attn's prebuilt wheels are "
        "CUDA-only and a ROCm build must be compiled separately for supported GPUs, "
        "so this fails on most ROCm installs; import it in try/except ImportError "
        "and fall back to `torch.nn.functional.scaled_dot_product_attention`"
    },
)
ROC404 = Rule(
    "ROC404",
    "nvidia-tool-subprocess",
    "NVIDIA command-line tool (`nvidia-smi`, `nvcc`; the `nsys`/`ncu`/`nvprof` profilers, also in scripts, "
    "Dockerfiles and YAML) run without a ROCm gate: absent on ROCm hosts",
    # `ncu` is also a piece of ordinary words (`concurrent`): the precheck wants a tool name as a word.
    # `\b(?:nvidia-smi|nvcc|nsys|ncu|nvprof)\b`, literal-led (a leading `\b` is tried at every
    # position: 3 ms on a 120 KB module, now 0.5 ms); the same files match (tests/test_registry_index.py).
    triggers=("nvidia-smi", "nvcc", "nsys", "ncu", "nvprof"),
    precheck=r"n(?<=(?<!\w)n)(?:vidia-smi|vcc|sys|cu|vprof)\b",
    languages=("python", "shell", "dockerfile", "yaml"),
    messages={
        "default": "`{tool}` is run with no ROCm gate or fallback: ROCm hosts have no "
        "{tool} (use {instead}), so this raises FileNotFoundError or reads "
        "empty output; gate it with `if not is_rocm:` or catch FileNotFoundError",
        "config": "`{tool}` runs the command under an NVIDIA profiler that ROCm hosts do not have (use "
        "{instead}): the shell stops with `{tool}: command not found` (exit 127) and the "
        "workload never starts; pick the profiler per platform (`command -v {tool}` or a "
        "ROCm branch)",
    },
)
ROC408 = Rule(
    "ROC408",
    "apex-group-batchnorm-across-gpus",
    "APEX group batch norm (`apex.contrib.groupbn.BatchNorm2d_NHWC`) with `bn_group` above 1 and no ROCm "
    "gate: ROCm's apex compiles the cross-GPU exchange out, so each GPU silently normalises with its own "
    "statistics",
    # (`bn_group`: a subclass passes it on in `super().__init__(..., bn_group=...)`)
    triggers=("BatchNorm2d_NHWC", "bn_group"),
    precheck=r"BatchNorm2d_NHWC",
    messages={
        "default": "`BatchNorm2d_NHWC(..., bn_group={group})` synchronises batch statistics across "
        "{across}: ROCm's apex builds group batch norm only for `bn_group=1` (the exchange "
        "between GPUs is compiled out under `USE_ROCM`), so on AMD GPUs each GPU silently "
        "normalises with its own batch's statistics; on ROCm use `torch.nn.SyncBatchNorm` "
        "(or `apex.parallel.SyncBatchNorm`, which ROCm's apex supports)"
    },
)


# -- ROC401: pynvml ------------------------------------------------------------------------
def _imports_pynvml(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name == "pynvml" or a.name.startswith("pynvml.") for a in node.names)
    return (
        node.level == 0
        and node.module is not None
        and (node.module == "pynvml" or node.module.startswith("pynvml."))
    )


def _bound_by(node: Union[ast.Import, ast.ImportFrom]) -> Set[str]:
    if isinstance(node, ast.Import):
        return {a.asname or a.name.split(".")[0] for a in node.names}
    return {a.asname or a.name for a in node.names if a.name != "*"}


def _mentions(node: ast.AST, names: Set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _used_at_import(tree: ast.Module, names: Set[str], after: int) -> Optional[int]:
    """The first line after ``after`` where code that runs while the module is imported reads one
    of ``names`` with no test of it around: module-level statements, class bodies, decorators and
    defaults, and the bodies of the module's functions that such code calls (transitively).
    Function bodies nobody calls at import time are not counted; a use under an ``if`` whose
    test names the name (``if pynvml is not None:``) is guarded."""
    functions: Dict[str, ast.AST] = {
        s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    seen: Set[str] = set()
    found: List[int] = []

    def visit(node: ast.AST, in_called: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            for d in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
                visit(d, in_called)
            for d in getattr(node, "decorator_list", []):
                visit(d, in_called)
            return
        if isinstance(node, (ast.If, ast.While, ast.IfExp)) and _mentions(node.test, names):
            return  # a use that tests the name first
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            if in_called or node.lineno > after:
                found.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.lineno > after:
            fn = functions.get(node.func.id)
            if fn is not None and fn.name not in seen and fn.name not in names:
                seen.add(fn.name)
                before = len(found)
                for stmt in fn.body:
                    visit(stmt, True)
                if len(found) > before:
                    found[before:] = [node.lineno]  # reported at the call
        for child in ast.iter_child_nodes(node):
            visit(child, in_called)

    for stmt in tree.body:
        visit(stmt, False)
    return min(found) if found else None


@ROC401.checker(ast.Import, ast.ImportFrom)
def unguarded_pynvml_import(node: Union[ast.Import, ast.ImportFrom], ctx: ModuleContext) -> Iterator[PyHit]:
    state = ctx.state
    if state.in_function or state.import_guarded or not _imports_pynvml(node):
        return
    names = _bound_by(node)
    line = _used_at_import(ctx.tree, names, node.end_lineno or node.lineno)
    if line is not None:
        name = sorted(names)[0]
        yield PyHit(
            node,
            ROC401.message(),
            None,
            f"`{name}` is used when the module is imported (line {line}): with the import guarded, "
            f"an AMD host would get an AttributeError on None there instead of this clear "
            f"ImportError; guard that use too (`if {name} is not None:`) or import pynvml where it "
            "is needed",
        )
        return
    yield PyHit(
        node,
        ROC401.message(),
        GuardImport(
            "Guard the import with try/except ImportError (the name is None where pynvml is missing)"
        ),
    )


# -- ROC402: packages with no ROCm build ---------------------------------------------------
# top-level module -> (what it is, what ROCm offers instead, words of an opt-in `if` test)
_NVIDIA_ONLY = {
    "tensorrt": ("TensorRT", "MIGraphX", ("tensorrt", "trt")),
    "tensorrt_llm": ("TensorRT-LLM", "vLLM or SGLang on ROCm", ("tensorrt", "trt")),
    "torch_tensorrt": ("Torch-TensorRT", "`torch.compile` or MIGraphX", ("tensorrt", "trt")),
    "nvtx": ("the `nvtx` package", "`torch.cuda.nvtx` or rocTX (`hip.roctx`)", ("nvtx",)),
    "pycuda": ("PyCUDA", "PyTorch's own stream/memory APIs or HIP Python", ("pycuda",)),
    "nvidia.dali": ("NVIDIA DALI", "a CPU or PyTorch data pipeline", ("dali",)),
}


def _nvidia_only_module(name: Optional[str]) -> Optional[str]:
    if not name:
        return None
    for mod in _NVIDIA_ONLY:
        if name == mod or name.startswith(mod + "."):
            return mod
    return None


def _named_after_backend(ctx: ModuleContext) -> bool:
    """A file whose path names the backend (`trt_utils.py`, `export/trtllm/`, `run_tensorrt_x.py`)
    is that backend's integration code: it is only imported by users who chose the backend."""
    for tok in path_tokens(ctx):
        # also a converter named for its target: `fx2trt`, `onnx2trt`, `torch2trt`
        if (
            tok.startswith(("tensorrt", "trt"))
            or tok.endswith(("2trt", "tensorrt"))
            or tok in ("nvtx", "pycuda", "dali")
        ):
            return True
    return False


@ROC402.checker(ast.Import, ast.ImportFrom)
def nvidia_only_package_import(
    node: Union[ast.Import, ast.ImportFrom], ctx: ModuleContext
) -> Iterator[PyHit]:
    state = ctx.state
    if state.in_function or state.import_guarded:
        return  # lazy imports sit on a path the caller opted into; guarded ones have a fallback
    if isinstance(node, ast.Import):
        mods = [_nvidia_only_module(a.name) for a in node.names]
    else:
        mods = [_nvidia_only_module(node.module)] if node.level == 0 else []
        if node.level == 0 and node.module == "nvidia":  # from nvidia import dali
            mods += [_nvidia_only_module("nvidia." + a.name) for a in node.names]
    mod = next((m for m in mods if m), None)
    if mod is None:
        return
    what, instead, keys = _NVIDIA_ONLY[mod]
    if under_if_naming(ctx, ctx.statement, keys) or _named_after_backend(ctx):
        return
    yield PyHit(node, ROC402.message(what=what, instead=instead))


# -- ROC403: flash_attn without a fallback -------------------------------------------------


def _imports_flash_attn(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name == "flash_attn" or a.name.startswith("flash_attn.") for a in node.names)
    return (
        node.level == 0
        and node.module is not None
        and (node.module == "flash_attn" or node.module.startswith("flash_attn."))
    )


def _inside_flash_attn_project(ctx: ModuleContext) -> bool:
    """flash-attn's own package, tests and benchmarks (upstream or the ROCm fork) need it by
    definition: the ROCm fork installs under the same name."""
    parts = os.path.abspath(ctx.path).replace("\\", "/").lower().split("/")
    return "flash_attn" in parts[:-1] or any("flash-attention" in p for p in parts[:-1])


@ROC403.checker(ast.Import, ast.ImportFrom)
def flash_attn_import_without_fallback(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    state = ctx.state
    if state.in_function or state.import_guarded or not _imports_flash_attn(node):
        return
    if under_if_naming(ctx, ctx.statement, ("flash",)) or _inside_flash_attn_project(ctx):
        return
    yield PyHit(node, ROC403.message())


# -- ROC404: nvidia-smi / nvcc run as a subprocess -----------------------------------------
_TOOLS = {
    "nvidia-smi": "`rocm-smi` / `amd-smi`",
    "nvcc": "`hipcc` (and `torch.version.hip` for the version)",
    "nsys": "`rocprofv3 --sys-trace` or `rocprof-sys` (Nsight Systems' ROCm counterparts)",
    "ncu": "`rocprofv3 --pmc` or `rocprof-compute`, formerly Omniperf (Nsight Compute's ROCm counterparts)",
    "nvprof": "`rocprofv3` (rocprof)",
}
# The profilers wrap a workload (`nsys profile python train.py`): without them nothing runs.
PROFILERS = ("nsys", "ncu", "nvprof")
_EXEC_RUNNERS = {
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "asyncio.create_subprocess_exec",
}
_SHELL_RUNNERS = {
    "os.system",
    "os.popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "asyncio.create_subprocess_shell",
}
# What a missing executable raises (FileNotFoundError, an OSError) and its catch-alls.
_MISSING_TOOL_ERRORS = {
    "FileNotFoundError",
    "OSError",
    "EnvironmentError",
    "IOError",
    "Exception",
    "BaseException",
}
# Through a shell a missing tool is exit status 127: only `check=True` style calls raise, and
# they raise CalledProcessError.
_SHELL_ERRORS = _MISSING_TOOL_ERRORS | {"CalledProcessError", "SubprocessError"}
_NVIDIA_HELPER_WORDS = ("cuda", "nvcc", "nvidia", "nvml")
_ENV_WORD = LazyPattern(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _tool_of_word(word: Optional[str]) -> Optional[str]:
    if not word:
        return None
    base = word.strip("\"'").replace("\\", "/").rsplit("/", 1)[-1].lower()
    if base.endswith(".exe"):
        base = base[:-4]
    return base if base in _TOOLS else None


def _tool_of_shell(text: Optional[str]) -> Optional[str]:
    """The program a shell command line starts (after `VAR=x`, `sudo`, `env`)."""
    if text is None:
        return None
    for word in text.split():
        if _ENV_WORD.match(word) or word in ("sudo", "env", "exec", "command"):
            continue
        return _tool_of_word(word)
    return None


def _tool_of_argv(node: ast.AST, ctx: ModuleContext) -> Optional[str]:
    """The program an argv (list, tuple, `"...".split()`, `shlex.split(...)`) starts."""
    node = ctx.resolve(node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # ["nsys", "profile"] + cmd
        return _tool_of_argv(node.left, ctx)
    if isinstance(node, (ast.List, ast.Tuple)):
        if not node.elts:
            return None
        first = ctx.resolve(node.elts[0])
        if (
            isinstance(first, ast.Call)
            and ctx.qualname(first.func) in ("os.path.join", "pathlib.Path")
            and first.args
        ):
            return _tool_of_word(ctx.string_text(first.args[-1]))
        text = ctx.string_text(first)
        return _tool_of_word(text) if text is not None else None
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "split" and not node.args:
            return _tool_of_shell(ctx.string_text(func.value))
        if ctx.qualname(func) == "shlex.split" and node.args:
            return _tool_of_shell(ctx.string_text(node.args[0]))
        return None
    return _tool_of_shell(ctx.string_text(node))


def _looks_up(ctx: ModuleContext, scope: ast.AST, tool: str) -> bool:
    """Does the scope ask whether the tool exists (`shutil.which("nvidia-smi")`,
    `find_executable("nvcc")`, `os.path.exists(<.../nvcc>)`) before relying on it?"""
    for sub in ast.walk(scope):
        if isinstance(sub, ast.Call) and sub.args:
            qual = ctx.qualname(sub.func) or ""
            if qual.rsplit(".", 1)[-1] in ("which", "find_executable", "exists", "isfile", "access"):
                if _tool_of_word(ctx.string_text(sub.args[0])) == tool:
                    return True
    return False


# ROCm's profilers: a file that names one runs each platform's own (a platform split).
_ROCM_PROFILER = LazyPattern(r"\b(?:rocprof\w*|rocsys|omniperf|omnitrace|roctracer)\b", re.I)


def _names_profiler(words: Set[str], tool: str) -> bool:
    return tool in words or "nsight" in words


def _named_for_profiler(ctx: ModuleContext, tool: str) -> bool:
    """A module or helper named for the profiler (`nsys_profile.py`, `def run_under_ncu`) exists to
    run it: it is used by whoever chose that profiler."""
    fn = ctx.function
    fn_words = set(re.split(r"[^a-z0-9]+", fn.name.lower())) if fn is not None else set()
    return _names_profiler(path_tokens(ctx), tool) or _names_profiler(fn_words, tool)


# What ROCm runs instead of each tool, spelled as a program name in the code.
_ROCM_COUNTERPART = {
    "nvidia-smi": LazyPattern(r"[\"'/](?:rocm-smi|amd-smi|rocminfo)\b"),
    "nvcc": LazyPattern(r"[\"'/](?:hipcc|amdclang\+\+|hipconfig)\b"),
}


def _class_split(ctx: ModuleContext, tool: str) -> bool:
    """Is the call in a method that a sibling class of the module overrides with the ROCm tool
    (sglang's check_env.py: ``GPUEnv.get_topology`` runs nvidia-smi, ``HIPEnv.get_topology``
    rocm-smi)?  The classes are the platform split: the module picks one per platform, as a file
    that names a ROCm profiler runs each platform's own."""
    fn, counterpart = ctx.function, _ROCM_COUNTERPART.get(tool)
    if fn is None or counterpart is None:
        return False
    owner = next((parent for child, parent in ctx.ancestors(fn) if child is fn), None)
    if not isinstance(owner, ast.ClassDef):
        return False

    def rocm_methods() -> dict:
        """method name -> the classes whose method of that name runs the ROCm counterpart
        (and not the NVIDIA tool too)."""
        found: dict = {}
        for cls in ctx.tree.body:
            if isinstance(cls, ast.ClassDef):
                for m in cls.body:
                    if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    text = ctx.segment(m) or ""
                    # runs the ROCm tool, and not the NVIDIA one as well (no split then)
                    if counterpart.search(text) and not re.search(r"[\"'/]%s\b" % re.escape(tool), text):
                        found.setdefault(m.name, []).append(cls)
        return found

    others = ctx.memo("ROC404.class_split." + tool, rocm_methods).get(fn.name, [])
    return any(cls is not owner for cls in others)


@ROC404.checker(ast.Call)
def nvidia_tool_subprocess(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    qual = ctx.qualname(node.func)
    if qual not in _EXEC_RUNNERS and qual not in _SHELL_RUNNERS:
        return
    argv = (
        node.args[0]
        if node.args
        else next((k.value for k in node.keywords if k.arg in ("args", "cmd", "command")), None)
    )
    if argv is None:
        return
    shell = qual in _SHELL_RUNNERS or any(
        k.arg == "shell" and ctx.constant(k.value) not in (False, None, 0) for k in node.keywords
    )
    if qual == "asyncio.create_subprocess_exec":
        tool = _tool_of_word(ctx.string_text(argv))
    elif shell:
        tool = _tool_of_shell(ctx.string_text(argv)) or _tool_of_argv(argv, ctx)
    else:
        tool = _tool_of_argv(argv, ctx)
    if tool is None:
        return
    # inside the body of a `try` whose handlers catch what a missing tool raises (or catch all)
    if ctx.caught(ctx.statement, _SHELL_ERRORS if shell else _MISSING_TOOL_ERRORS):
        return
    # an opt-in to profiling is no platform choice (ROC404's page): no env switch here
    if under_if_naming(ctx, ctx.statement, (tool, tool.replace("-", "_")), env_opt_in=False):
        return
    if _looks_up(ctx, ctx.function if ctx.function is not None else ctx.tree, tool):
        return
    if tool in PROFILERS and (
        _named_for_profiler(ctx, tool)
        or ctx.memo("ROC404.rocm_profiler", lambda: bool(_ROCM_PROFILER.search(ctx.text or "")))
    ):
        return
    if _class_split(ctx, tool):
        return
    if ctx.function is not None and any(w in ctx.function.name.lower() for w in _NVIDIA_HELPER_WORDS):
        # `get_nvcc_cuda_version()`, `_check_nvidia_connectivity()`: a helper named for NVIDIA is
        # called from the NVIDIA side of a platform split (its call sites carry the gate).
        return
    yield PyHit(node, ROC404.message(tool=tool, instead=_TOOLS[tool]))


# -- ROC404 in shell scripts, Dockerfiles and YAML: the NVIDIA profilers as a command prefix ----------
_PROFILER_TEST = LazyPattern(r"\b(?:nsys|ncu|nvprof|nsight[\w-]*|rocprof\w*|omniperf|omnitrace)\b", re.I)
_NUMBER = LazyPattern(r"\d+$")


def _profiler_at(words) -> Optional[int]:
    """Where a profiler starts the command: the first word, or the first after what a launcher
    leaves (`mpirun -np 8 nsys ...` reads as `8 nsys ...`: numbers, options and their values)."""
    option_value = False
    for k, w in enumerate(words):
        if w.computed:
            return None
        base = w.value.replace("\\", "/").rsplit("/", 1)[-1]
        if base in PROFILERS:
            return k
        if w.value.startswith("-"):
            option_value = "=" not in w.value
        elif _NUMBER.match(w.value) or option_value:
            option_value = False
        else:
            return None
    return None


def _file_names_profiler(unit: ConfigUnit, tool: str) -> bool:
    parts = re.split(r"[\\/]", unit.path.lower())[-2:]
    return _names_profiler(set(re.split(r"[^a-z0-9]+", " ".join(parts))), tool)


@ROC404.source_checker("shell", "dockerfile", "yaml")
def nvidia_profiler_in_config(unit: ConfigUnit) -> Iterator[Hit]:
    """`nsys profile ...`, `ncu ...`, `nvprof ...` run by a script, an image or a job (CI jobs run on
    their own runners' GPUs; files named for CUDA or for the profiler are NVIDIA's)."""
    if unit.ci_config or unit.nvidia_only_file or unit.matches("rocm_profiler", _ROCM_PROFILER):
        return
    for args in unit.tool_args:
        if args.gate == NVIDIA:
            continue
        k = _profiler_at(args.words)
        if k is None:
            continue
        w = args.words[k]
        tool = w.value.replace("\\", "/").rsplit("/", 1)[-1]
        if any(_PROFILER_TEST.search(c) for c in args.conditions) or _file_names_profiler(unit, tool):
            continue  # `if command -v nsys`, `[ "$PROFILER" = nsys ]`, `run_nsys.sh`
        yield ROC404.hit(w.start, w.end, ROC404.message("config", tool=tool, instead=_TOOLS[tool]))


# -- ROC408: APEX group batch norm across GPUs ----------------------------------------------
_GROUPBN = "apex.contrib.groupbn"


def _is_group_bn(qual: str) -> bool:
    return qual.startswith(_GROUPBN + ".") and qual.endswith(".BatchNorm2d_NHWC")


def _is_group_bn_super_init(node: ast.Call, ctx: ModuleContext) -> bool:
    """``super().__init__(...)`` in a subclass of APEX's group batch norm (MLPerf's
    ``class BnAddRelu(BatchNorm2d_NHWC)``): its arguments are the group batch norm's."""
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    ):
        return False
    owner = next((p for _, p in ctx.ancestors(node) if isinstance(p, ast.ClassDef)), None)
    return owner is not None and any(_is_group_bn(ctx.qualname(base) or "") for base in owner.bases)


@ROC408.checker(ast.Call)
def apex_group_batchnorm(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    qual = ctx.qualname(node.func) or ""
    if not (_is_group_bn(qual) or _is_group_bn_super_init(node, ctx)):
        return
    group = next((k.value for k in node.keywords if k.arg == "bn_group"), None)
    if group is None and len(node.args) > 2:
        group = node.args[2]  # BatchNorm2d_NHWC(num_features, fuse_relu, bn_group, ...)
    if group is None or any(k.arg is None for k in node.keywords):
        return  # the default (1), or `**kwargs` the rule cannot see into
    if isinstance(group, ast.IfExp):  # `1 if is_rocm else 8`: the side ROCm takes
        t, f = ctx.gates.facts(group.test)
        if t == ROCM or f == NVIDIA:
            group = group.body
        elif t == NVIDIA or f == ROCM:
            group = group.orelse
    value = ctx.constant(group)
    if value is None or isinstance(value, bool) or (isinstance(value, int) and value <= 1):
        return
    if isinstance(value, int):
        yield PyHit(node, ROC408.message(group=value, across=f"{value} GPUs"))
    elif value is ...:
        text = ctx.snippet(group, "a computed value", 40)
        yield PyHit(node, ROC408.message(group=text, across=f"the GPUs `{text}` names"))
