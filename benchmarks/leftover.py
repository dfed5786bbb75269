"""What is left: where a one-process ``rocm-lint check`` spends its CPU, by phase.

``make bench`` prints this under a goal it does not meet (issue #28: "for any goal not met, print
the profile of what is left and the design that would meet it").  The run is
``rocm-lint check --no-cache -j 1`` under cProfile in a fresh process (the default jobs would
hide the workers' time); each function's own time (cProfile's ``tottime``) goes to the phase of
the module that defines it, and a built-in's or a library's (``ast.walk``, ``re``) goes to the phases
of its callers, in proportion (``compile`` is ``ast.parse``, a phase of its own).  The
shares are of the profiled run; cProfile inflates Python-heavy phases (a call costs more under
the profiler), so read them as a ranking, not as seconds.

``profile_checks`` profiles ``engine.check_source`` in this process with one long-lived
``Workspace`` instead (the C++ corpus, an editor's keystroke check).

Usage: python benchmarks/leftover.py TREE [--other N] [--select CODES]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

DESIGN = 'docs/benchmarks.md, section "What is left of issue #28, and the designs that would meet it"'

# (phase, substrings of a module path under rocm_lint/ or of a built-in's name); first match wins
PHASES: List[Tuple[str, Tuple[str, ...]]] = [
    ("ast.parse (CPython's parser)", ("builtins.compile",)),
    ("partial parse: picking statements", ("python/partial",)),
    ("trigger search (words, Aho-Corasick)", ("rocm_lint/words", "ahocorasick")),
    ("project model (cross-module facts)", ("python/project",)),
    (
        "module context (imports, bindings, predicates)",
        ("python/context", "python/predicates", "python/names", "python/source_view"),
    ),
    (
        "gated walk (analyser, gates)",
        ("python/analyzer", "python/gates", "python/gate_control", "python/patterns"),
    ),
    ("rules' checkers", ("rocm_lint/rules/",)),
    ("C++ lexer", ("cpp/lexer",)),
    ("C++ #if model", ("cpp/preproc", "cpp/conditions", "cpp/nvidia_view")),
    ("C++ headers (includes, facts, vocabulary)", ("cpp/includes", "cpp/facts", "cpp/vocabulary")),
    ("C++ scanner, other (unit, gates, functions, logical warps)", ("rocm_lint/cpp/",)),
    ("build context (CMake, setup.py)", ("rocm_lint/build/",)),
    ("config files", ("rocm_lint/configfiles/",)),
    ("suppressions (noqa)", ("rocm_lint/noqa", "tokenize")),
    (
        "discovery, reading, decoding",
        (
            "rocm_lint/discovery",
            "pathspec",
            "posix.",
            "io.open",
            "_io.",
            "codecs",
            "method 'decode'",
            "method 'read'",
        ),
    ),
    (
        "engine, cache, report",
        (
            "rocm_lint/engine",
            "rocm_lint/cache",
            "rocm_lint/cli",
            "rocm_lint/finding",
            "rocm_lint/output",
            "rocm_lint/workspace",
        ),
    ),
    (
        "start-up (imports, pattern compiles, dataclass creation)",
        (
            "importlib",
            "<frozen",
            "marshal",
            "re/_parser",
            "re/_compiler",
            "re/__init__.py:_compile",
            "dataclasses.py",
            "sre_",
        ),
    ),
]


def profile_checks(
    paths: List[str], repeat: int = 1, texts: Dict[str, str] = None, warm: bool = True
) -> Dict[str, float]:
    """Seconds of own time per phase of ``engine.check_source`` on ``paths`` in this process,
    ``repeat`` times with one long-lived ``Workspace`` (as the language server or a CLI worker
    checks: start-up and discovery are not in it).  ``texts``: a text per path instead of the
    file's (an editor's buffer).  ``warm``: check each once before profiling (what the files
    import is read then); without, the profile is of the first checks (a CLI run's: the C++
    scanner keeps what it learned of a text, so a second check of it costs less)."""
    from rocm_lint.config import Config
    from rocm_lint.engine import check_source
    from rocm_lint.workspace import Workspace

    ws, config = Workspace(), Config()
    sources = [(p, (texts or {}).get(p) or open(p, encoding="utf-8", errors="replace").read()) for p in paths]
    for path, text in sources if warm else ():  # the first check reads what the file imports
        check_source(path, text, config, workspace=ws)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(repeat):
        for path, text in sources:
            check_source(path, text, config, workspace=ws)
    prof.disable()
    with tempfile.TemporaryDirectory(prefix="rocm-lint-leftover-") as tmp:
        out = os.path.join(tmp, "prof")
        prof.dump_stats(out)
        return _phases(pstats.Stats(out, stream=io.StringIO()), None)


def _phase(where: str) -> str:
    for name, keys in PHASES:
        if any(k in where for k in keys):
            return name
    return "other"


def profile(tree: str, extra: List[str], unplaced: Dict[str, float] = None) -> Dict[str, float]:
    """Seconds of own time per phase of ``rocm-lint check --no-cache -j 1 TREE``."""
    with tempfile.TemporaryDirectory(prefix="rocm-lint-leftover-") as tmp:
        out = os.path.join(tmp, "prof")
        argv = [
            "check",
            "--no-cache",
            "-j",
            "1",
            "--quiet",
            "--exit-zero",
            "--output-format",
            "concise",
            *extra,
            tree,
        ]
        code = (
            "import cProfile, sys\nfrom rocm_lint.cli import main\n"
            "prof = cProfile.Profile()\nprof.runcall(main, sys.argv[2:])\nprof.dump_stats(sys.argv[1])\n"
        )
        subprocess.run([sys.executable, "-c", code, out, *argv], stdout=subprocess.DEVNULL, check=True)
        stats = pstats.Stats(out, stream=io.StringIO())
    return _phases(stats, unplaced)


def _phases(stats: "pstats.Stats", unplaced: Dict[str, float] = None) -> Dict[str, float]:
    phases: Dict[str, float] = {}
    table = stats.stats  # type: ignore[attr-defined]

    def where_of(key) -> str:
        filename, _line, func = key
        return f"{filename.replace(os.sep, '/')}:{func}" if filename != "~" else func

    def credit(key, seconds: float, depth: int = 0) -> None:
        """Own time of a phase's function goes to its phase; a built-in's or a helper library's
        (``ast.walk``, ``re``) to the phases of its callers, in proportion to what each caused."""
        where = where_of(key)
        phase = _phase(where)
        if phase == "other" and depth < 4 and key in table:
            callers = table[key][4]
            caused = sum(v[2] for v in callers.values()) or 0.0
            if caused > 0:
                for caller, v in callers.items():
                    credit(caller, seconds * v[2] / caused, depth + 1)
                return
        phases[phase] = phases.get(phase, 0.0) + seconds
        if phase == "other" and unplaced is not None:
            unplaced[where] = unplaced.get(where, 0.0) + seconds

    for key, (_cc, _nc, tottime, _ct, _callers) in table.items():
        credit(key, tottime)
    return phases


def render(phases: Dict[str, float], indent: str = "    ") -> List[str]:
    total = sum(phases.values()) or 1.0
    lines = [f"{indent}{'phase (own CPU time under cProfile, one process)':<60} {'s':>6} {'share':>6}"]
    for name, seconds in sorted(phases.items(), key=lambda kv: -kv[1]):
        if seconds / total >= 0.005:
            lines.append(f"{indent}{name:<60} {seconds:6.2f} {seconds / total:6.1%}")
    lines.append(f"{indent}{'total':<60} {total:6.2f}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("--select", help="rule codes, as rocm-lint's --select")
    ap.add_argument("--other", type=int, default=0, help="list the N largest functions no phase claims")
    args = ap.parse_args()
    extra = ["--select", args.select] if args.select else []
    unplaced: Dict[str, float] = {}
    print("\n".join(render(profile(args.tree, extra, unplaced))))
    for where, seconds in sorted(unplaced.items(), key=lambda kv: -kv[1])[: args.other]:
        print(f"      other: {seconds:6.3f} s  {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
