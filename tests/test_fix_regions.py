"""The NVIDIA-path check folds only the top-level statements a fix changed, analysed in the whole
module (docs/fixes.md, "Only what changed is folded"): wrong fixes whose damage lies outside the
changed statements, or in how they sit among the unchanged ones, are still refused."""

import textwrap

import pytest

from rocm_lint.fix.nvidia_path import check_nvidia_path
from rocm_lint.fix.nvidia_regions import changed_regions

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
    # the flag's insertion, and inside `setup` (same signature) the gated statement; `other`
    # and the calls are not folded
    shapes = [([type(s).__name__ for s in old], [type(s).__name__ for s in new]) for old, new in regions]
    assert shapes == [([], ["Assign"]), (["Assign"], ["If"])]
    # told apart by their text (what check_nvidia_path does), the same regions
    by_text = changed_regions(ast.parse(ORIGINAL), ast.parse(GOOD), ORIGINAL, GOOD)
    assert [
        ([type(s).__name__ for s in old], [type(s).__name__ for s in new]) for old, new in by_text
    ] == shapes
    # a different __future__ import set: statements are compared by their ASTs
    future = "from __future__ import annotations\n"
    assert len(changed_regions(ast.parse(ORIGINAL), ast.parse(future + GOOD), ORIGINAL, future + GOOD)) >= 2


BAD = {
    # the flag bound after the call that reads it: NameError on NVIDIA
    "flag bound after its first use": GOOD.replace("is_rocm = torch.version.hip is not None\n", "")
    + "is_rocm = torch.version.hip is not None\n",
    # two unchanged statements swapped: every statement is the original's, the order is not
    "unchanged statements reordered": ORIGINAL.replace("setup()\nprint(other())", "print(other())\nsetup()"),
    # a statement removed far from the fix
    "an unrelated statement dropped": GOOD.replace("print(other())\n", ""),
    # the flag rebinds a name an unchanged function reads
    "the flag shadows a name the module reads": ORIGINAL.replace("return 1", "return is_rocm").replace(
        "import torch\n", "import torch\nis_rocm = torch.version.hip is not None\n", 1
    ),
    # the gate tests the wrong way round
    "the gate inverted": GOOD.replace("if not is_rocm:", "if is_rocm:"),
    # two changes far apart, the second one wrong
    "a second change elsewhere": GOOD.replace("return 1", "return 2"),
    # an inserted import of torch rebinds a name the module already uses
    "torch rebound by an inserted import": ORIGINAL.replace(
        "import torch\n", "import torch as torch_\ntorch = 1\n"
    ).replace("print(other())", "print(other(), torch)"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_wrong_fix_is_still_refused(name):
    original = ORIGINAL
    fixed = BAD[name]
    if name == "the flag shadows a name the module reads":
        original = ORIGINAL.replace("return 1", "return is_rocm").replace(
            "import torch\n", "import torch\nis_rocm = 0\n", 1
        )
    if name == "torch rebound by an inserted import":
        original, fixed = fixed, fixed.replace("torch = 1\n", "torch = 1\nimport torch\n")
    assert check_nvidia_path(original, fixed) is not None


def test_far_apart_changes_are_each_compared():
    import ast

    far = ORIGINAL + "".join(f"x{i} = {i}\n" for i in range(50)) + "torch.backends.cudnn.allow_tf32 = True\n"
    fixed = (
        GOOD
        + "".join(f"x{i} = {i}\n" for i in range(50))
        + "if not is_rocm:\n    torch.backends.cudnn.allow_tf32 = True\n"
    )
    assert len(changed_regions(ast.parse(far), ast.parse(fixed))) == 3
    assert check_nvidia_path(far, fixed) is None
    assert check_nvidia_path(far, fixed.replace("x7 = 7", "x7 = 8")) is not None
    assert (
        check_nvidia_path(
            far,
            fixed.replace(
                "if not is_rocm:\n    torch.backends.cudnn", "if is_rocm:\n    torch.backends.cudnn"
            ),
        )
        is not None
    )


def test_blocks_of_a_statement_with_the_same_header_are_compared_one_by_one():
    import ast

    original = textwrap.dedent("""\
        import torch


        def main(args):
            x = 1
            try:
                torch.backends.cuda.matmul.allow_tf32 = True
            except ValueError as e:
                print(e)
            for i in range(3):
                pass
            else:
                torch.backends.cudnn.allow_tf32 = True
            return x
    """)
    fixed = (
        original.replace("import torch\n", "import torch\n\nis_rocm = torch.version.hip is not None\n")
        .replace(
            "        torch.backends.cuda.matmul.allow_tf32 = True",
            "        if not is_rocm:\n            torch.backends.cuda.matmul.allow_tf32 = True",
        )
        .replace(
            "    else:\n        torch.backends.cudnn.allow_tf32 = True",
            "    else:\n        if not is_rocm:\n            torch.backends.cudnn.allow_tf32 = True",
        )
    )
    regions = changed_regions(ast.parse(original), ast.parse(fixed))
    assert [len(old) for old, _ in regions] == [0, 1, 1]  # the flag, then one statement per block
    assert check_nvidia_path(original, fixed) is None
    for wrong in (
        fixed.replace("except ValueError as e", "except TypeError as e"),
        fixed.replace("def main(args)", "def main(args, y=0)"),
        fixed.replace("    x = 1\n", "    x = 2\n"),
        fixed.replace(
            "        if not is_rocm:\n            torch.backends.cudnn",
            "        if is_rocm:\n            torch.backends.cudnn",
        ),
        fixed.replace("    return x", "    return is_rocm"),
    ):
        assert wrong != fixed
        assert check_nvidia_path(original, wrong) is not None
