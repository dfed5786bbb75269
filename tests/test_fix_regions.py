"""The NVIDIA-path check folds only the top-level statements a fix changed, analysed in the whole
module (docs/fixes.md, "Only what changed is folded"): wrong fixes whose damage lies outside the
changed statements, or in how they sit among the unchanged ones, are still refused."""

import textwrap

import pytest

from rocm_lint.fix.nvidia_path import changed_regions, check_nvidia_path

ORIGINAL = textwrap.dedent("""\
    import torch


    def setup():
        torch.backends.cuda.matmul.allow_tf32 = True


    def other():
        return 1


    setup()
    print(other())
""")

GOOD = textwrap.dedent("""\
    import torch

    is_rocm = torch.version.hip is not None


    def setup():
        if not is_rocm:
            torch.backends.cuda.matmul.allow_tf32 = True


    def other():
        return 1


    setup()
    print(other())
""")


def test_the_right_fix_passes_and_only_its_statements_are_compared():
    import ast

    assert check_nvidia_path(ORIGINAL, GOOD) is None
    regions = changed_regions(ast.parse(ORIGINAL), ast.parse(GOOD))
    # the flag's insertion and the gated function; `other` and the calls are not folded
    assert [(i1, i2, j1, j2) for i1, i2, j1, j2 in regions] == [(1, 2, 1, 3)]


BAD = {
    # the flag bound after the call that reads it: NameError on NVIDIA
    "flag bound after its first use": GOOD.replace("is_rocm = torch.version.hip is not None\n", "")
    + "is_rocm = torch.version.hip is not None\n",
    # two unchanged statements swapped: every statement is the original's, the order is not
    "unchanged statements reordered": ORIGINAL.replace("setup()\nprint(other())", "print(other())\nsetup()"),
    # a statement removed far from the fix
    "an unrelated statement dropped": GOOD.replace("print(other())\n", ""),
    # the flag rebinds a name an unchanged function reads
    "the flag shadows a name the module reads": ORIGINAL.replace("return 1", "return is_rocm")
    .replace("import torch\n", "import torch\nis_rocm = torch.version.hip is not None\n", 1),
    # the gate tests the wrong way round
    "the gate inverted": GOOD.replace("if not is_rocm:", "if is_rocm:"),
    # two changes far apart, the second one wrong
    "a second change elsewhere": GOOD.replace("return 1", "return 2"),
    # an inserted import of torch rebinds a name the module already uses
    "torch rebound by an inserted import": ORIGINAL.replace("import torch\n", "import torch as torch_\ntorch = 1\n")
    .replace("print(other())", "print(other(), torch)"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_wrong_fix_is_still_refused(name):
    original = ORIGINAL
    fixed = BAD[name]
    if name == "the flag shadows a name the module reads":
        original = ORIGINAL.replace("return 1", "return is_rocm").replace(
            "import torch\n", "import torch\nis_rocm = 0\n", 1)
    if name == "torch rebound by an inserted import":
        original, fixed = fixed, fixed.replace("torch = 1\n", "torch = 1\nimport torch\n")
    assert check_nvidia_path(original, fixed) is not None


def test_far_apart_changes_are_each_compared():
    import ast

    far = ORIGINAL + "".join(f"x{i} = {i}\n" for i in range(50)) + "torch.backends.cudnn.allow_tf32 = True\n"
    fixed = GOOD + "".join(f"x{i} = {i}\n" for i in range(50)) + \
        "if not is_rocm:\n    torch.backends.cudnn.allow_tf32 = True\n"
    assert len(changed_regions(ast.parse(far), ast.parse(fixed))) == 2
    assert check_nvidia_path(far, fixed) is None
    assert check_nvidia_path(far, fixed.replace("x7 = 7", "x7 = 8")) is not None
    assert check_nvidia_path(far, fixed.replace("if not is_rocm:\n    torch.backends.cudnn",
                                                "if is_rocm:\n    torch.backends.cudnn")) is not None
