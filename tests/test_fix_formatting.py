"""Fixes pass the formatters people run beside rocm-lint (issue: a pre-commit config with ruff's
hooks failed every fixed commit a second time).

Every Python fix fixture and rule fixture is first made clean as a project running ruff keeps its
files (imports sorted, formatted, line length 120 in a ruff.toml rocm-lint reads too); the fixed
file must stay clean under ruff's import sorting (I001), line length (E501) and formatter: the
inserted flag sits after the import block with the blank line isort/ruff want (two after a def or
class), an added ``import torch`` in isort's place, a guarded import set off from the imports,
and a statement the fix made too long wrapped as ruff format wraps it.  The real ruff binary runs
on the files (it is a test dependency)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
pytestmark = pytest.mark.skipif(RUFF is None, reason="ruff is not installed (a test dependency)")

CASES = sorted((ROOT / "fixtures" / "fixes").glob("*.py")) + sorted(
    (ROOT / "fixtures" / "rules").glob("ROC*.py")
)


def _clean(path: Path) -> bool:
    check = subprocess.run(
        [RUFF, "check", "--no-cache", "--isolated", "--select", "I,E501", "--line-length", "120", str(path)],
        capture_output=True,
        text=True,
    )
    form = subprocess.run(
        [RUFF, "format", "--no-cache", "--isolated", "--line-length", "120", "--check", str(path)],
        capture_output=True,
        text=True,
    )
    return check.returncode == 0 and form.returncode == 0


def _fixed(path: Path) -> str:
    from test_fixes import fixed_text

    return fixed_text(path.read_text("utf-8"), unsafe="unsafe" in path.name, path=str(path)).text


def _formatted(path: Path, tmp_path: Path) -> Path:
    """The fixture as a project that runs ruff keeps it: imports sorted, formatted."""
    (tmp_path / "ruff.toml").write_text("line-length = 120\n")  # what the fix wraps to
    out = tmp_path / "formatted" / path.name
    out.parent.mkdir()
    out.write_text(path.read_text("utf-8"), "utf-8")
    subprocess.run(
        [
            RUFF,
            "check",
            "--no-cache",
            "--isolated",
            "--select",
            "I",
            "--fix",
            "--line-length",
            "120",
            str(out),
        ],
        capture_output=True,
    )
    subprocess.run(
        [RUFF, "format", "--no-cache", "--isolated", "--line-length", "120", str(out)], capture_output=True
    )
    return out


@pytest.mark.parametrize("path", CASES, ids=lambda p: getattr(p, "name", None))
def test_a_formatter_clean_file_stays_formatter_clean(path, tmp_path):
    path = _formatted(path, tmp_path)
    if not _clean(path):
        pytest.skip("ruff cannot make the fixture itself clean (a line it cannot wrap)")
    fixed = _fixed(path)
    if fixed == path.read_text("utf-8"):
        pytest.skip("nothing to fix once formatted")
    out = tmp_path / path.name
    out.write_text(fixed, "utf-8")
    assert _clean(out), (
        subprocess.run(
            [
                RUFF,
                "check",
                "--no-cache",
                "--isolated",
                "--select",
                "I,E501",
                "--line-length",
                "120",
                "--diff",
                str(out),
            ],
            capture_output=True,
            text=True,
        ).stdout
        + subprocess.run(
            [RUFF, "format", "--no-cache", "--isolated", "--line-length", "120", "--diff", str(out)],
            capture_output=True,
            text=True,
        ).stdout
    )


@pytest.mark.parametrize(
    "tail",
    [
        "\n\ndef setup():\n    torch.backends.cuda.matmul.allow_tf32 = True\n    return os.sep\n",
        "\ntorch.backends.cuda.matmul.allow_tf32 = True\nprint(os.sep)\n",
        "\n\nclass Model:\n    pass\n\n\ntorch.backends.cuda.matmul.allow_tf32 = True\nprint(os.sep)\n",
    ],
)
def test_the_flag_after_the_import_block_is_formatter_clean(tail, tmp_path):
    """A sorted import block followed by a def, by code, or by a class: the flag goes after the
    imports with the blank line ruff's isort wants, and what followed keeps its blank lines."""
    before = tmp_path / "before.py"
    before.write_text("import os\n\nimport torch\n" + tail)
    assert _clean(before)
    after = tmp_path / "after.py"
    after.write_text(_fixed(before))
    assert "is_rocm = torch.version.hip is not None" in after.read_text()
    assert _clean(after), after.read_text()


# -- line lengths and layouts --------------------------------------------------------------------
def _fix_in(tmp_path: Path, source: str, config: str = "", name: str = "pyproject.toml") -> str:
    if config:
        (tmp_path / name).write_text(config)
    path = tmp_path / "m.py"
    path.write_text(source)
    return _fixed(path)


LONG = 'import os\n\nimport torch\n\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True,max_split_size_mb:512"\n'


@pytest.mark.parametrize(
    "config,name,wrapped",
    [
        ("", "pyproject.toml", True),  # ruff's default, 88
        ("[tool.ruff]\nline-length = 140\n", "pyproject.toml", False),
        ("[tool.black]\nline-length = 140\n", "pyproject.toml", False),
        ("line-length = 140\n", "ruff.toml", False),
        ("line-length = 140\n", ".ruff.toml", False),
        ("[flake8]\nmax-line-length = 140\n", "setup.cfg", False),
        ("[flake8]\nmax-line-length = 140\n", "tox.ini", False),
        ("[flake8]\nmax-line-length = 88\n", ".flake8", True),
        ("[tool.ruff]\nline-length = 'broken'\n", "pyproject.toml", True),  # unreadable: the default
    ],
)
def test_the_line_length_is_the_projects(tmp_path, config, name, wrapped):
    fixed = _fix_in(tmp_path, LONG, config, name)
    assert ("= (\n" in fixed) == wrapped, fixed
    assert "max_split_size_mb" in fixed


def test_a_line_already_too_long_is_left_alone(tmp_path):
    fixed = _fix_in(tmp_path, LONG, "[tool.ruff]\nline-length = 50\n")
    assert 'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "' in fixed


@pytest.mark.parametrize(
    "source",
    [
        # a gated statement moves one level deeper
        'import os\n\nimport torch\n\n\ndef f(x):\n    if x:\n        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = '
        '"max_split_size_mb:512"\n        print(x)\n',
        # an argument, a keyword argument and a dict value, with a trailing comment
        'import torch\n\n\ndef build(model, options):\n    return torch.compile(model, mode="max-autotune", '
        "dynamic=False)  # compile it\n",
        'import torch\n\n\ndef build(model, options):\n    return torch.compile(model, options={"triton.cudagraphs": True, '
        '"max_autotune": True})\n',
        # a pragma comment does not count
        'import os\n\nimport torch\n\nos.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,max_split_size_mb:1")'
        "  # noqa: E501\n",
        # a with statement, a decorator
        "import torch\nimport torch._inductor.config as inductor_config\n\n\ndef f():\n    with inductor_config.patch("
        '{"triton.cudagraphs": True, "max_autotune": True}):\n        pass\n',
        'import torch\n\n\n@torch.compile(mode="reduce-overhead", fullgraph=True, dynamic=False)\ndef f(x):\n'
        "    return x\n",
    ],
)
def test_what_a_fix_makes_too_long_is_wrapped_as_ruff_format_would(tmp_path, source):
    """The project's line length is the source's longest line (formatted by ruff): each fix
    pushes a line past it, and the fixed file is what ruff format makes of it."""
    path = tmp_path / "m.py"
    path.write_text(source)
    subprocess.run(
        [RUFF, "format", "--no-cache", "--isolated", "--line-length", "200", str(path)], capture_output=True
    )
    source = path.read_text()
    limit = str(max(len(line) for line in source.splitlines()))
    (tmp_path / "ruff.toml").write_text(f"line-length = {limit}\n")
    fixed = _fixed(path)
    assert fixed != source
    out = tmp_path / "fixed.py"
    out.write_text(fixed)
    diff = subprocess.run(
        [RUFF, "format", "--no-cache", "--isolated", "--line-length", limit, "--diff", str(out)],
        capture_output=True,
        text=True,
    )
    assert diff.returncode == 0, fixed + diff.stdout
    assert any(line.endswith(("(", "[", "{")) for line in fixed.splitlines())  # a wrapped line


@pytest.mark.parametrize(
    "imports,expected",
    [
        ("from torch._inductor import config\n", "import torch\nfrom torch._inductor import config\n"),
        (
            "import os\n\nimport numpy as np\nfrom torch._inductor import config\n",
            "import numpy as np\nimport torch\nfrom torch._inductor import config\n",
        ),
        (
            "import torch.nn as nn\nfrom torch._inductor import config\n",
            "import torch\nimport torch.nn as nn\n",
        ),
        # isort's place is away from the torch import: right after it (never moved past other imports)
        (
            "import transformers\nfrom torch._inductor import config\n",
            "from torch._inductor import config\nimport torch\n",
        ),
        (
            "from accelerate import Accelerator\nfrom torch._inductor import config\n",
            "from torch._inductor import config\nimport torch\n",
        ),
    ],
)
def test_an_added_import_of_torch_goes_where_isort_puts_it_next_to_the_torch_import(imports, expected):
    from rocm_lint.fix.nvidia_path import check_nvidia_path

    source = imports + "\nconfig.triton.cudagraphs = True\n"
    fixed = _fixed_text(source)
    assert expected in fixed, fixed
    assert check_nvidia_path(source, fixed) is None


def test_the_checker_refuses_import_torch_before_other_imports():
    """Independent of where the fixer puts it: ``import torch`` before an import that is not
    torch's changes what is imported first."""
    from rocm_lint.fix.nvidia_path import check_nvidia_path

    source = "import transformers\nfrom torch._inductor import config\n\nconfig.triton.cudagraphs = True\n"
    moved = (
        "import torch\nimport transformers\nfrom torch._inductor import config\n\n"
        "is_rocm = torch.version.hip is not None\n\nif not is_rocm:\n    config.triton.cudagraphs = True\n"
    )
    assert "import of torch" in check_nvidia_path(source, moved)


def _fixed_text(source: str) -> str:
    from test_fixes import fixed_text

    return fixed_text(source).text


def test_a_guarded_import_is_set_off_from_the_imports_before_it(tmp_path):
    # (pynvml used inside a function: a use at import time gets no guard, ROC401)
    source = "import os\n\nimport pynvml\nimport torch\n\n\ndef f():\n    return os.sep, pynvml, torch\n"
    from test_fixes import fixed_text

    fixed = fixed_text(source, unsafe=True).text
    assert "import os\n\ntry:\n    import pynvml\n" in fixed, fixed


@pytest.mark.parametrize(
    "config",
    [
        "[tool.ruff.lint.isort]\nlines-after-imports = 2\n",
        "[tool.ruff.isort]\nlines-after-imports = 2\n",
        "[tool.isort]\nlines_after_imports = 2\n",
    ],
)
def test_the_projects_blank_lines_after_imports_are_kept(tmp_path, config):
    """diffusers sets ``lines-after-imports = 2``: with one blank line every fixed file failed I001."""
    (tmp_path / "pyproject.toml").write_text(config)
    path = tmp_path / "m.py"
    path.write_text("import torch\n\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    fixed = _fixed(path)
    assert fixed.startswith("import torch\n\n\nis_rocm = torch.version.hip is not None\n"), fixed
    if "ruff" in config:  # (isort's own setting is isort's: ruff does not read it)
        out = tmp_path / "fixed.py"
        out.write_text(fixed)
        check = subprocess.run(
            [RUFF, "check", "--no-cache", "--select", "I", str(out)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert check.returncode == 0, check.stdout


# -- issue 27: clean by the project's own settings, measured on real code -----------------------
def _ruff_new(
    tmp_path: Path, before: str, after: str, select: str, length: int, isolated: bool = True
) -> str:
    """ruff's findings (``select``) on ``after`` that ``before`` does not have, as text (with the
    project's config in ``tmp_path`` unless ``isolated``)."""
    out = {}
    for name, text in (("before.py", before), ("after.py", after)):
        (tmp_path / name).write_text(text)
        how = ["--isolated", "--line-length", str(length)] if isolated else []
        proc = subprocess.run(
            [RUFF, "check", "--no-cache", *how, "--select", select, "--output-format", "concise", name],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        out[name] = [line.split(": ", 1)[1] for line in proc.stdout.splitlines() if line.startswith(name)]
    return "\n".join(sorted(set(out["after.py"]) - set(out["before.py"])))


def test_the_flag_goes_after_the_whole_import_block(tmp_path):
    """pytorch/benchmark's shape: ``import torch`` followed by ``import torch._dynamo`` ..., a try
    of imports with an ``except ImportError`` of imports, then more imports: a flag right after
    ``import torch`` made every later import E402 and split isort's block (I001)."""
    source = (
        "from __future__ import annotations\n\nimport os\n\nimport torch\nimport torch._dynamo\n"
        "import torch._export\nfrom torch._dynamo.testing import same\n\ntry:\n"
        "    from torch._dynamo.utils import clone_inputs\nexcept ImportError:\n"
        "    from _dynamo.utils import clone_inputs\n\nimport torch._functorch.config\n"
        "from torch._inductor import config as inductor_config\n\ntry:\n    import torch_xla\n\n"
        "    torch_xla.init()\nexcept ImportError:\n    pass\n\n\nlog = os.getpid()\n\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\nprint(same, clone_inputs, inductor_config, log)\n"
    )
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "common.py"
    path.write_text(source)
    fixed = _fixed(path)
    assert (
        "from torch._inductor import config as inductor_config\n\nis_rocm = torch.version.hip is not None\n"
        "\ntry:\n    import torch_xla\n"
    ) in fixed, fixed
    assert not _ruff_new(tmp_path, source, fixed, "E402,I001", 88)


def test_a_try_of_imports_is_crossed_only_when_it_keeps_torch(tmp_path):
    source = (
        "import torch\n\ntry:\n    import apex\nexcept ImportError:\n    HAVE_APEX = False\n\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "m.py"
    path.write_text(source)
    fixed = _fixed(path)
    assert fixed.find("is_rocm = ") > fixed.find("HAVE_APEX = False"), fixed


@pytest.mark.parametrize(
    "tail,index",
    [
        ("try:\n    import apex\nexcept ImportError:\n    torch = None\n", 0),  # rebinds torch
        ("try:\n    import apex\nexcept ImportError as torch:\n    pass\n", 0),
        ("try:\n    import apex\n    apex.init()\nexcept ImportError:\n    pass\n", 0),  # code, not imports
        ("from numpy import torch\nimport os\n", 0),
        ("import numpy as torch\n", 0),
        ("import torch.nn\nimport torch as torch\nimport os\n", 3),  # the torch package again
        ("try:\n    import apex\nexcept ImportError:\n    apex = None\nimport os\n", 2),
    ],
)
def test_where_the_import_block_ends_for_the_flag(tail, index):
    import ast

    from rocm_lint.fix.format_place import flag_index

    body = ast.parse("import torch\n" + tail + "x = 1\n").body
    assert flag_index(body, 0, "torch") == index


def test_no_whitespace_only_line_in_a_merged_gate(tmp_path):
    """text-generation-inference's shape: two gated settings with a blank line and a comment
    between them share one block; the blank line stays empty (W293 otherwise)."""
    source = (
        "import torch\n\n\ndef setup():\n    x = 1\n    torch.backends.cuda.matmul.allow_tf32 = True\n\n"
        "    # cuDNN too\n    torch.backends.cudnn.allow_tf32 = True\n    return x\n\n\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n\n# and cuDNN\ntorch.backends.cudnn.allow_tf32 = True\n"
    )
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "m.py"
    path.write_text(source)
    fixed = _fixed(path)
    assert "        # cuDNN too\n" in fixed and "    # and cuDNN\n" in fixed, fixed  # merged
    assert not any(line and not line.strip() for line in fixed.splitlines()), repr(fixed)
    assert not _ruff_new(tmp_path, source, fixed, "W,E501,I001", 88)


def test_a_comment_a_merge_would_push_past_the_length_keeps_its_place(tmp_path):
    """ruff format does not wrap comments: a statement whose comment would run past the line
    length inside a merged gate gets its own gate, the comment above it."""
    comment = "# The flag below controls whether to allow TF32 on cuDNN. This flag defaults to True."
    assert len(comment) == 85
    source = f"import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n\n{comment}\ntorch.backends.cudnn.allow_tf32 = True\n"
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "m.py"
    path.write_text(source)
    fixed = _fixed(path)
    assert f"\n{comment}\nif not is_rocm:\n    torch.backends.cudnn.allow_tf32 = True\n" in fixed, fixed
    assert not _ruff_new(tmp_path, source, fixed, "W,E501,I001", 88)


VLLM = (
    "import torch\nfrom torch.nn.attention.flex_attention import create_block_mask, flex_attention\n\n"
    "create_block_mask_compiled = torch.compile(create_block_mask,\n"
    "                                           fullgraph=True,\n"
    '                                           mode="reduce-overhead")\n'
    "flex_attention_compiled = torch.compile(flex_attention, fullgraph=True)\n"
)


def test_a_multi_line_call_the_fix_pushes_past_the_length_is_wrapped_again(tmp_path):
    """ROCm vLLM's flex_attention.py (line-length 80): E501 92 > 80 after the fix; now the call is
    laid out again as ruff format lays it out."""
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 80\n")
    path = tmp_path / "flex_attention.py"
    path.write_text(VLLM)
    fixed = _fixed(path)
    assert (
        "create_block_mask_compiled = torch.compile(\n    create_block_mask,\n    fullgraph=True,\n"
        '    mode="default" if is_rocm else "reduce-overhead",\n)\n'
    ) in fixed, fixed
    assert not _ruff_new(tmp_path, VLLM, fixed, "E501,W,I001", 80)
    out = tmp_path / "fixed.py"
    out.write_text(fixed)
    diff = subprocess.run(
        [RUFF, "format", "--no-cache", "--isolated", "--line-length", "80", "--diff", str(out)],
        capture_output=True,
        text=True,
    )
    assert "mode=" not in diff.stdout, diff.stdout  # ruff format would not touch the wrapped call


@pytest.mark.parametrize(
    "inner",
    [
        "create_block_mask,  # the mask\n",  # a comment inside: joining would lose it
        "create_block_mask,\n",  # (control: no comment)
    ],
)
def test_a_multi_line_statement_with_a_comment_is_not_joined(tmp_path, inner):
    source = VLLM.replace("create_block_mask,\n", inner, 1)
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 80\n")
    path = tmp_path / "flex_attention.py"
    path.write_text(source)
    fixed = _fixed(path)
    assert ("# the mask" in inner) == ("torch.compile(create_block_mask,  # the mask\n" in fixed), fixed
    assert "# the mask" not in inner or "# the mask" in fixed


def test_a_tuple_value_is_split_as_ruff_splits_a_literal(tmp_path):
    """pytorch/benchmark: a gated ``x = (False, False)`` (ROC102's tuple form, no longer gated: a
    ROC104 setting of the same shape stands in) pushed past 88 became ``(\\n(False, False)\\n)``;
    ruff format splits a literal of several items one per line."""
    source = (
        "import torch\n\n\ndef f():\n"
        "    torch.backends.cuda.cufft_plan_cache[0].max_size = (40960000000000, 4096000000000)\n"
    )
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 88\n")
    path = tmp_path / "m.py"
    path.write_text(source)
    fixed = _fixed(path)
    assert "= (\n            40960000000000,\n            4096000000000,\n        )\n" in fixed, fixed
    out = tmp_path / "fixed.py"
    out.write_text(fixed)
    diff = subprocess.run(
        [RUFF, "format", "--no-cache", "--isolated", "--diff", str(out)], capture_output=True, text=True
    )
    assert diff.returncode == 0, diff.stdout


@pytest.mark.parametrize(
    "files,length",
    [
        (
            {
                "pyproject.toml": "[tool.ruff]\nline-length = 100\n",
                "sub/ruff.toml": 'extend = "../pyproject.toml"\n',
            },
            100,
        ),
        (
            {
                "base.toml": "line-length = 72\n",
                "sub/.ruff.toml": 'extend = "../base.toml"\n[lint]\nselect = ["E"]\n',
            },
            72,
        ),
        (
            {
                "pyproject.toml": "[tool.ruff]\nline-length = 100\n",
                "sub/ruff.toml": 'extend = "../pyproject.toml"\nline-length = 90\n',
            },
            90,
        ),  # its own value first
        ({"sub/ruff.toml": 'extend = "missing.toml"\n'}, 88),
        ({"sub/ruff.toml": 'extend = "ruff.toml"\n'}, 88),  # a cycle ends
    ],
)
def test_ruff_extend_is_followed_for_the_line_length(tmp_path, files, length):
    from rocm_lint.fix.format_config import project_style

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert project_style(str(tmp_path / "sub" / "m.py")).line_length == length


@pytest.mark.parametrize(
    "name,config,within",
    [
        ("pyproject.toml", "[tool.ruff.lint.isort]\nforce-sort-within-sections = true\n", True),
        ("pyproject.toml", '[tool.isort]\nprofile = "google"\n', True),
        ("pyproject.toml", '[tool.isort]\nprofile = "black"\n', False),
        (".isort.cfg", "[settings]\nforce_sort_within_sections = True\n", True),
        ("setup.cfg", "[isort]\nforce_sort_within_sections = true\n", True),
        ("setup.cfg", "[isort]\nprofile = black\n", False),
    ],
)
def test_isort_sorting_within_sections_decides_where_import_torch_goes(tmp_path, name, config, within):
    """With plain and ``from`` imports sorted together by module, ``import torch`` goes right
    before ``from torch... import`` even after ``from accelerate import ...``."""
    (tmp_path / name).write_text(config)
    path = tmp_path / "m.py"
    source = "from accelerate import Accelerator\nfrom torch._inductor import config\n\nconfig.triton.cudagraphs = True\n"
    path.write_text(source)
    fixed = _fixed(path)
    together = "from accelerate import Accelerator\nimport torch\nfrom torch._inductor import config\n"
    assert (together in fixed) == within, fixed
    if "ruff" in config:
        assert not _ruff_new(tmp_path, source, fixed, "I001", 88, isolated=False)


@pytest.mark.parametrize(
    "header,expected",
    [
        # pytorch/benchmark's shape: a test over several lines (a magic trailing comma), two settings
        (
            '    if args.only is not None and args.only in {\n        "nvidia_deeprecommender",\n    }:\n',
            '    if (\n        args.only is not None\n        and args.only\n        in {\n            "nvidia_deeprecommender",\n'
            "        }\n        and not is_rocm\n    ):\n",
        ),
        ("    if args.only:\n", "    if args.only and not is_rocm:\n"),
        ("    if args.only or args.all:\n", "    if (args.only or args.all) and not is_rocm:\n"),
    ],
)
def test_a_gate_that_is_a_whole_if_body_joins_its_test(tmp_path, header, expected):
    """ruff's SIM102 (collapsible if, in its default rules): ``if x:`` holding only
    ``if not is_rocm:`` becomes one ``if x and not is_rocm:`` (the same program: no else, the test
    evaluated once), laid out as ruff format lays it out."""
    source = (
        "import torch\n\n\ndef f(args):\n" + header + "        # unhappy with a larger cuBLASLt workspace\n"
        "        torch.backends.cuda.matmul.allow_tf32 = True\n"
        "        torch.backends.cudnn.allow_tf32 = True\n"
    )
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "m.py"
    path.write_text(source)
    fixed = _fixed(path)
    assert expected + "        # unhappy" in fixed, fixed
    assert not _ruff_new(tmp_path, source, fixed, "SIM102,E501,W,I001", 88)
    out = tmp_path / "fixed.py"
    out.write_text(fixed)
    diff = subprocess.run(
        [RUFF, "format", "--no-cache", "--isolated", "--diff", str(out)], capture_output=True, text=True
    )
    assert diff.returncode == 0, diff.stdout


@pytest.mark.parametrize(
    "source",
    [
        "import torch\n\n\ndef f(a):\n    if a:\n        torch.backends.cudnn.allow_tf32 = True\n    else:\n        pass\n",
        "import torch\n\n\ndef f(a):\n    if a:\n        pass\n    elif a > 1:\n        torch.backends.cudnn.allow_tf32 = True\n",
        "import torch\n\n\ndef f(a):\n    if a:\n        torch.backends.cudnn.allow_tf32 = True\n        print(a)\n",
    ],
)
def test_a_gate_stays_nested_where_joining_would_change_the_rocm_side(tmp_path, source):
    """An ``else``, an ``elif`` (a false joined test would fall through to the next branch on
    ROCm) or another statement in the body: the gate stays inside."""
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "m.py"
    path.write_text(source)
    fixed = _fixed(path)
    assert "        if not is_rocm:\n            torch.backends.cudnn.allow_tf32 = True\n" in fixed, fixed
