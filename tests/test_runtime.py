"""The runtime module and `rocm-lint doctor`, on CPU torch 2.13.0 with ROCm simulated.

Simulation patches what a ROCm build of torch reports: ``torch.version.hip``, a visible
device and its properties (gcnArchName, warp_size).  Every check has a case that fires
and one that stays silent.
"""

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
inductor_config = pytest.importorskip("torch._inductor.config")

from rocm_lint import runtime  # noqa: E402
from rocm_lint.registry import get_rule  # noqa: E402
from conftest import ROOT  # noqa: E402


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for var in (
        runtime.ALLOC_CONF_VARS
        + runtime.AUTOTUNE_ENV
        + ("HIPBLASLT_ALLOW_TF32", "HIP_FORCE_DEV_KERNARG", "HSA_XNACK")
    ):
        monkeypatch.delenv(var, raising=False)
    numa = tmp_path / "numa_balancing"
    numa.write_text("0\n")
    monkeypatch.setattr(runtime, "NUMA_BALANCING", str(numa))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "no-rocm"))
    monkeypatch.setattr(runtime, "ROCM_VERSION_FILES", ())
    # no AMD host unless a test builds one (the machine running the tests may be one)
    monkeypatch.setattr(runtime, "KFD_DEVICE", str(tmp_path / "no-kfd"))
    monkeypatch.setattr(runtime, "KFD_TOPOLOGY", str(tmp_path / "no-topology"))
    monkeypatch.setattr(runtime, "ROCM_ROOT", str(tmp_path / "no-rocm"))
    saved_tf32 = torch.backends.cuda.matmul.allow_tf32  # a property of torch's C state
    torch.backends.cuda.matmul.allow_tf32 = False
    real_find_spec = runtime.importlib.util.find_spec
    monkeypatch.setattr(
        runtime.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "pynvml" else real_find_spec(name, *a),
    )
    # The live Inductor config at known values for the test's duration (Inductor's own patch()).
    defaults = {dotted: dotted == "triton.cudagraph_trees" for dotted, _ in runtime.UNSAFE_INDUCTOR_SETTINGS}
    with inductor_config.patch(defaults):
        yield tmp_path
    torch.backends.cuda.matmul.allow_tf32 = saved_tf32


def simulate(monkeypatch, *, hip="6.3.42131", arch="gfx942:sramecc+:xnack-", warp=64, gpu=True):
    """Make the CPU torch look like a ROCm (or, with hip=None, a CUDA) build."""
    monkeypatch.setattr(torch.version, "hip", hip)
    monkeypatch.setattr(torch.version, "cuda", None if hip else "12.8")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpu)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1 if gpu else 0)
    props = SimpleNamespace(
        name="AMD Instinct MI300X" if hip else "NVIDIA H100 80GB HBM3",
        gcnArchName=arch if hip else "NVIDIA",
        warp_size=warp,
        major=9,
        minor=4 if hip else 0,
    )
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d=0: props)


def codes(findings):
    return sorted(f.code for f in findings)


# -- API -------------------------------------------------------------------------------------
def test_cpu_torch_is_not_rocm(clean_env):
    assert runtime.is_rocm() is False
    assert runtime.gpu_arch() is None
    assert runtime.warp_size() is None
    assert runtime.fp8_dtypes() == (torch.float8_e4m3fn, torch.float8_e5m2)
    assert runtime.check() == []
    assert runtime.apply_rocm_safe_defaults() == {}


@pytest.mark.parametrize(
    "arch,warp,fnuz",
    [
        ("gfx942:sramecc+:xnack-", 64, True),  # MI300: FNUZ fp8, wave64
        ("gfx950", 64, False),  # MI350: OCP fp8
        ("gfx1100", 32, False),  # RDNA3: wave32
        ("gfx1201", 32, False),  # RDNA4: OCP fp8, wave32
    ],
)
def test_arch_warp_fp8(monkeypatch, clean_env, arch, warp, fnuz):
    simulate(monkeypatch, arch=arch, warp=warp)
    assert runtime.is_rocm()
    assert runtime.gpu_arch() == arch.split(":")[0]
    assert runtime.warp_size() == warp
    expected = (
        (torch.float8_e4m3fnuz, torch.float8_e5m2fnuz) if fnuz else (torch.float8_e4m3fn, torch.float8_e5m2)
    )
    assert runtime.fp8_dtypes() == expected


def test_warp_size_without_the_property(monkeypatch, clean_env):
    simulate(monkeypatch, arch="gfx90a", warp=None)
    assert runtime.warp_size() == 64
    simulate(monkeypatch, arch="gfx1100", warp=None)
    assert runtime.warp_size() == 32


def test_nvidia_arch_and_nothing_to_check(monkeypatch, clean_env):
    simulate(monkeypatch, hip=None, warp=32)
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128")
    assert runtime.gpu_arch() == "sm_90"
    assert runtime.warp_size() == 32
    assert runtime.check() == []
    inductor_config.max_autotune = True
    assert runtime.apply_rocm_safe_defaults() == {}
    assert inductor_config.max_autotune is True  # NVIDIA: untouched


# -- each check fires and stays silent -----------------------------------------------------------
def test_simulated_rocm_clean_host(monkeypatch, clean_env):
    simulate(monkeypatch, arch="gfx1100", warp=32)
    assert runtime.check() == []


@pytest.mark.parametrize(
    "value,severity",
    [
        ("max_split_size_mb:128", "warning"),
        ("expandable_segments:True,max_split_size_mb:128", "critical"),
    ],
)
def test_roc301_alloc_conf(monkeypatch, clean_env, value, severity):
    simulate(monkeypatch, arch="gfx1100", warp=32)
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", value)
    (finding,) = runtime.check()
    assert (finding.code, finding.severity) == ("ROC301", severity)
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    assert runtime.check() == []


def test_roc204_env(monkeypatch, clean_env):
    simulate(monkeypatch, arch="gfx1100", warp=32)
    monkeypatch.setenv("TORCHINDUCTOR_MAX_AUTOTUNE", "1")
    assert codes(runtime.check()) == ["ROC204"]
    monkeypatch.setenv("TORCHINDUCTOR_MAX_AUTOTUNE", "0")
    assert runtime.check() == []


@pytest.mark.parametrize(
    "dotted,code",
    [
        ("triton.cudagraphs", "ROC203"),
        ("max_autotune", "ROC204"),
        ("max_autotune_gemm", "ROC204"),
        ("memory_planning", "ROC205"),
    ],
)
def test_live_inductor_config(monkeypatch, clean_env, dotted, code):
    simulate(monkeypatch, arch="gfx1100", warp=32)
    assert runtime.check() == []  # defaults (cudagraph_trees True alone does not fire)
    runtime._set_setting(inductor_config, dotted, True)
    assert codes(runtime.check()) == [code]


def test_roc101_tf32(monkeypatch, clean_env):
    simulate(monkeypatch, arch="gfx1100", warp=32)
    torch.backends.cuda.matmul.allow_tf32 = True
    assert codes(runtime.check()) == ["ROC101"]
    monkeypatch.setenv("HIPBLASLT_ALLOW_TF32", "1")
    assert runtime.check() == []


def test_roc401_pynvml(monkeypatch, clean_env):
    simulate(monkeypatch, arch="gfx1100", warp=32)
    real = runtime.importlib.util.find_spec
    monkeypatch.setattr(
        runtime.importlib.util, "find_spec", lambda name, *a: object() if name == "pynvml" else real(name, *a)
    )
    assert codes(runtime.check()) == ["ROC401"]


def test_roc801_and_roc802_on_mi300(monkeypatch, clean_env):
    simulate(monkeypatch, arch="gfx942:sramecc+:xnack-", warp=64)
    monkeypatch.setenv("HIP_FORCE_DEV_KERNARG", "1")
    # (and ROC710: this MI300 runs with xnack-, so managed memory does not migrate)
    assert codes(runtime.check()) == ["ROC710", "ROC801", "ROC802"]
    simulate(monkeypatch, arch="gfx942:sramecc+:xnack+", warp=64)
    assert codes(runtime.check()) == ["ROC801", "ROC802"]
    simulate(monkeypatch, arch="gfx950", warp=64)
    assert codes(runtime.check()) == ["ROC802"]  # OCP fp8 on MI350


@pytest.mark.parametrize(
    "arch, props, lds",
    [
        ("gfx942:sramecc+:xnack-", {}, 64 * 1024),  # MI300: the table
        ("gfx950", {}, 160 * 1024),  # MI350: 160 KiB
        ("gfx90a", {}, 64 * 1024),
        ("gfx1100", {}, 64 * 1024),
        ("gfx942", {"shared_memory_per_block": 65536}, 65536),  # what torch reports wins
        ("gfx950", {"shared_memory_per_block_optin": 163840, "shared_memory_per_block": 65536}, 163840),
        ("gfx803", {}, None),  # not in the table: unknown
    ],
)
def test_lds_per_workgroup(monkeypatch, clean_env, arch, props, lds):
    simulate(monkeypatch, arch=arch)
    base = torch.cuda.get_device_properties(0)
    for name, value in props.items():
        setattr(base, name, value)
    assert runtime.lds_per_workgroup() == lds
    assert runtime.environment()["lds_per_workgroup"] == lds


def test_lds_on_nvidia_comes_from_torch_only(monkeypatch, clean_env):
    simulate(monkeypatch, hip=None, warp=32)
    assert runtime.lds_per_workgroup() is None
    torch.cuda.get_device_properties(0).shared_memory_per_block_optin = 232448
    assert runtime.lds_per_workgroup() == 232448


@pytest.mark.parametrize(
    "arch, env, feature, enabled",
    [
        ("gfx942:sramecc+:xnack-", None, "-", False),
        ("gfx942:sramecc+:xnack+", None, "+", True),
        ("gfx90a:xnack-", "1", "-", False),  # the arch feature is what the process runs with
        ("gfx942", "1", None, True),  # no feature in the name: HSA_XNACK decides
        ("gfx942", "0", None, False),
        ("gfx942", None, None, None),  # neither says
        ("gfx1100", "1", None, False),  # RDNA: no XNACK
    ],
)
def test_xnack(monkeypatch, clean_env, arch, env, feature, enabled):
    simulate(monkeypatch, arch=arch)
    if env is None:
        monkeypatch.delenv("HSA_XNACK", raising=False)
    else:
        monkeypatch.setenv("HSA_XNACK", env)
    assert runtime.xnack() == {"arch_feature": feature, "HSA_XNACK": env, "enabled": enabled}
    monkeypatch.setenv("HIP_FORCE_DEV_KERNARG", "1")
    reported = "ROC710" in codes(runtime.check())
    assert reported is (arch.startswith(runtime.XNACK_ARCHS) and enabled is False)


def test_fp8_format(monkeypatch, clean_env):
    assert runtime.fp8_format() is None  # no GPU
    simulate(monkeypatch, arch="gfx942:sramecc+:xnack-")
    assert runtime.fp8_format() == "FNUZ"
    simulate(monkeypatch, arch="gfx950")
    assert runtime.fp8_format() == "OCP"
    simulate(monkeypatch, hip=None, warp=32)
    assert runtime.fp8_format() == "OCP"
    assert runtime.xnack() is None  # not ROCm


def test_roc901_numa(monkeypatch, clean_env):
    simulate(monkeypatch, arch="gfx1100", warp=32)
    (clean_env / "numa_balancing").write_text("1\n")
    assert codes(runtime.check()) == ["ROC901"]


def test_roc902_hip_env(monkeypatch, clean_env):
    simulate(monkeypatch, arch="gfx950", warp=64)
    assert "ROC902" in codes(runtime.check())
    monkeypatch.setenv("HIP_FORCE_DEV_KERNARG", "1")
    assert "ROC902" not in codes(runtime.check())


@pytest.mark.parametrize("installed,severity", [("7.0.2", "critical"), ("6.4.1", "warning"), ("6.3.3", None)])
def test_roc903_version_pairing(monkeypatch, clean_env, installed, severity):
    simulate(monkeypatch, hip="6.3.42131-abc", arch="gfx1100", warp=32)
    info = clean_env / "rocm" / ".info"
    info.mkdir(parents=True)
    (info / "version").write_text(f"{installed}-70\n")
    monkeypatch.setenv("ROCM_PATH", str(clean_env / "rocm"))
    found = [f for f in runtime.check() if f.code == "ROC903"]
    assert [f.severity for f in found] == ([severity] if severity else [])


def amd_host(monkeypatch, root, *, kfd=True, gpu_nodes=1, rocm=None):
    """An AMD GPU host under ``root``: /dev/kfd, a KFD topology with a CPU node and ``gpu_nodes``
    GPU nodes (simd_count above 0), and optionally a ROCm install of version ``rocm``."""
    root.mkdir(parents=True, exist_ok=True)
    if kfd:
        (root / "kfd").write_text("")
        monkeypatch.setattr(runtime, "KFD_DEVICE", str(root / "kfd"))
    nodes = root / "topology"
    for i in range(gpu_nodes + 1):
        (nodes / str(i)).mkdir(parents=True)
        simd = 0 if i == 0 else 304
        (nodes / str(i) / "properties").write_text(
            f"cpu_cores_count 64\nsimd_count {simd}\ngfx_target_version 90402\n"
        )
    monkeypatch.setattr(runtime, "KFD_TOPOLOGY", str(nodes))
    if rocm:
        (root / "rocm" / ".info").mkdir(parents=True)
        (root / "rocm" / ".info" / "version").write_text(f"{rocm}-70\n")
        monkeypatch.setenv("ROCM_PATH", str(root / "rocm"))


def test_roc904_cuda_torch_on_amd_host(monkeypatch, clean_env):
    simulate(monkeypatch, hip=None, gpu=False)  # a CUDA wheel: it finds no NVIDIA GPU here
    amd_host(monkeypatch, clean_env, gpu_nodes=8, rocm="6.4.1")
    found = runtime.check()
    assert codes(found) == ["ROC904"]
    message = found[0].message
    assert found[0].severity == "critical"
    assert "CUDA 12.8 build" in message and "8 AMD GPUs in the KFD topology" in message
    assert "ROCm 6.4.1 install" in message
    assert "whl/rocm" in message and "torch.version.hip" in message


@pytest.mark.parametrize("kfd,gpu_nodes,rocm", [(True, 0, None), (False, 0, "7.0.2"), (False, 2, None)])
def test_roc904_each_piece_of_evidence(monkeypatch, clean_env, kfd, gpu_nodes, rocm):
    simulate(monkeypatch, hip=None, gpu=False)
    amd_host(monkeypatch, clean_env, kfd=kfd, gpu_nodes=gpu_nodes, rocm=rocm)
    assert codes(runtime.check()) == ["ROC904"]


def test_roc904_cpu_torch_on_amd_host_is_a_warning(monkeypatch, clean_env):
    simulate(monkeypatch, hip=None, gpu=False)
    monkeypatch.setattr(torch.version, "cuda", None)
    amd_host(monkeypatch, clean_env)
    found = runtime.check()
    assert [(f.code, f.severity) for f in found] == [("ROC904", "warning")]
    assert "CPU-only build" in found[0].message


def test_roc904_silent(monkeypatch, clean_env):
    # CUDA torch on a host with no AMD GPU and no ROCm: nothing to say
    simulate(monkeypatch, hip=None, gpu=False)
    assert runtime.check() == []
    # a KFD topology of CPU nodes only is no GPU
    (clean_env / "topology" / "0").mkdir(parents=True)
    (clean_env / "topology" / "0" / "properties").write_text("simd_count 0\n")
    monkeypatch.setattr(runtime, "KFD_TOPOLOGY", str(clean_env / "topology"))
    assert runtime.check() == []
    # an AMD iGPU beside an NVIDIA GPU that the CUDA torch uses
    simulate(monkeypatch, hip=None, gpu=True)
    amd_host(monkeypatch, clean_env / "host")
    assert runtime.check() == []
    # ROCm torch on the AMD host: the other checks, not this one
    simulate(monkeypatch, arch="gfx1100", warp=32)
    assert "ROC904" not in codes(runtime.check())


def test_doctor_reports_cuda_torch_on_amd_host(monkeypatch, clean_env, capsys):
    from rocm_lint.cli import main

    simulate(monkeypatch, hip=None, gpu=False)
    amd_host(monkeypatch, clean_env, rocm="6.3.3")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "critical (1)" in out and "ROC904" in out and "on an AMD GPU host" in out


def test_apply_rocm_safe_defaults(monkeypatch, clean_env):
    simulate(monkeypatch, arch="gfx942", warp=64)
    inductor_config.triton.cudagraphs = True
    inductor_config.max_autotune = True
    inductor_config.memory_planning = True
    monkeypatch.setenv("TORCHINDUCTOR_MAX_AUTOTUNE", "1")
    changed = runtime.apply_rocm_safe_defaults()
    assert changed == {
        "TORCHINDUCTOR_MAX_AUTOTUNE": ("1", None),
        "torch._inductor.config.triton.cudagraphs": (True, False),
        "torch._inductor.config.triton.cudagraph_trees": (True, False),
        "torch._inductor.config.max_autotune": (True, False),
        "torch._inductor.config.memory_planning": (True, False),
    }
    assert inductor_config.triton.cudagraphs is False
    assert "TORCHINDUCTOR_MAX_AUTOTUNE" not in runtime.os.environ
    assert runtime.apply_rocm_safe_defaults() == {}  # idempotent


def test_torch_without_optional_attributes(monkeypatch, clean_env):
    """An older or newer torch lacking attributes must not crash anything."""
    simulate(monkeypatch, arch="gfx942", warp=64)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d=0: SimpleNamespace())
    monkeypatch.setattr(torch.backends.cuda, "matmul", SimpleNamespace())
    assert runtime.gpu_arch() is None
    assert runtime.warp_size() == 32
    assert isinstance(runtime.check(), list)
    monkeypatch.setattr(runtime, "_inductor_config", lambda: None)
    assert isinstance(runtime.check(), list)


def test_every_runtime_code_is_registered_and_documented():
    import inspect
    import re

    for code in set(re.findall(r'"(ROC\d{3})"', inspect.getsource(runtime))):
        rule = get_rule(code)
        assert rule is not None, code
        assert "## What it does" in rule.body


# -- without torch, and the doctor command ---------------------------------------------------------
def run_python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_importing_runtime_does_not_import_torch():
    proc = run_python("import sys, rocm_lint.runtime; print('torch' in sys.modules)")
    assert proc.stdout.strip() == "False", proc.stderr


def test_no_torch_installed():
    proc = run_python(
        "import sys; sys.modules['torch'] = None\n"
        "from rocm_lint import runtime\n"
        "assert runtime.is_rocm() is False and runtime.check() == [] and runtime.fp8_dtypes() is None\n"
        "assert runtime.apply_rocm_safe_defaults() == {}\n"
        "from rocm_lint.cli import main\n"
        "raise SystemExit(main(['doctor']))\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "torch is not installed" in proc.stdout


@pytest.mark.integration  # a real external tool or torch itself: --all-tiers
def test_doctor_on_cpu_torch(cli):
    proc = cli("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["environment"]["platform"] == "cpu"
    assert data["findings"] == []
    assert data["verdict"].startswith("not ROCm")


def test_doctor_simulated_rocm_text_and_exit_code(monkeypatch, clean_env, capsys):
    from rocm_lint.cli import main

    simulate(monkeypatch, hip="6.3.1", arch="gfx942", warp=64)
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True,max_split_size_mb:64")
    assert main(["doctor"]) == 1  # a critical finding
    out = capsys.readouterr().out
    assert out.index("critical (1)") < out.index("warning") if "warning" in out else True
    assert "ROC301" in out and "fix:" in out
    monkeypatch.delenv("PYTORCH_HIP_ALLOC_CONF")
    monkeypatch.setenv("HIP_FORCE_DEV_KERNARG", "1")
    assert main(["doctor"]) == 0


def test_doctor_json_captured_on_h100_matches_schema():
    """The report captured on a real NVIDIA H100 (docs/doctor-h100.json) keeps its shape."""
    path = ROOT / "docs" / "doctor-h100.json"
    if not path.exists():
        pytest.skip("no captured H100 report yet")
    data = json.loads(path.read_text())
    assert data["environment"]["platform"] == "cuda"
    assert data["environment"]["arch"] == "sm_90"
    assert data["environment"]["warp_size"] == 32
    assert data["findings"] == []
