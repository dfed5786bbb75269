"""The value-flow layer (python/values.py): unit shapes, negatives, and a property test that runs
generated modules under a stub torch per platform (a fake ``torch`` package on ``sys.path`` in a
temporary directory, never the real one) and holds the layer's answers to what they compute."""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
import textwrap

import pytest

from rocm_lint.config import Config
from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.engine import check_source
from rocm_lint.python.context import ModuleContext


def _ctx(text: str, path: str = "mod.py") -> ModuleContext:
    text = textwrap.dedent(text)
    return ModuleContext(path, ast.parse(text), Config(), text)


def _node(ctx: ModuleContext, target: str) -> ast.AST:
    """The value assigned to ``target`` (its last assignment), or the name read in
    ``probe(<name>)``."""
    found = None
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == target for t in node.targets
        ):
            found = node.value
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "probe" and node.args:
            if isinstance(node.args[0], ast.Name) and node.args[0].id == target:
                found = node.args[0]
    assert found is not None, target
    return found


def _codes(text: str, path: str = "mod.py"):
    return [(f.line, f.code) for f in check_source(path, textwrap.dedent(text), Config())]


# -- unit shapes --------------------------------------------------------------------------------
def test_alias_through_two_functions():
    ctx = _ctx(
        """
        import torch
        def _backend():
            return getattr(torch, "backends").cuda
        def get_matmul():
            return _backend().matmul
        MATMUL = get_matmul()
        """
    )
    assert ctx.values.denote(_node(ctx, "MATMUL")).alias() == "torch.backends.cuda.matmul"


def test_alias_differs_per_platform_is_no_alias():
    ctx = _ctx(
        """
        import torch
        def device_module():
            if torch.version.hip is not None:
                return torch.backends.cudnn
            return torch.cuda
        DEV = device_module()
        """
    )
    den = ctx.values.denote(_node(ctx, "DEV"))
    assert den.rocm.alias() == "torch.backends.cudnn"
    assert den.nvidia.alias() == "torch.cuda"
    assert den.alias() is None


def test_rebound_or_augmented_name_is_unknown():
    ctx = _ctx(
        """
        import torch
        A = torch.cuda
        for A in range(3):
            pass
        B = "high"
        B += "er"
        C = A
        D = B
        """
    )
    assert not ctx.values.value(_node(ctx, "C"), ROCM).complete
    assert ctx.values.value(_node(ctx, "D"), ROCM).constant() is ...


def test_parameter_default_and_call_sites():
    ctx = _ctx(
        """
        def _set(precision="highest"):
            probe(precision)
        _set()
        _set("high")
        def _only_passed(mode="high"):
            probe(mode)
        _only_passed("medium")
        """
    )
    value = ctx.values.value(_node(ctx, "precision"), ROCM)
    assert value.complete and sorted(value.constants()) == ["high", "highest"]
    fns = {f.name: f for f in ctx.tree.body if isinstance(f, ast.FunctionDef)}
    assert ctx.values.default_relied_on(fns["_set"], "precision")
    assert not ctx.values.default_relied_on(fns["_only_passed"], "mode")
    assert ctx.values.value(_node(ctx, "mode"), ROCM).constants() == ["medium"]


def test_public_function_parameter_is_open():
    ctx = _ctx(
        """
        def configure(precision="high"):
            probe(precision)
        """
    )
    value = ctx.values.value(_node(ctx, "precision"), ROCM)
    assert not value.complete and value.constants() == ["high"]


def test_function_passed_as_value_is_open():
    ctx = _ctx(
        """
        def _cb(mode="a"):
            probe(mode)
        _cb("b")
        register(_cb)
        """
    )
    assert not ctx.values.value(_node(ctx, "mode"), ROCM).complete


def test_platform_branch_pruned_per_platform():
    ctx = _ctx(
        """
        import torch
        IS_HIP = torch.version.hip is not None
        def _pick():
            if IS_HIP:
                return (9, 4)
            return (9, 0)
        CAP = _pick()
        """
    )
    den = ctx.values.denote(_node(ctx, "CAP"))
    assert den.rocm.constant() == (9, 4) and den.nvidia.constant() == (9, 0)


def test_nvidia_only_import_is_false_on_rocm():
    ctx = _ctx(
        """
        def cudnn_available():
            try:
                import cudnn
                return True
            except ImportError:
                return False
        OK = cudnn_available()
        """
    )
    den = ctx.values.denote(_node(ctx, "OK"))
    assert den.rocm.constant() is False
    assert den.nvidia.constant() is ...  # installed or not


def test_closure_and_lambda_scopes():
    ctx = _ctx(
        """
        X = "module"
        def _outer():
            X = "outer"
            def inner():
                probe(X)
            return inner
        f = lambda X: probe(X)
        """
    )
    reads = sorted(
        (
            n
            for n in ast.walk(ctx.tree)
            if isinstance(n, ast.Name) and n.id == "X" and isinstance(n.ctx, ast.Load)
        ),
        key=lambda n: n.lineno,
    )
    assert ctx.values.value(reads[0], ROCM).constant() == "outer"
    assert not ctx.values.value(reads[1], ROCM).complete  # a lambda's parameter


# -- what the rules see ----------------------------------------------------------------------
def test_rules_read_the_layer():
    text = """
        import torch

        def _backend():
            return getattr(torch.backends, "cuda")

        def get_matmul():
            return _backend().matmul

        DEVICE_MATMUL = get_matmul()
        DEVICE_MATMUL.allow_tf32 = True  # ROC101

        def _setup(precision="high"):
            torch.set_float32_matmul_precision(precision)  # ROC101

        _setup()

        def _quantize(x, dtype):
            return x.to(dtype)

        def run(x):
            return _quantize(x, torch.float8_e4m3fn)  # ROC801

        def empty(n, dtype=torch.float8_e5m2):  # ROC801: callers may rely on it
            return torch.empty(n, dtype=dtype)

        def cc_check():
            hopper = (9, 0)
            return torch.cuda.get_device_capability() >= hopper  # ROC106

        def other():
            hopper = (7, 0)
            return hopper
        """
    found = _codes(text)
    assert (11, "ROC101") in found and (14, "ROC101") in found
    assert (22, "ROC801") in found and (24, "ROC801") in found
    assert (29, "ROC106") in found


def test_rules_negatives():
    text = """
        import torch

        def _setup(precision="high"):
            torch.set_float32_matmul_precision(precision)

        _setup("highest")  # every caller passes a safe value: the default is never used

        def _empty(n, dtype=torch.float8_e5m2):
            return torch.empty(n, dtype=dtype)

        _empty(3, torch.bfloat16)

        def _scale(x, factor):
            return x * factor

        def run(x):
            return _scale(x, torch.float8_e4m3fn)  # no dtype parameter

        def cc_check():
            ampere = (8, 0)
            return torch.cuda.get_device_capability() >= ampere

        def _cudnn_ok():
            try:
                import cudnn
                return True
            except ImportError:
                return False

        if _cudnn_ok():
            torch.backends.cuda.matmul.allow_tf32 = True

        def build():
            import tensorrt
            torch.backends.cudnn.allow_tf32 = True
        """
    assert _codes(text) == []


def test_module_after_nvidia_only_import_keeps_its_import_findings():
    text = """
        import tensorrt
        import pycuda.driver
        import torch
        torch.backends.cuda.matmul.allow_tf32 = True
        """
    assert _codes(text) == [(2, "ROC402"), (3, "ROC402")]


# -- the property: generated modules under a stub torch -----------------------------------------
STUB = {
    "torch/__init__.py": textwrap.dedent(
        """
        import os
        from torch import version, cuda, backends, utils
        float8_e4m3fn = "dtype:float8_e4m3fn"
        """
    ),
    "torch/version.py": textwrap.dedent(
        """
        import os
        hip = "6.2.0" if os.environ["STUB_PLATFORM"] == "rocm" else None
        cuda = "12.4" if os.environ["STUB_PLATFORM"] == "nvidia" else None
        """
    ),
    "torch/cuda.py": "def is_available():\n    return True\n",
    "torch/backends/__init__.py": "from torch.backends import cuda, cudnn\n",
    "torch/backends/cuda.py": "class _Matmul:\n    allow_tf32 = False\nmatmul = _Matmul()\n",
    "torch/backends/cudnn.py": "allow_tf32 = True\n",
    "torch/utils/__init__.py": "",
}

RUNNER = textwrap.dedent(
    """
    import json, sys, types
    import torch, torch.backends.cuda
    objects = {}
    def index(obj, qual, depth=0):
        if depth > 4 or id(obj) in objects:
            return
        objects[id(obj)] = qual
        for name in dir(obj):
            if not name.startswith("_"):
                value = getattr(obj, name)
                if isinstance(value, types.ModuleType) or type(value).__name__ == "_Matmul":
                    index(value, qual + "." + name, depth + 1)
    index(torch, "torch")
    def atom(v):
        if id(v) in objects and not isinstance(v, (str, int, tuple, type(None))):
            return ["t", objects[id(v)]]
        return ["c", repr(v)]
    out = []
    for path in sys.argv[1:]:
        obs = []
        ns = {"probe": lambda key, v: obs.append([key, atom(v)])}
        try:
            exec(compile(open(path).read(), path, "exec"), ns)
        except Exception as e:
            out.append(None)
            continue
        out.append({"results": {k: atom(v) for k, v in ns.items() if k.startswith("R_")}, "probes": obs})
    print(json.dumps(out))
    """
)


class _Gen:
    """A random module: functions that return constants, torch objects, platform tests and each
    other's results, with parameters and defaults, called from module level."""

    TORCH = [
        "torch.cuda",
        "torch.backends.cuda.matmul",
        "torch.backends.cudnn",
        'getattr(torch, "cuda")',
        'getattr(torch.backends, "cudnn")',
        "torch.backends.cuda",
    ]
    TESTS = [
        "torch.version.hip is not None",
        "torch.version.cuda is not None",
        "torch.version.hip",
        "not torch.version.hip",
        "torch.version.hip is None and torch.version.cuda is not None",
        'getattr(torch.version, "hip", None) is not None',
    ]
    CONSTS = ['"high"', '"medium"', '"highest"', "1", "2", "None", "True", "False", "(9, 0)", "(8, 9)"]

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines = ["import torch"]
        self.names = []  # module-level names bound so far
        self.functions = []  # (name, number of parameters)
        self.probes = 0

    def expr(self, scope, depth=0):
        r = self.rng.random()
        if depth > 2 or r < 0.25:
            return self.rng.choice(self.CONSTS)
        if r < 0.45:
            return self.rng.choice(self.TORCH)
        if r < 0.55:
            return self.rng.choice(self.TESTS)
        if r < 0.7 and scope:
            return self.rng.choice(scope)
        if r < 0.8 and self.functions:
            name, n = self.rng.choice(self.functions)
            args = [self.expr(scope, depth + 1) for _ in range(self.rng.randint(0, n))]
            return f"{name}({', '.join(args)})"
        if r < 0.9:
            return f"({self.expr(scope, depth + 1)} if {self.rng.choice(self.TESTS)} else {self.expr(scope, depth + 1)})"
        return (
            f"({self.expr(scope, depth + 1)} {self.rng.choice(['and', 'or'])} {self.expr(scope, depth + 1)})"
        )

    def function(self, k: int) -> None:
        name = f"_f{k}" if self.rng.random() < 0.8 else f"f{k}"
        params = [f"p{i}" for i in range(self.rng.randint(0, 2))]
        sig = ", ".join(p if self.rng.random() < 0.3 else f"{p}={self.expr([])}" for p in params)
        if any("=" in part for part in sig.split(", ")[:-1]) and "=" not in sig.split(", ")[-1]:
            sig = ", ".join(f"{p}=None" for p in params)  # no default after a defaulted one
        body = []
        local = list(params) + self.names
        for p in params:
            body.append(f"probe({self.probes}, {p})")
            self.probes += 1
        if self.rng.random() < 0.5:
            body.append(f"v = {self.expr(local)}")
            local = local + ["v"]
        if self.rng.random() < 0.5:
            body += [f"if {self.rng.choice(self.TESTS)}:", f"    return {self.expr(local)}"]
        if self.rng.random() < 0.2:
            body += ["try:", "    import cudnn", "    return True", "except ImportError:", "    pass"]
        if self.rng.random() < 0.9:
            body.append(f"return {self.expr(local)}")
        self.lines.append(f"def {name}({sig}):")
        body = body or ["pass"]
        self.lines += ["    " + line for line in body]
        self.functions.append((name, len(params)))

    def module(self) -> str:
        for k in range(self.rng.randint(1, 4)):
            self.function(k)
            if self.rng.random() < 0.5:
                name = f"N{k}"
                self.lines.append(f"{name} = {self.expr(self.names)}")
                self.names.append(name)
        for k in range(3):
            self.lines.append(f"R_{k} = {self.expr(self.names)}")
        return "\n".join(self.lines) + "\n"


def _matches(value, actual) -> bool:
    kind, what = actual
    if kind == "t":
        return ("t", what) in value.options
    v = ast.literal_eval(what)
    if ("c", type(v).__name__, v) in value.options:
        return True
    return ("truthy",) in value.options if v else ("falsy",) in value.options


def test_layer_agrees_with_the_program_under_a_stub_torch(tmp_path):
    rng = random.Random(20261128)
    stub = tmp_path / "stub"
    for rel, text in STUB.items():
        (stub / rel).parent.mkdir(parents=True, exist_ok=True)
        (stub / rel).write_text(text)
    (tmp_path / "runner.py").write_text(RUNNER)
    modules = []
    for i in range(150):
        text = _Gen(rng).module()
        path = tmp_path / f"gen_{i}.py"
        path.write_text(text)
        modules.append((str(path), text))
    runs = {}
    for platform in ("nvidia", "rocm"):
        env = {**os.environ, "STUB_PLATFORM": platform, "PYTHONPATH": str(stub)}
        proc = subprocess.run(
            [sys.executable, "-S", str(tmp_path / "runner.py"), *(p for p, _ in modules)],
            env=env,
            capture_output=True,
            text=True,
            cwd=str(stub),
        )
        assert proc.returncode == 0, proc.stderr
        runs[platform] = json.loads(proc.stdout)
    checked = complete = 0
    for i, (path, text) in enumerate(modules):
        ctx = ModuleContext(path, ast.parse(text), Config(), text)
        probes = {}
        for node in ast.walk(ctx.tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "probe":
                probes[node.args[0].value] = node.args[1]
        for platform, key in ((NVIDIA, "nvidia"), (ROCM, "rocm")):
            run = runs[key][i]
            if run is None:
                continue  # the program raised (a wrong call): nothing to agree with
            for name, actual in run["results"].items():
                value = ctx.values.value(_node(ctx, name), platform)
                checked += 1
                if value.complete:
                    complete += 1
                    assert _matches(value, actual), (text, platform, name, value, actual)
            for probe, actual in run["probes"]:
                value = ctx.values.value(probes[probe], platform)
                checked += 1
                if value.complete:
                    complete += 1
                    assert _matches(value, actual), (text, platform, probe, value, actual)
    assert checked > 500 and complete > checked // 3, (checked, complete)


@pytest.mark.parametrize("seed", range(3))
def test_generator_is_deterministic(seed):
    assert _Gen(random.Random(seed)).module() == _Gen(random.Random(seed)).module()


def test_alias_returned_by_a_function_of_another_module(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "device.py").write_text(
        "import torch\n\ndef _backend():\n    return getattr(torch, 'backends').cuda\n\n"
        "def get_matmul():\n    return _backend().matmul\n\ndef get_other():\n    return _backend().cufft_plan_cache\n"
    )
    train = "from .device import get_matmul, get_other\n\nMATMUL = get_matmul()\nMATMUL.allow_tf32 = True\nOTHER = get_other()\nOTHER.allow_tf32 = True\n"
    (pkg / "train.py").write_text(train)
    found = [(f.line, f.code) for f in check_source(str(pkg / "train.py"), train, Config())]
    assert found == [(4, "ROC101")]
