"""ROC9: host and process state, checked only at run time (``rocm-lint doctor``,
``rocm_lint.runtime.check()``). No static checker: the code is what runs."""

from __future__ import annotations

from rocm_lint.rule import Rule

ROC901 = Rule(
    "ROC901",
    "numa-balancing-on",
    "automatic NUMA balancing is on: AMD's Instinct set-up guides turn it off",
    languages=("runtime",),
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)
ROC902 = Rule(
    "ROC902",
    "hip-env-not-tuned",
    "recommended HIP variables (HIP_FORCE_DEV_KERNARG=1) unset on MI300/MI350-class GPUs",
    languages=("runtime",),
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)
ROC903 = Rule(
    "ROC903",
    "rocm-version-mismatch",
    "torch built for one ROCm release runs on another installed ROCm release",
    languages=("runtime",),
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)
ROC904 = Rule(
    "ROC904",
    "non-rocm-torch-on-amd-host",
    "torch is not a ROCm build (torch.version.hip is None) on a host with an AMD GPU or a ROCm install: "
    "a CUDA or CPU wheel replaced the ROCm one",
    languages=("runtime",),
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)
