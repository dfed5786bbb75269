"""The build-script interpreter against a real run: generated setup-like scripts (nested
platform tests, predicates bound above, helper functions, globs, comprehensions, ``+=``,
``.append``/``.extend``, ``define_macros``, ``extra_compile_args`` dicts) are run by Python
under stub modules (a fake ``torch`` whose ``version.hip``/``version.cuda`` follow the scenario,
a fake ``torch.utils.cpp_extension`` and ``setuptools`` that record what ``CUDAExtension``,
``setup`` and ``load`` are given), never the real torch, in a temporary directory.  For every
source and macro and every scenario the interpreter's answer must equal what the run compiled
or defined, or be "maybe": never a wrong "definitely" or "never"."""

import ast
import json
import os
import random
import re
import subprocess
import sys
import textwrap

from rocm_lint.build.setup_eval import SCENARIOS, evaluate

STUBS = {
    "stub_record.py": "EXTS = []\nSETUPS = []\nLOADS = []\n",
    "torch/__init__.py": "from . import version, cuda, utils\n",
    "torch/version.py": (
        "import os\n_s = os.environ['STUB_SCENARIO']\n"
        "hip = '6.2.41133' if _s == 'rocm' else None\ncuda = '12.4' if _s == 'nvidia' else None\n"
    ),
    "torch/cuda.py": "import os\n\ndef is_available():\n    return os.environ['STUB_SCENARIO'] != 'cpu'\n",
    "torch/utils/__init__.py": "from . import cpp_extension\n",
    "torch/utils/cpp_extension.py": textwrap.dedent(
        """
        import os
        import stub_record
        _s = os.environ["STUB_SCENARIO"]
        IS_HIP_EXTENSION = _s == "rocm"
        ROCM_HOME = "/opt/rocm" if _s == "rocm" else None
        CUDA_HOME = "/usr/local/cuda" if _s == "nvidia" else None

        class _Ext:
            def __init__(self, name, sources, *args, **kwargs):
                self.index = len(stub_record.EXTS)
                stub_record.EXTS.append({
                    "sources": [str(s) for s in sources],
                    "flags": [kwargs.get(k) for k in ("define_macros", "extra_compile_args") if k in kwargs],
                })

        def CUDAExtension(name, sources, *args, **kwargs):
            return _Ext(name, sources, *args, **kwargs)

        CppExtension = CUDAExtension

        def load(name, sources, extra_cflags=None, extra_cuda_cflags=None, **kwargs):
            stub_record.LOADS.append({"sources": [str(s) for s in sources],
                                      "flags": [extra_cflags, extra_cuda_cflags]})

        class BuildExtension:
            pass
        """
    ),
    "setuptools/__init__.py": textwrap.dedent(
        """
        import stub_record

        def setup(**kwargs):
            mods = kwargs.get("ext_modules")
            stub_record.SETUPS.append({
                "ext_modules": None if mods is None else [m.index for m in mods],
                "flags": [kwargs.get(k) for k in ("define_macros", "extra_compile_args") if k in kwargs],
            })

        def find_packages(*args, **kwargs):
            return []
        """
    ),
}
DRIVER = textwrap.dedent(
    """
    import json, os, runpy, sys
    import stub_record
    out = {}
    for script in sys.argv[2:]:
        out[script] = {}
        for scenario in ("nvidia", "rocm", "cpu"):
            os.environ["STUB_SCENARIO"] = scenario
            for name in list(sys.modules):
                if name.split(".")[0] in ("torch", "setuptools"):
                    del sys.modules[name]
            stub_record.EXTS[:] = []
            stub_record.SETUPS[:] = []
            stub_record.LOADS[:] = []
            os.chdir(os.path.dirname(script))
            try:
                runpy.run_path(script, run_name="__main__")
                error = None
            except SystemExit:
                error = None
            except Exception as e:
                error = repr(e)
            out[script][scenario] = {"error": error, "exts": list(stub_record.EXTS),
                                     "setups": list(stub_record.SETUPS), "loads": list(stub_record.LOADS)}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, default=repr)
    """
)
TREE = [
    "csrc/a.cu",
    "csrc/b.cu",
    "csrc/common.cpp",
    "csrc/cuda/n1.cu",
    "csrc/cuda/n2.cu",
    "csrc/cuda/deep/n3.cu",
    "csrc/hip/h1.hip",
    "csrc/hip/h2.hip",
    "csrc/cpu/c1.cpp",
]
CONDITIONS = [
    "torch.version.hip",
    "torch.version.hip is not None",
    "torch.version.cuda is not None",
    "torch.version.hip is None",
    "IS_HIP_EXTENSION",
    "not IS_HIP_EXTENSION",
    "ROCM_HOME is not None",
    "CUDA_HOME is not None",
    "is_rocm",
    "not is_rocm",
    "use_cuda",
    "use_cuda or is_rocm",
    "is_rocm and FAST",
    "FAST",
    "not FAST and not is_rocm",
    "torch.cuda.is_available()",
    "len(sources) > 2",
    "'csrc/a.cu' in sources",
]
MACROS = ["M_A", "M_B", "X_WITH_HIP", "K_NV"]


class _Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.helpers = []

    def path(self):
        return self.r.choice(TREE)

    def action(self, depth):
        r = self.r
        kind = r.randrange(14)
        if kind == 0:
            return [f"sources += [{self.path()!r}]"]
        if kind == 1:
            return [f"sources.append(os.path.join('csrc', {os.path.basename(self.path())!r}))"]
        if kind == 2:
            pattern = r.choice(["csrc/hip/*.hip", "csrc/cuda/*.cu", "csrc/*.cu"])
            return [f"sources.extend(glob.glob({pattern!r}))"]
        if kind == 3:
            return ["sources.extend(glob.glob(os.path.join('csrc', 'cuda', '**', '*.cu'), recursive=True))"]
        if kind == 4:
            name = self.helper()
            return [f"sources = sources + {name}()"]
        if kind == 5:
            return [f"define_macros.append(({r.choice(MACROS)!r}, None))"]
        if kind == 6:
            return [f"define_macros += [({r.choice(MACROS)!r}, '2')]"]
        if kind == 7:
            return [f"extra['nvcc'].append('-D{r.choice(MACROS)}')"]
        if kind == 8:
            return [f"extra['cxx'] += ['-D{r.choice(MACROS)}=1', '-O3']"]
        if kind == 9:
            return [f"sources = [s for s in sources if not s.endswith({r.choice(['.hip', '.cu'])!r})]"]
        if kind == 10:
            names = r.sample(["a.cu", "b.cu", "common.cpp"], 2)
            return [f"sources += [os.path.join('csrc', n) for n in {names!r}]"]
        if kind == 11:
            return [f"extra['nvcc'] += {self.flag_helper()}()"]
        if kind == 12 and depth < 3:
            return self.branch(depth + 1)
        if kind == 13:
            path = self.path()
            return self.r.choice(
                [
                    [f"sources += [{self.path()!r}] if {r.choice(CONDITIONS)} else [{self.path()!r}]"],
                    [
                        f"for name in {r.sample(['a.cu', 'b.cu', 'common.cpp'], 2)!r}:",
                        "    if name.endswith('.cu') and " + r.choice(CONDITIONS) + ":",
                        "        sources.append('csrc/' + name)",
                    ],
                    [f"sources = [s for s in sources if s not in {[self.path(), self.path()]!r}]"],
                    [
                        "try:",
                        f"    sources.append({self.path()!r})",
                        f"    import {r.choice(['json', 'no_such_mod'])}",
                        "except ImportError:",
                        f"    sources.append({self.path()!r})",
                    ],
                    [f"sources += _pick('hip' if {r.choice(CONDITIONS)} else 'cuda')"],
                    [f"if {path!r} in sources:", f"    sources.remove({path!r})"],
                    [
                        "n = 0",
                        "while n < len(sources) and n < 2:",
                        "    n += 1",
                        f"    extra['cxx'].append('-D{r.choice(MACROS)}')",
                    ],
                ]
            )
        return [f"sources.append({self.path()!r})"]

    def body(self, depth, n=None):
        out = []
        for _ in range(n or self.r.randint(1, 3)):
            out.extend(self.action(depth))
        return out

    def branch(self, depth):
        r = self.r
        lines = [f"if {r.choice(CONDITIONS)}:"] + ["    " + x for x in self.body(depth)]
        for _ in range(r.randint(0, 2)):
            lines += [f"elif {r.choice(CONDITIONS)}:"] + ["    " + x for x in self.body(depth)]
        if r.random() < 0.6:
            lines += ["else:"] + ["    " + x for x in self.body(depth)]
        return lines

    def helper(self):
        name = f"_sources_{len(self.helpers)}"
        r = self.r
        lines = [
            f"def {name}():",
            f"    if {r.choice(CONDITIONS[:12])}:",
            f"        return [{self.path()!r}]",
        ]
        if r.random() < 0.5:
            lines += [
                f"    elif {r.choice(CONDITIONS[:12])}:",
                f"        return [{self.path()!r}, {self.path()!r}]",
            ]
        lines += [f"    return [{self.path()!r}]" if r.random() < 0.7 else "    return []"]
        self.helpers.append("\n".join(lines))
        return name

    def flag_helper(self):
        name = f"_flags_{len(self.helpers)}"
        r = self.r
        self.helpers.append(
            "\n".join(
                [
                    f"def {name}():",
                    "    flags = ['-O3']",
                    f"    if {r.choice(CONDITIONS[:12])}:",
                    f"        flags.append('-D{r.choice(MACROS)}')",
                    "    return flags",
                ]
            )
        )
        return name

    def script(self):
        r = self.r
        style = r.randrange(3)
        body = ["sources = ['csrc/common.cpp']", "define_macros = []", "extra = {'cxx': [], 'nvcc': []}"]
        for _ in range(r.randint(2, 6)):
            body.extend(self.branch(1) if r.random() < 0.6 else self.action(1))
        build = "CUDAExtension('m', sources, define_macros=define_macros, extra_compile_args=extra)"
        head = [
            "import glob",
            "import os",
            "import sys",
            "import torch",
            "from setuptools import setup",
            "from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, IS_HIP_EXTENSION, CUDAExtension, load",
            "",
            "is_rocm = torch.version.hip is not None and ROCM_HOME is not None",
            "use_cuda = torch.version.cuda and CUDA_HOME is not None",
            "FAST = os.environ.get('FAST_BUILD') == '1'",
        ]
        self.helpers.append(
            "\n".join(
                [
                    "def _pick(kind, base=None):",
                    "    out = list(base or [])",
                    "    if kind == 'hip':",
                    f"        out.append({self.path()!r})",
                    f"    elif {r.choice(CONDITIONS[:12])}:",
                    f"        out += [{self.path()!r}]",
                    "    return out",
                ]
            )
        )
        if r.random() < 0.3:
            body.insert(3, f"if {r.choice(CONDITIONS)}:")
            body.insert(4, "    " + ("return []" if style == 1 else "sys.exit(0)"))
        if style == 0:  # module level
            code = head + self.helpers + body + [f"setup(name='m', ext_modules=[{build}])"]
        elif style == 1:  # get_extensions()
            code = (
                head
                + self.helpers
                + ["def get_extensions():"]
                + ["    " + x for x in body]
                + [f"    return [{build}]", "", "setup(name='m', ext_modules=get_extensions())"]
            )
        else:  # built at run time
            code = head + self.helpers + body + ["load('m', sources, extra_cuda_cflags=extra['nvcc'])"]
        return "\n".join(code) + "\n"


_FLAG = re.compile(r"(?<![\w-])-D([A-Za-z_]\w*)(?:=(\S*))?")


def _reference(record):
    """(sources compiled, macros defined) of one run, as the interpreter defines them."""
    builds = [record["exts"][i] for s in record["setups"] if s["ext_modules"] for i in s["ext_modules"]]
    if not any(s["ext_modules"] is not None for s in record["setups"]):
        builds = list(record["exts"])
    builds += record["loads"] + record["setups"]
    sources, macros = set(), set()
    for build in builds:
        for s in build.get("sources", []):
            sources.add(os.path.normpath(s).replace(os.sep, "/"))
        for flags in build["flags"]:
            values = list(flags.values()) if isinstance(flags, dict) else [flags or []]
            for value in values:
                for item in value:
                    if isinstance(item, list):  # a (name, value) pair
                        macros.add((item[0], "1" if item[1] is None else str(item[1])))
                    elif isinstance(item, str):
                        macros.update((m.group(1), m.group(2) or "1") for m in _FLAG.finditer(item))
    return sources, macros


def test_the_interpreter_agrees_with_a_real_run(tmp_path):
    stubs = tmp_path / "stubs"
    for name, text in STUBS.items():
        (stubs / name).parent.mkdir(parents=True, exist_ok=True)
        (stubs / name).write_text(text)
    (stubs / "driver.py").write_text(DRIVER)
    scripts = {}
    for seed in range(60):
        project = tmp_path / f"p{seed}"
        for name in TREE:
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            (project / name).write_text("")
        text = _Gen(seed).script()
        (project / "setup.py").write_text(text)
        scripts[str(project / "setup.py")] = text
    out = tmp_path / "runs.json"
    env = {k: v for k, v in os.environ.items() if k not in ("FAST_BUILD", "PYTHONPATH")}
    env["PYTHONPATH"] = str(stubs)
    subprocess.run(
        [sys.executable, "-S", str(stubs / "driver.py"), str(out), *scripts], check=True, env=env, timeout=300
    )
    runs = json.loads(out.read_text())
    decided = 0
    for script, text in scripts.items():
        result = evaluate(ast.parse(text), script)
        assert result is not None, text
        for k, scenario in enumerate(SCENARIOS):
            record = runs[script][scenario]
            assert record["error"] is None, (record["error"], text)
            sources, macros = _reference(record)
            paths = {"/".join(p) for p in result.sources} | sources
            for path in paths:
                said = result.sources.get(tuple(path.split("/")), (False, False, False))[k]
                assert said is None or said == (path in sources), (scenario, path, said, text)
                decided += said is not None
            for macro in {m for m in result.macros} | macros:
                said = result.macros.get(macro, (False, False, False))[k]
                assert said is None or said == (macro in macros), (scenario, macro, said, text)
                decided += said is not None
    assert decided > 1000  # the interpreter decides most of it, not "maybe" everywhere
