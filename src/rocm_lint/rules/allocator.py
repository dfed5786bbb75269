"""ROC3: caching-allocator and environment settings that HIP builds reject."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, Optional, Tuple

from rocm_lint.domain import ALLOC_CONF_VARS, AUTOTUNE_ENV
from rocm_lint.finding import Applicability, GateStatement, Recipe, RocmValue, span_of
from rocm_lint.lazy import LazyPattern
from rocm_lint.python.context import ModuleContext
from rocm_lint.python.patterns import env_settings
from rocm_lint.rule import FixAvailability, Hit, PyHit, Rule

if TYPE_CHECKING:
    from rocm_lint.configfiles.unit import ConfigUnit, Setting

_MESSAGE = (
    "`max_split_size_mb` in {where}: combined with expandable segments (on by default from "
    "ROCm 7.0) it has grown reserved memory until OOM and read back zeros on ROCm: {advice}"
)

ROC301 = Rule(
    "ROC301",
    "allocator-max-split-size",
    "max_split_size_mb in the allocator config: with expandable segments, runaway memory and zero reads on ROCm",
    triggers=("max_split_size_mb",),
    fix=Applicability.SAFE,  # in Python; shown only in shell, Docker, YAML and .env files
    fix_availability=FixAvailability.SOMETIMES,
    languages=("python", "shell", "dockerfile", "yaml", "dotenv"),
    messages={
        "python": _MESSAGE.replace("{advice}", "leave it out when `is_rocm`"),
        "config": _MESSAGE.replace("{advice}", "leave it out of ROCm environments"),
    },
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)
ROC302 = Rule(
    "ROC302",
    "inductor-max-autotune-env",
    "TORCHINDUCTOR_MAX_AUTOTUNE=1 (or _POINTWISE/_GEMM) exported in a shell script, Dockerfile, YAML or "
    ".env file: GEMM autotuning has memory faults and hangs reported on ROCm",
    triggers=("TORCHINDUCTOR_MAX_AUTOTUNE",),
    languages=("shell", "dockerfile", "yaml", "dotenv"),
    messages={
        "default": "`{name}={value}` turns on Inductor max-autotune for every compile in this "
        "environment: GEMM autotuning has memory faults, GPU hangs and timeouts reported on "
        "ROCm; leave it unset (or 0) where the job runs on ROCm"
    },
)

_NO_EXPANDABLE = LazyPattern(r"expandable_segments\s*:\s*(?:False|false|0)\b")


def risky_max_split(conf: str) -> bool:
    """``max_split_size_mb`` in an allocator setting that does not turn expandable segments off
    (the hazard is the combination; ``expandable_segments:False`` next to it is safe)."""
    return "max_split_size_mb" in conf and not _NO_EXPANDABLE.search(conf)


def without_max_split(conf: str) -> str:
    """The allocator setting with every ``max_split_size_mb:N`` entry removed."""
    return ",".join(
        part for part in conf.split(",") if part.strip() and not part.strip().startswith("max_split_size_mb")
    )


def _recipe(value: ast.AST, node: ast.AST, ctx: ModuleContext) -> Tuple[Optional[Recipe], str]:
    """ROCm gets the same string without max_split_size_mb (only for a literal string);
    when nothing would be left, the whole statement is skipped on ROCm instead.  (recipe, why
    there is none)."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        if not without_max_split(value.value).strip():
            whole = ctx.is_whole_statement(node) and len(getattr(node, "targets", [0])) == 1
            return (GateStatement(), "") if whole else (None, _NOTHING_LEFT)
        rocm = without_max_split(value.value).replace("\\", "\\\\").replace('"', '\\"')
        return RocmValue(span_of(value), f'"{rocm}"', "Drop max_split_size_mb on ROCm"), ""
    return None, _NOT_LITERAL


_NOT_LITERAL = (
    "the setting is not one literal string here (a name, an f-string, a concatenation): the ROCm "
    "value cannot be written from it; drop max_split_size_mb where the string is made"
)
_NOTHING_LEFT = (
    "nothing would remain without max_split_size_mb, and the setting is not a statement of its "
    "own that could be skipped on ROCm"
)


_NO_CONFIG_FIX = (
    "a shell, YAML, Dockerfile or .env setting is not rewritten: it has no ROCm test to gate on and "
    "no check proves the NVIDIA run unchanged there; set the ROCm value where the ROCm job is defined"
)


@ROC301.checker(ast.Assign, ast.AnnAssign, ast.Call, ast.Dict)
def max_split_size(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    for where, name, value in env_settings(node, ctx):
        text = ctx.string_text(value)
        if name in ALLOC_CONF_VARS and text is not None and risky_max_split(text):
            yield PyHit(where, ROC301.message("python", where=name), *_recipe(value, node, ctx))
    if isinstance(node, ast.Call):
        qual = ctx.qualname(node.func) or ""
        if qual.rsplit(".", 1)[-1] in ("_set_allocator_settings", "set_allocator_settings") and node.args:
            text = ctx.string_text(node.args[0])
            if text is not None and risky_max_split(text):
                yield PyHit(
                    node,
                    ROC301.message("python", where="the allocator settings"),
                    *_recipe(node.args[0], node, ctx),
                )


# -- shell, Dockerfile, YAML, .env ----------------------------------------------------------------
# Settings that reach a process at run time: not Dockerfile ARG / --build-arg (build time only)
# and not -D defines (CMake cache entries).
_BUILD_TIME = {"ARG", "build-arg", "define"}


def _runtime_settings(unit: ConfigUnit) -> Iterator[Setting]:
    return (s for s in unit.settings if s.how not in _BUILD_TIME and not unit.never_on_rocm(s.gate))


@ROC301.source_checker("shell", "dockerfile", "yaml", "dotenv")
def max_split_size_in_environment(unit: ConfigUnit) -> Iterator[Hit]:
    """``PYTORCH_*_ALLOC_CONF`` holding max_split_size_mb where the setting can reach a ROCm
    process: not in NVIDIA-only images, jobs, branches or files."""
    for s in _runtime_settings(unit):
        if s.name in ALLOC_CONF_VARS and risky_max_split(s.value):
            message = ROC301.message("config", where=f"`{s.name}`")
            at = unit.code.find("max_split_size_mb", s.value_start, s.value_end)
            if at >= 0:
                yield ROC301.hit(at, at + len("max_split_size_mb"), message, no_fix=_NO_CONFIG_FIX)
            else:
                yield ROC301.hit(unit.anchor(s), s.value_end, message, no_fix=_NO_CONFIG_FIX)


@ROC302.source_checker()
def max_autotune_in_environment(unit: ConfigUnit) -> Iterator[Hit]:
    """``TORCHINDUCTOR_MAX_AUTOTUNE*`` set to a true value (also as the default of ``${X:-1}``)."""
    from rocm_lint.configfiles.unit import default_of, truthy

    for s in _runtime_settings(unit):
        if s.name in AUTOTUNE_ENV:
            value = default_of(s) if s.computed else s.value
            if value is not None and truthy(value):
                yield ROC302.hit(
                    unit.anchor(s), s.value_end, ROC302.message(name=s.name, value=value.strip())
                )
