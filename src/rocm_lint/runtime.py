"""Runtime checks: the answers that depend on the GPU and the live process.

Static rules cannot know which GPU a program lands on.  This module asks the
running torch: ``is_rocm()``, ``gpu_arch()``, ``warp_size()``, ``fp8_dtypes()``,
``lds_per_workgroup()``, ``xnack()``, ``fp8_format()``, and ``check()`` returns Findings that
confirm static rules in the live process (ROC101, ROC203-ROC205, ROC301, ROC401, ROC710, ROC801)
or report host state (ROC9xx); ``environment()`` (the doctor's header) carries the GPU's LDS per
workgroup (ROC711), XNACK state (ROC710) and fp8 format (ROC801).
``apply_rocm_safe_defaults()`` switches off the Inductor features that are
unstable on ROCm, on ROCm only.

torch is imported lazily, only when a function needs it.  Every function works
without torch ("nothing to check"), on CPU-only torch, on NVIDIA and on ROCm,
and reads optional attributes with ``getattr`` so an older or newer torch that
lacks one never crashes it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

from rocm_lint.domain import ALLOC_CONF_VARS, AUTOTUNE_ENV
from rocm_lint.finding import Finding

RUNTIME_PATH = "<runtime>"
NUMA_BALANCING = "/proc/sys/kernel/numa_balancing"
ROCM_VERSION_FILES = ("/opt/rocm/.info/version", "/opt/rocm/.info/version-dev")
# Where an AMD GPU shows itself without torch: the KFD compute device and the KFD topology
# (a node whose `simd_count` is above 0 is a GPU; CPU nodes have none).
KFD_DEVICE = "/dev/kfd"
KFD_TOPOLOGY = "/sys/class/kfd/kfd/topology/nodes"
# A ROCm installation: its root (ROCM_PATH, else /opt/rocm) holding `.info/version` or `bin/hipcc`.
ROCM_ROOT = "/opt/rocm"

# Severities for `rocm-lint doctor`; a "critical" finding makes it exit 1.
SEVERITY_ORDER = ("critical", "warning", "info")
# gfx archs of the Instinct parts AMD's vLLM/PyTorch tuning guide covers (MI300X/MI325X/MI350X/MI355X).
INSTINCT_TUNED_ARCHS = ("gfx942", "gfx950")

# Inductor settings apply_rocm_safe_defaults() turns off, and the code that flags each.
UNSAFE_INDUCTOR_SETTINGS: Tuple[Tuple[str, str], ...] = (
    ("triton.cudagraphs", "ROC203"),
    ("triton.cudagraph_trees", "ROC203"),
    ("max_autotune", "ROC204"),
    ("max_autotune_gemm", "ROC204"),
    ("max_autotune_pointwise", "ROC204"),
    ("memory_planning", "ROC205"),
)


# -- torch, lazily ----------------------------------------------------------------------------
def _torch() -> Any:
    """The torch module, or None when it is not installed (imported on first use only)."""
    if "torch" in sys.modules:
        return sys.modules["torch"]
    if importlib.util.find_spec("torch") is None:
        return None
    try:
        return importlib.import_module("torch")
    except Exception:  # a broken install must not crash the doctor
        return None


def torch_version() -> Optional[str]:
    torch = _torch()
    return getattr(torch, "__version__", None) if torch is not None else None


def is_rocm() -> bool:
    """True when the running torch is a ROCm (HIP) build."""
    torch = _torch()
    version = getattr(torch, "version", None) if torch is not None else None
    return getattr(version, "hip", None) is not None


def _gpu_available() -> bool:
    torch = _torch()
    cuda = getattr(torch, "cuda", None) if torch is not None else None
    try:
        return bool(cuda is not None and cuda.is_available() and cuda.device_count() > 0)
    except Exception:
        return False


def _properties(device: int = 0) -> Any:
    if not _gpu_available():
        return None
    try:
        return _torch().cuda.get_device_properties(device)
    except Exception:
        return None


def gpu_arch(device: int = 0) -> Optional[str]:
    """``gfx942`` (``gcnArchName`` without its feature suffix) on ROCm, ``sm_90`` on NVIDIA, None without a GPU."""
    props = _properties(device)
    if props is None:
        return None
    if is_rocm():
        name = getattr(props, "gcnArchName", None) or ""
        return name.split(":", 1)[0] or None
    major, minor = getattr(props, "major", None), getattr(props, "minor", None)
    if major is None or minor is None:
        return None
    return f"sm_{major}{minor}"


def warp_size(device: int = 0) -> Optional[int]:
    """Threads per warp (wavefront): 32 on NVIDIA and RDNA, 64 on CDNA (gfx9); None without a GPU."""
    props = _properties(device)
    if props is None:
        return None
    reported = getattr(props, "warp_size", None)
    if isinstance(reported, int) and reported > 0:
        return reported
    if not is_rocm():
        return 32
    arch = gpu_arch(device) or ""
    return 64 if arch.startswith("gfx9") else 32


def uses_fnuz_fp8(arch: Optional[str]) -> bool:
    """gfx940/941/942 (MI300) implement the FNUZ fp8 formats; gfx950, gfx12 and NVIDIA use OCP."""
    return bool(arch) and re.match(r"gfx94[0-2]$", arch) is not None


def fp8_dtypes(device: int = 0) -> Optional[Tuple[Any, Any]]:
    """(e4m3, e5m2) torch dtypes native to this GPU; OCP when no GPU is visible; None without torch."""
    torch = _torch()
    if torch is None:
        return None
    fnuz = is_rocm() and uses_fnuz_fp8(gpu_arch(device))
    names = ("float8_e4m3fnuz", "float8_e5m2fnuz") if fnuz else ("float8_e4m3fn", "float8_e5m2")
    dtypes = tuple(getattr(torch, n, None) for n in names)
    return None if None in dtypes else dtypes  # type: ignore[return-value]


# -- checks -------------------------------------------------------------------------------------
def _finding(code: str, severity: str, message: str) -> Finding:
    return Finding(RUNTIME_PATH, 0, 0, code, message, severity=severity)


def _truthy(value: Optional[str]) -> bool:
    return value is not None and value.strip().lower() in ("1", "true", "yes", "on")


def _inductor_config() -> Any:
    """torch._inductor.config when torch has it (imported: that is what we inspect)."""
    try:
        return importlib.import_module("torch._inductor.config")
    except Exception:
        return None


def _get_setting(config: Any, dotted: str) -> Any:
    obj = config
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _set_setting(config: Any, dotted: str, value: Any) -> None:
    head, _, last = dotted.rpartition(".")
    owner = _get_setting(config, head) if head else config
    setattr(owner, last, value)


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def rocm_runtime_version() -> Optional[str]:
    """The installed ROCm userspace version (``/opt/rocm/.info/version``), if any."""
    rocm_path = os.environ.get("ROCM_PATH")
    candidates = ([os.path.join(rocm_path, ".info", "version")] if rocm_path else []) + list(
        ROCM_VERSION_FILES
    )
    for path in candidates:
        text = _read(path)
        if text:
            return text.split("-", 1)[0]
    return None


def _major_minor(version: Optional[str]) -> Optional[Tuple[int, int]]:
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _kfd_gpus() -> int:
    """GPU nodes in the KFD topology (0 when it is absent or unreadable)."""
    try:
        nodes = os.listdir(KFD_TOPOLOGY)
    except OSError:
        return 0
    count = 0
    for node in nodes[:256]:
        text = _read(os.path.join(KFD_TOPOLOGY, node, "properties")) or ""
        m = re.search(r"^simd_count\s+(\d+)", text, re.M)
        if m and int(m.group(1)) > 0:
            count += 1
    return count


def amd_host_evidence() -> List[str]:
    """What says this host has an AMD GPU or a ROCm install, in words (empty: nothing does)."""
    evidence = []
    gpus = _kfd_gpus()
    if gpus:
        evidence.append(f"{gpus} AMD GPU{'s' if gpus != 1 else ''} in the KFD topology ({KFD_TOPOLOGY})")
    elif os.path.exists(KFD_DEVICE):
        evidence.append(f"the AMD compute device {KFD_DEVICE}")
    root = os.environ.get("ROCM_PATH") or ROCM_ROOT
    if any(os.path.exists(os.path.join(root, *p)) for p in ((".info", "version"), ("bin", "hipcc"))):
        version = rocm_runtime_version()
        evidence.append(f"a ROCm {version + ' ' if version else ''}install at {root}")
    return evidence


def _not_rocm_torch_on_amd_host() -> List[Finding]:
    """ROC904: torch is installed, is not a ROCm build, and the host is an AMD GPU (or ROCm) host
    where that torch has no GPU of its own (a CUDA build that sees an NVIDIA GPU is left alone)."""
    torch = _torch()
    if torch is None or is_rocm():
        return []
    evidence = amd_host_evidence()
    if not evidence:
        return []
    cuda = getattr(getattr(torch, "version", None), "cuda", None)
    if cuda and _gpu_available():
        return []  # an NVIDIA GPU beside the AMD one: this torch has its GPU
    build = f"a CUDA {cuda} build" if cuda else "a CPU-only build"
    return [
        _finding(
            "ROC904",
            "critical" if cuda else "warning",
            (
                f"torch {torch_version()} is {build} (torch.version.hip is None) on a host with "
                + " and ".join(evidence)
                + ": it cannot use the AMD GPU; a `pip install` of a package that pins torch, or of a CUDA index, "
                "replaces the ROCm wheel; fix: reinstall torch from the ROCm wheel index "
                "(pip install torch --index-url https://download.pytorch.org/whl/rocmX.Y, matching the installed "
                "ROCm) and check `python -c 'import torch; print(torch.version.hip)'` after every pip install"
            ),
        )
    ]


# LDS (shared memory) a workgroup may use, by arch, where torch does not say: 64 KiB on CDNA1-3
# (gfx908, gfx90a, gfx942) and RDNA; 160 KiB on CDNA4 (gfx950).
LDS_BY_ARCH = (("gfx950", 160 * 1024), ("gfx9", 64 * 1024), ("gfx1", 64 * 1024))
# Archs whose pages can migrate on demand (XNACK) when the process runs with it on.
XNACK_ARCHS = ("gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")


def lds_per_workgroup(device: int = 0) -> Optional[int]:
    """Bytes of shared memory (LDS) one block (workgroup) may use on this GPU: what torch reports
    (`shared_memory_per_block_optin`, else `shared_memory_per_block`), else the table by arch on
    ROCm; None without a GPU or where neither says (ROC711)."""
    props = _properties(device)
    if props is None:
        return None
    for name in ("shared_memory_per_block_optin", "shared_memory_per_block"):
        value = getattr(props, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    if not is_rocm():
        return None
    arch = gpu_arch(device) or ""
    return next((size for prefix, size in LDS_BY_ARCH if arch.startswith(prefix)), None)


def xnack(device: int = 0) -> Optional[Dict[str, Any]]:
    """Whether pages of managed memory migrate on demand here (ROC710): the arch's `xnack`
    feature in `gcnArchName` (`gfx90a:sramecc+:xnack-`), `HSA_XNACK` of the process, and the
    verdict (`enabled`: True/False, None where the arch does not say and HSA_XNACK is unset).
    None off ROCm or without a GPU."""
    props = _properties(device)
    if props is None or not is_rocm():
        return None
    name = getattr(props, "gcnArchName", None) or ""
    arch, _, features = name.partition(":")
    feature = next((f[-1] for f in features.split(":") if f.startswith("xnack") and f[-1:] in "+-"), None)
    env = os.environ.get("HSA_XNACK")
    if arch not in XNACK_ARCHS:
        enabled: Optional[bool] = False
    elif feature is not None:
        enabled = feature == "+"
    elif env is not None:
        enabled = env.strip() == "1"
    else:
        enabled = None
    return {"arch_feature": feature, "HSA_XNACK": env, "enabled": enabled}


def fp8_format(device: int = 0) -> Optional[str]:
    """ "FNUZ" (e4m3 maximum 240) or "OCP" (448) for this GPU's native fp8 (ROC801); None without a GPU."""
    arch = gpu_arch(device)
    if arch is None:
        return None
    return "FNUZ" if is_rocm() and uses_fnuz_fp8(arch) else "OCP"


def check() -> List[Finding]:
    """Findings about the live process and host. On a torch that is not a ROCm build: only
    whether the host is an AMD GPU host that this torch cannot use (ROC904)."""
    if not is_rocm():
        return _not_rocm_torch_on_amd_host()
    torch = _torch()
    findings: List[Finding] = []
    env = os.environ

    # ROC301: max_split_size_mb in the live allocator configuration.
    for var in ALLOC_CONF_VARS:
        value = env.get(var, "")
        if "max_split_size_mb" in value:
            both = "expandable_segments:true" in value.replace(" ", "").lower()
            findings.append(
                _finding(
                    "ROC301",
                    "critical" if both else "warning",
                    (
                        f"{var}={value!r} sets max_split_size_mb"
                        + (" together with expandable_segments" if both else "")
                        + ": on ROCm this combination has grown reserved memory until OOM and read back "
                        "zeros; fix: drop max_split_size_mb on ROCm"
                    ),
                )
            )

    # ROC204: autotuning switched on through the environment.
    for var in AUTOTUNE_ENV:
        if _truthy(env.get(var)):
            findings.append(
                _finding(
                    "ROC204",
                    "warning",
                    (
                        f"{var}={env[var]} turns on Inductor autotuning, which has memory faults, hangs and "
                        f"timeouts reported on ROCm; fix: unset {var} (apply_rocm_safe_defaults() does)"
                    ),
                )
            )

    # ROC203/ROC204/ROC205: live Inductor config (only if torch has Inductor).
    config = _inductor_config()
    if config is not None:
        for dotted, code in UNSAFE_INDUCTOR_SETTINGS:
            # cudagraph_trees is True by default and only matters once cudagraphs is on.
            if _get_setting(config, dotted) is True and dotted != "triton.cudagraph_trees":
                findings.append(
                    _finding(
                        code,
                        "warning",
                        (
                            f"torch._inductor.config.{dotted} is True on ROCm; fix: set it False on ROCm "
                            "(apply_rocm_safe_defaults() does)"
                        ),
                    )
                )

    # ROC101: TF32 requested, silently ignored without HIPBLASLT_ALLOW_TF32=1.
    matmul = getattr(getattr(getattr(torch, "backends", None), "cuda", None), "matmul", None)
    tf32 = getattr(matmul, "allow_tf32", False) is True
    precision = getattr(matmul, "fp32_precision", None) == "tf32"
    if (tf32 or precision) and not _truthy(env.get("HIPBLASLT_ALLOW_TF32")):
        findings.append(
            _finding(
                "ROC101",
                "info",
                (
                    "TF32 matmul is requested but HIPBLASLT_ALLOW_TF32 is not 1: ROCm builds ignore the "
                    "request and run full FP32; fix: set HIPBLASLT_ALLOW_TF32=1 on MI300 if TF32 is wanted, "
                    "or stop requesting it on ROCm"
                ),
            )
        )

    # ROC401: pynvml importable beside a ROCm torch.
    if importlib.util.find_spec("pynvml") is not None:
        findings.append(
            _finding(
                "ROC401",
                "warning",
                (
                    "pynvml is installed beside a ROCm torch: there is no NVML on AMD hosts and code that "
                    "picks NVML when it imports fails at nvmlInit(); fix: uninstall pynvml (nvidia-ml-py) "
                    "here and use amdsmi"
                ),
            )
        )

    # ROC801: the fp8 formats this GPU implements.
    arch = gpu_arch()
    if arch:
        if uses_fnuz_fp8(arch):
            findings.append(
                _finding(
                    "ROC801",
                    "info",
                    (
                        f"{arch} implements the FNUZ fp8 formats: torch.float8_e4m3fn/e5m2 tensors are emulated "
                        "or rejected by its kernels, and the e4m3 maximum is 240, not OCP's 448 (a 448 "
                        "clamp or scale overflows to NaN); fix: use rocm_lint.runtime.fp8_dtypes() "
                        "(float8_e4m3fnuz/e5m2fnuz here) and torch.finfo(dtype).max"
                    ),
                )
            )
        ws = warp_size()
        if ws == 64:
            findings.append(
                _finding(
                    "ROC802",
                    "info",
                    (
                        f"{arch} runs 64-wide wavefronts: code that assumes a warp of 32 (ROC603, ROC802) "
                        "computes on half of each wavefront here; fix: read the width from "
                        "torch.cuda.get_device_properties(d).warp_size"
                    ),
                )
            )

        # ROC710: managed memory migrates only with XNACK on.
        state = xnack()
        if state is not None and arch.startswith(XNACK_ARCHS) and state["enabled"] is False:
            how = (
                "the GPU runs with xnack- (set HSA_XNACK=1 before the process starts)"
                if state["arch_feature"] == "-"
                else "HSA_XNACK is not 1"
            )
            findings.append(
                _finding(
                    "ROC710",
                    "info",
                    (
                        f"XNACK is off here ({how}): managed memory (hipMallocManaged, ROC710) does not "
                        "migrate on demand and every GPU access goes over the host link; fix: "
                        "export HSA_XNACK=1 for code that relies on managed memory"
                    ),
                )
            )

    # ROC901: automatic NUMA balancing.
    if _read(NUMA_BALANCING) == "1":
        findings.append(
            _finding(
                "ROC901",
                "warning",
                (
                    "automatic NUMA balancing is on (/proc/sys/kernel/numa_balancing = 1); AMD's and "
                    "SGLang's MI300X set-up guides turn it off for stable GPU performance; fix: "
                    "sudo sysctl kernel.numa_balancing=0"
                ),
            )
        )

    # ROC902: recommended HIP variables on the Instinct parts AMD's tuning guide covers.
    if arch in INSTINCT_TUNED_ARCHS and env.get("HIP_FORCE_DEV_KERNARG") != "1":
        findings.append(
            _finding(
                "ROC902",
                "info",
                (
                    f"HIP_FORCE_DEV_KERNARG is not 1 on {arch}: AMD's tuning guide sets it for faster "
                    "kernel launches (ROCm's vLLM images do by default); fix: export HIP_FORCE_DEV_KERNARG=1"
                ),
            )
        )

    # ROC903: torch built for one ROCm release, running on another.
    built = _major_minor(getattr(getattr(torch, "version", None), "hip", None))
    installed_text = rocm_runtime_version()
    installed = _major_minor(installed_text)
    if built and installed and built != installed:
        major = built[0] != installed[0]
        findings.append(
            _finding(
                "ROC903",
                "critical" if major else "warning",
                (
                    f"torch was built for ROCm {built[0]}.{built[1]} but ROCm {installed_text} is installed"
                    + (
                        ": kernels fail to load or crash across major releases"
                        if major
                        else ": mixed minor releases are unsupported pairs"
                    )
                    + f"; fix: install the torch wheel built for ROCm {installed[0]}.{installed[1]}"
                ),
            )
        )
    return findings


def apply_rocm_safe_defaults() -> Dict[str, Tuple[Any, Any]]:
    """On ROCm, switch off Inductor cudagraphs, cudagraph trees, memory planning and max-autotune,
    and unset TORCHINDUCTOR_MAX_AUTOTUNE* for this process.

    Returns ``{setting: (old, new)}`` for what it changed; on NVIDIA or without torch it changes
    nothing and returns ``{}``.
    """
    if not is_rocm():
        return {}
    changed: Dict[str, Tuple[Any, Any]] = {}
    for var in AUTOTUNE_ENV:
        if var in os.environ:
            changed[var] = (os.environ.pop(var), None)
    config = _inductor_config()
    if config is not None:
        for dotted, _code in UNSAFE_INDUCTOR_SETTINGS:
            old = _get_setting(config, dotted)
            if old is True:
                _set_setting(config, dotted, False)
                changed[f"torch._inductor.config.{dotted}"] = (True, False)
    return changed


def environment() -> Dict[str, Any]:
    """What the doctor saw: torch, platform, GPU."""
    torch = _torch()
    version = getattr(torch, "version", None) if torch is not None else None
    props = _properties()
    return {
        "torch": torch_version(),
        "platform": None
        if torch is None
        else ("rocm" if is_rocm() else "cuda" if getattr(version, "cuda", None) else "cpu"),
        "hip": getattr(version, "hip", None),
        "cuda": getattr(version, "cuda", None),
        "gpu": getattr(props, "name", None),
        "arch": gpu_arch(),
        "warp_size": warp_size(),
        "fp8_dtypes": [str(d) for d in fp8_dtypes()] if fp8_dtypes() else None,
        "fp8_format": fp8_format(),
        "lds_per_workgroup": lds_per_workgroup(),
        "xnack": xnack(),
        "rocm_runtime": rocm_runtime_version() if is_rocm() else None,
    }
