"""ROC9: host and process state, checked only at run time (``rocm-lint doctor``,
``rocm_lint.runtime.check()``). No static checker: the code is what runs."""

from __future__ import annotations

from rocm_lint.registry import register

register(
    "ROC901", "numa-balancing-on",
    "automatic NUMA balancing is on: AMD's Instinct set-up guides turn it off",
    triggers=(), languages=("runtime",),
)
register(
    "ROC902", "hip-env-not-tuned",
    "recommended HIP variables (HIP_FORCE_DEV_KERNARG=1) unset on MI300/MI350-class GPUs",
    triggers=(), languages=("runtime",),
)
register(
    "ROC903", "rocm-version-mismatch",
    "torch built for one ROCm release runs on another installed ROCm release",
    triggers=(), languages=("runtime",),
)
