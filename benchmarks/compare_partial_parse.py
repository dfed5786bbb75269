"""Compare the partial parse with the whole parse on real trees (issue #28).

    PYTHONPATH=src python benchmarks/compare_partial_parse.py TREE [TREE ...] [--mode always|auto]

Each Python file and notebook of each tree is checked twice in this process, every rule
selected (ROC001 too): once parsed whole (``ROCM_LINT_WHOLE_PARSE=1``) and once cut
(``ROCM_LINT_PARTIAL_PARSE=always``: every block that can be blanked is, whatever its share;
``--mode auto``: as a plain run decides).  Prints per tree the files checked, the files
checked from a cut text, the share of their text that was kept, and whether the findings
(and error lines) are byte-identical; exits 1 on any difference.
"""

import argparse
import os
import sys
import time

from rocm_lint import engine
from rocm_lint.config import Config
from rocm_lint.discovery import language_of
from rocm_lint.python import partial
from rocm_lint.workspace import Workspace

CONFIG = Config(extend_select=("ROC001",))


def _files(tree: str):
    for d, dirs, fs in os.walk(tree):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in sorted(fs):
            path = os.path.join(d, f)
            if language_of(path) in ("python", "notebook"):
                yield path


def _run(paths, mode: str):
    os.environ.pop(partial.ENV_WHOLE, None)
    os.environ.pop(partial.ENV_ALWAYS, None)
    if mode == "whole":
        os.environ[partial.ENV_WHOLE] = "1"
    elif mode == "always":
        os.environ[partial.ENV_ALWAYS] = "always"
    ws = Workspace()
    out, cpu = {}, time.process_time()
    for path in paths:
        result = engine.check_file(path, CONFIG, workspace=ws)
        out[path] = [str(f) for f in result] if isinstance(result, list) else ["error: " + str(result)]
    return out, time.process_time() - cpu


def _cut_share(paths, mode: str):
    """How many files a run in ``mode`` checks from a cut text, and the kept share of their text."""
    plans = []
    real = partial.plan

    def spy(text, *a, **k):
        p = real(text, *a, **k)
        if p is not None:
            plans.append((p.kept_chars, len(text)))
        return p

    partial.plan = spy
    try:
        _run(paths, mode)
    finally:
        partial.plan = real
    return len(plans), (sum(k for k, _ in plans) / max(1, sum(n for _, n in plans)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+")
    parser.add_argument("--mode", choices=("always", "auto"), default="always")
    args = parser.parse_args()
    differ = 0
    for tree in args.trees:
        paths = list(_files(tree))
        whole, t_whole = _run(paths, "whole")
        cut, t_cut = _run(paths, args.mode)
        bad = [p for p in paths if whole[p] != cut[p]]
        n_cut, share = _cut_share(paths, args.mode)
        findings = sum(len(v) for v in whole.values())
        print(
            f"{tree}: {len(paths)} files, {findings} findings; {n_cut} checked from a cut text "
            f"(kept {share:.0%} of their text); CPU whole {t_whole:.1f} s, {args.mode} {t_cut:.1f} s; "
            + ("identical" if not bad else f"DIFFERENT in {len(bad)} files"),
            flush=True,
        )
        for p in bad[:10]:
            print("  ", p, sorted(set(whole[p]) ^ set(cut[p]))[:6])
        differ += len(bad)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
