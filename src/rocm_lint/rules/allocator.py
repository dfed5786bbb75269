"""ROC3: caching-allocator and environment settings that HIP builds reject."""

from __future__ import annotations

import ast
from typing import Iterator, Tuple

from rocm_lint.finding import Applicability
from rocm_lint.fix.recipes import GateStatement, RocmValue, span_of
from rocm_lint.python.patterns import env_settings
from rocm_lint.registry import Hit, python_checker, register, source_checker

register(
    "ROC301", "allocator-max-split-size",
    "max_split_size_mb in the allocator config: with expandable segments, runaway memory and zero reads on ROCm",
    triggers=("max_split_size_mb",),
    fix=Applicability.SAFE,  # in Python; shown only in shell, Docker, YAML and .env files
    languages=("python", "shell", "dockerfile", "yaml", "dotenv"),
)
register(
    "ROC302", "inductor-max-autotune-env",
    "TORCHINDUCTOR_MAX_AUTOTUNE=1 (or _POINTWISE/_GEMM) exported in a shell script, Dockerfile, YAML or "
    ".env file: GEMM autotuning has memory faults and hangs reported on ROCm",
    triggers=("TORCHINDUCTOR_MAX_AUTOTUNE",),
    fix=Applicability.DISPLAY,
    languages=("shell", "dockerfile", "yaml", "dotenv"),
)

ALLOC_CONF_VARS = {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}
_MESSAGE = ("`max_split_size_mb` in {where}: combined with expandable segments (on by default from "
            "ROCm 7.0) it has grown reserved memory until OOM and read back zeros on ROCm: leave it "
            "out when `is_rocm`")


def without_max_split(conf: str) -> str:
    """The allocator setting with every ``max_split_size_mb:N`` entry removed."""
    return ",".join(part for part in conf.split(",")
                    if part.strip() and not part.strip().startswith("max_split_size_mb"))


def _recipe(value: ast.AST, node: ast.AST, ctx):
    """ROCm gets the same string without max_split_size_mb (only for a literal string);
    when nothing would be left, the whole statement is skipped on ROCm instead."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        if not without_max_split(value.value).strip():
            whole = ctx.is_whole_statement(node) and len(getattr(node, "targets", [0])) == 1
            return GateStatement() if whole else None
        rocm = without_max_split(value.value).replace("\\", "\\\\").replace('"', '\\"')
        return RocmValue(span_of(value), f'"{rocm}"',
                         "Drop max_split_size_mb on ROCm")
    return None


@python_checker(ast.Assign, ast.AnnAssign, ast.Call, ast.Dict, codes=("ROC301",))
def find_max_split_size(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    for where, name, value in env_settings(node, ctx):
        text = ctx.string_text(value)
        if name in ALLOC_CONF_VARS and text is not None and "max_split_size_mb" in text:
            yield where, "ROC301", _MESSAGE.format(where=name), _recipe(value, node, ctx)
    if isinstance(node, ast.Call):
        qual = ctx.qualname(node.func) or ""
        if qual.rsplit(".", 1)[-1] in ("_set_allocator_settings", "set_allocator_settings") and node.args:
            text = ctx.string_text(node.args[0])
            if text is not None and "max_split_size_mb" in text:
                yield node, "ROC301", _MESSAGE.format(where="the allocator settings"), \
                    _recipe(node.args[0], node, ctx)


# -- shell, Dockerfile, YAML, .env ----------------------------------------------------------------
AUTOTUNE_ENV = {"TORCHINDUCTOR_MAX_AUTOTUNE", "TORCHINDUCTOR_MAX_AUTOTUNE_POINTWISE",
                "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM"}
_ENV_LANGUAGES = ("shell", "dockerfile", "yaml", "dotenv")


@source_checker(*_ENV_LANGUAGES, codes=("ROC301", "ROC302"))
def find_environment_settings(unit) -> Iterator[Hit]:
    from rocm_lint.text.scanner import nvidia_only_file, truthy

    if nvidia_only_file(unit):
        return
    for s in unit.settings_of(ALLOC_CONF_VARS):
        at = s.value.find("max_split_size_mb")
        if at >= 0:
            yield Hit(s.value_start + at, s.value_start + at + len("max_split_size_mb"), "ROC301",
                      _MESSAGE.format(where=f"`{s.name}`").replace("leave it out when `is_rocm`",
                                                                  "leave it out of ROCm environments"))
    for s in unit.settings_of(AUTOTUNE_ENV):
        if truthy(s.value):
            yield Hit(unit.anchor(s), s.value_end, "ROC302",
                      f"`{s.name}={s.value}` turns on Inductor max-autotune for every compile in this "
                      "environment: GEMM autotuning has memory faults, GPU hangs and endless tuning reported "
                      "on ROCm; leave it unset (or 0) in ROCm environments")
