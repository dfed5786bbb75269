"""The ROCm half of the fixes' promise: a fix must make ROCm *right*, not only leave NVIDIA alone.

Each case runs the original and the fixed module under a stub torch, once as NVIDIA
(``version.hip = None``, capability (9, 0)) and once as ROCm (``version.hip = "6.2"``, an MI300
reporting (9, 4)).  NVIDIA: the records must be equal.  ROCm: the fixed module's record must be
what the rule page says ROCm needs, written here from the page, never from the fix:

* ROC106 (its "Fix safety"): on ROCm the test says the NVIDIA architecture is absent; a guard
  that refuses GPUs without it refuses AMD GPUs (raise, return None, assert, pytest.skip), an
  optional path falls back;
* ROC101: a gate only where nothing on ROCm observes the setting; where the module reads it back,
  may set it to False, or calls TunableOp, no fix and a reason;
* ROC102: never gated (Inductor honours the request on ROCm too).
"""

from __future__ import annotations

import sys
import textwrap
import types

import pytest

from rocm_lint.config import Config
from rocm_lint.engine import check_python_source
from rocm_lint.fix.engine import fix_source


def _fix(text: str, unsafe: bool = True):
    findings = check_python_source("m.py", text, Config())
    return findings, fix_source("m.py", text, findings, unsafe=unsafe).text


class _Skipped(Exception):
    pass


def _stub_torch(hip):
    """A torch that records settings; ROCm's capability is MI300's (9, 4)."""
    record = {}

    class Settings(types.SimpleNamespace):
        def __setattr__(self, name, value):
            record[f"{self._path}.{name}"] = value
            object.__setattr__(self, name, value)

    def settings(path, **initial):
        s = Settings(**initial)
        object.__setattr__(s, "_path", path)
        return s

    torch = types.ModuleType("torch")
    torch.version = types.SimpleNamespace(hip=hip, cuda=None if hip else "12.8")
    torch.cuda = types.SimpleNamespace(get_device_capability=lambda *a: (9, 4) if hip else (9, 0))
    torch.cuda.tunable = types.SimpleNamespace(enable=lambda on=True: record.__setitem__("tunable", on))
    matmul = settings("matmul", allow_tf32=False, allow_fp16_reduced_precision_reduction=True)
    torch.backends = types.SimpleNamespace(
        cuda=types.SimpleNamespace(matmul=matmul), cudnn=settings("cudnn", allow_tf32=True)
    )
    precision = {"value": "highest"}

    def set_precision(value):
        precision["value"] = value
        record["precision"] = value

    torch.set_float32_matmul_precision = set_precision
    torch.get_float32_matmul_precision = lambda: precision["value"]
    return torch, record


def _run(source: str, hip, calls):
    """Exec ``source`` as a module under the stub torch, call each of ``calls``: (settings
    recorded, [(call, result or the exception's type)])."""
    torch, record = _stub_torch(hip)
    pytest_stub = types.ModuleType("pytest")

    def skip(reason=""):
        raise _Skipped(reason)

    pytest_stub.skip = skip
    pytest_stub.mark = types.SimpleNamespace(skipif=lambda cond, reason="": lambda fn: ("skipif", cond))
    saved = {k: sys.modules.get(k) for k in ("torch", "pytest")}
    sys.modules["torch"], sys.modules["pytest"] = torch, pytest_stub
    try:
        namespace: dict = {"__name__": "m"}
        exec(compile(source, "m.py", "exec"), namespace)
        results = []
        for call in calls:
            target = namespace[call]
            if isinstance(target, tuple):  # a skipif-marked test: the mark's condition
                results.append((call, "skipped" if target[1] else "runs"))
                continue
            try:
                results.append((call, target()))
            except _Skipped:
                results.append((call, "skipped"))
            except (RuntimeError, AssertionError) as exc:
                results.append((call, type(exc).__name__))
        return record, results
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


# -- ROC106: guards keep their meaning -----------------------------------------------------------
# (name, body, what the rule page says ROCm needs: the architecture counts as absent)
GUARDS = [
    # tests that REQUIRE the architecture: AMD GPUs must still be refused
    (
        "raise_lt",
        "if torch.cuda.get_device_capability() < (9, 0):\n    raise RuntimeError('sm90')\nreturn 'wgmma'",
        "RuntimeError",
    ),
    (
        "raise_ne",
        "if torch.cuda.get_device_capability() != (9, 0):\n    raise RuntimeError('H100')\nreturn 'fa3'",
        "RuntimeError",
    ),
    (
        "return_none",
        "major, _ = torch.cuda.get_device_capability()\nif major < 9:\n    return None\nreturn 'tma'",
        None,
    ),
    (
        "not_ge_raise",
        "if not torch.cuda.get_device_capability() >= (9, 0):\n    raise RuntimeError('sm90')\nreturn 'wgmma'",
        "RuntimeError",
    ),
    (
        "assert_ge",
        "assert torch.cuda.get_device_capability()[0] >= 9, 'needs Hopper'\nreturn 'wgmma'",
        "AssertionError",
    ),
    (
        "skip_lt",
        "if torch.cuda.get_device_capability()[0] < 9:\n    pytest.skip('sm90')\nreturn 'ran'",
        "skipped",
    ),
    (
        "flag_raise",
        "has = torch.cuda.get_device_capability() >= (9, 0)\nif not has:\n    raise RuntimeError('sm90')\nreturn 'wgmma'",
        "RuntimeError",
    ),
    (
        "not_in",
        "major, _ = torch.cuda.get_device_capability()\nif major not in (9, 10):\n    raise RuntimeError('sm90/sm100')\nreturn 'tma'",
        "RuntimeError",
    ),
    # tests that ENABLE an optional path: AMD GPUs take the fallback
    (
        "enable_else",
        "if torch.cuda.get_device_capability() >= (9, 0):\n    return 'hopper'\nelse:\n    return 'portable'",
        "portable",
    ),
    (
        "enable_value",
        "use_tma = torch.cuda.get_device_capability()[0] >= 9\nreturn 'tma' if use_tma else 'portable'",
        "portable",
    ),
    (
        "enable_eq",
        "major, _ = torch.cuda.get_device_capability()\nreturn 'hopper' if major == 9 else 'portable'",
        "portable",
    ),
    (
        "fallback_lt",
        "if torch.cuda.get_device_capability() < (9, 0):\n    return 'portable'\nreturn 'hopper'",
        "portable",
    ),
]


def _guard_module():
    parts = ["import pytest\nimport torch\n"]
    for name, body, _ in GUARDS:
        parts.append(f"\n\ndef {name}():\n" + textwrap.indent(body, "    ") + "\n")
    parts.append(
        "\n\n@pytest.mark.skipif(torch.cuda.get_device_capability() < (9, 0), reason='sm90')\n"
        "def test_marked():\n    pass\n"
    )
    return "".join(parts)


def test_roc106_guards_keep_their_meaning_on_rocm():
    source = _guard_module()
    findings, fixed = _fix(source)
    assert sum(f.code == "ROC106" for f in findings) == len(GUARDS) + 1
    assert fixed != source
    calls = [name for name, _, _ in GUARDS] + ["test_marked"]
    # NVIDIA: the same program
    assert _run(source, None, calls) == _run(fixed, None, calls)
    # ROCm: what the rule page says, for every guard (0 inverted)
    _, results = _run(fixed, "6.2", calls)
    expected = [(name, want) for name, _, want in GUARDS] + [("test_marked", "skipped")]
    assert results == expected


def test_roc106_old_fix_inverted_the_requires_guards():
    """The harness is not blind: the old uniform `cuda is not None and (...)` fix lets AMD GPUs
    through every guard that tests `<`."""
    source = _guard_module()
    old = source.replace(
        "if torch.cuda.get_device_capability() < (9, 0):\n        raise",
        "if torch.version.cuda is not None and (torch.cuda.get_device_capability() < (9, 0)):\n        raise",
    )
    _, results = _run(old, "6.2", ["raise_lt"])
    assert results == [("raise_lt", "wgmma")]  # runs on into the NVIDIA-only kernel


# -- ROC101/ROC102: observed settings are not gated ----------------------------------------------
OBSERVED = {
    "finally_restore": """
        def run(step):
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                step()
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old
    """,
    "context_manager": """
        import contextlib


        @contextlib.contextmanager
        def tf32():
            saved = torch.backends.cudnn.allow_tf32
            torch.backends.cudnn.allow_tf32 = True
            yield
            torch.backends.cudnn.allow_tf32 = saved
    """,
    "asserted": """
        torch.backends.cuda.matmul.allow_tf32 = True
        assert torch.backends.cuda.matmul.allow_tf32
    """,
    "getattr_read": """
        torch.backends.cuda.matmul.allow_tf32 = True
        LOG = {"tf32": getattr(torch.backends.cuda.matmul, "allow_tf32")}
    """,
    "precision_read": """
        torch.set_float32_matmul_precision("high")
        PRECISION = torch.get_float32_matmul_precision()
    """,
    "helper_forwarding": """
        def enable_tf32(want=True):
            torch.backends.cuda.matmul.allow_tf32 = want


        enable_tf32(False)
    """,
    "args_value": """
        def configure(args):
            torch.backends.cudnn.allow_tf32 = args.tf32
    """,
    "tunable": """
        def tune():
            torch.cuda.tunable.enable(True)
            torch.backends.cuda.matmul.allow_tf32 = True
    """,
    "reduction_off": """
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    """,
}


@pytest.mark.parametrize("name", sorted(OBSERVED))
def test_an_observed_setting_gets_no_gate_and_a_reason(name):
    source = "import torch\n" + textwrap.dedent(OBSERVED[name])
    findings, fixed = _fix(source, unsafe=False)
    hits = [f for f in findings if f.code in ("ROC101", "ROC102")]
    assert hits, findings
    for f in hits:
        assert f.fix is not None and f.fix.applicability.value == "display", (name, f.fix)
        assert f.fix.message.startswith("not fixed: "), f.fix.message
    assert fixed == source  # nothing gated


@pytest.mark.parametrize(
    "source",
    [
        "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n",
        "import torch\n\n\ndef setup():\n    torch.set_float32_matmul_precision('high')\n",
        # a read of another channel does not observe this one
        "import torch\ntorch.backends.cudnn.allow_tf32 = True\nX = torch.backends.cuda.matmul.allow_tf32\n",
        # TunableOp in another function does not make this one ROCm's
        "import torch\n\n\ndef tune():\n    torch.cuda.tunable.enable(True)\n\n\n"
        "def setup():\n    torch.backends.cuda.matmul.allow_tf32 = True\n",
    ],
)
def test_an_unobserved_enabling_setting_is_still_gated(source):
    findings, fixed = _fix(source, unsafe=False)
    assert any(f.code == "ROC101" and f.fix.applicability.value == "safe" for f in findings)
    assert "if not is_rocm:" in fixed


def test_rocm_record_of_a_gated_setting_is_the_rule_pages():
    """ROC101's page: on ROCm the TF32 request is not made; NVIDIA's record is the original's."""
    source = (
        "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cudnn.allow_tf32 = True\n"
    )
    _, fixed = _fix(source, unsafe=False)
    assert _run(source, None, []) == _run(fixed, None, [])
    record, _ = _run(fixed, "6.2", [])
    assert "matmul.allow_tf32" not in record and "cudnn.allow_tf32" not in record


# -- ROC401: no guard that turns an ImportError into an AttributeError ----------------------------
@pytest.mark.parametrize(
    "source",
    [
        "import pynvml\npynvml.nvmlInit()\n",
        "from pynvml import nvmlInit\n\nnvmlInit()\n",
        "import pynvml\n\n\ndef init():\n    pynvml.nvmlInit()\n\n\ninit()\n",
        "import pynvml\n\n\nclass Monitor:\n    count = pynvml.nvmlDeviceGetCount()\n",
        "import pynvml\n\n\ndef handle(h=pynvml.nvmlDeviceGetHandleByIndex(0)):\n    return h\n",
    ],
)
def test_pynvml_used_at_import_gets_no_guard(source):
    findings, fixed = _fix(source)
    (hit,) = [f for f in findings if f.code == "ROC401"]
    assert hit.fix.applicability.value == "display" and "AttributeError" in hit.fix.message
    assert fixed == source


@pytest.mark.parametrize(
    "source",
    [
        "import pynvml\n\n\ndef used():\n    pynvml.nvmlInit()\n",
        "import pynvml\n\nif pynvml is not None:\n    pynvml.nvmlInit()\n",
    ],
)
def test_pynvml_used_only_later_is_still_guarded(source):
    findings, fixed = _fix(source)
    assert "except ImportError:\n    pynvml = None" in fixed
    # ROCm host without pynvml: the rule page's record: the module imports, nothing else changes
    saved = sys.modules.get("pynvml")
    sys.modules["pynvml"] = None  # an AMD host: `import pynvml` raises ImportError
    try:
        namespace: dict = {}
        exec(compile(fixed, "m.py", "exec"), namespace)
        assert namespace["pynvml"] is None
    finally:
        if saved is not None:
            sys.modules["pynvml"] = saved
        else:
            sys.modules.pop("pynvml", None)
