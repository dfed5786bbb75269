r"""Every regular expression of rocm-lint, run on adversarial inputs (a helper of
``tests/test_regex_scaling.py``; run as a script it prints the slowest input of each pattern).

A pattern is found two ways: compiled patterns anywhere in a module's globals (and in tuples,
lists and dicts there), and string literals handed to ``re.compile/search/match/fullmatch/
sub/subn/split/findall/finditer`` in the source (inline patterns).  Inputs are built from the
pattern itself: long runs of each character its repeats accept, after each literal prefix it
holds, ending with an unterminated quote, a backslash or a character nothing accepts.

No time ratio (a busy machine stalls one run and fakes one): a hang guard on CPU time, with
margins wide enough that load cannot fail a linear pattern and a super-linear one cannot pass.
Every input is screened once at ``SCREEN`` characters; the slowest one per pattern is built again
at ``BIG`` characters and must finish within ``BOUND`` seconds of CPU time.  The arithmetic: the
slowest linear pattern of the package takes ~0.1 s at 200,000 characters (the C preprocessor's
token pattern; most take a few ms), 50x under the bound; a quadratic one scans on from every
start position, n**2 / 2 steps at >= ~1.3 ns each (the cheapest loop of the re module, ``a*b`` on
a run of ``a``; ``\w+x`` costs 4.7 ns, ``(?:ab|a)*c`` 28 ns), >= 1.3e-9 * 2e5**2 / 2 = ~26 s,
5x over it; an exponential one never finishes and is interrupted at the bound (the re module
checks for signals while it backtracks).  In the screen, 3,000 characters, a quadratic input
costs >= ~6 ms and the slowest linear input of any pattern ~3 ms (the C++ lexer's token
pattern), so a quadratic input is the one chosen (CPU time of the thread: a stall on a busy
machine does not change the choice); a pattern whose screen alone passes
``SCREEN_BOUND`` fails as well.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

try:  # Python 3.11+
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore[no-redef]

import rocm_lint
from work_count import cpu_limit

RE_FUNCS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}
SRC = Path(rocm_lint.__file__).parent


def _walk_values(value, depth: int = 0) -> Iterator["re.Pattern"]:
    if isinstance(value, re.Pattern):
        yield value
    elif depth < 3 and isinstance(value, (tuple, list, frozenset, set)):
        for v in value:
            yield from _walk_values(v, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for v in value.values():
            yield from _walk_values(v, depth + 1)


def _flags(node: ast.AST) -> int:
    """re.I | re.M ... as written, when they are plain ``re.X`` names."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        return int(getattr(re, node.attr, 0))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flags(node.left) | _flags(node.right)
    return 0


def inline_patterns(path: Path) -> Iterator[Tuple[str, int, int, str]]:
    """(pattern, flags, line, re function) of each literal pattern handed to an ``re`` function."""
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr in RE_FUNCS
            and node.args
        ):
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, (str, bytes))):
            continue
        flags = 0
        for kw in node.keywords:
            if kw.arg == "flags":
                flags = _flags(kw.value)
        positional_flags = {
            "compile": 1,
            "search": 2,
            "match": 2,
            "fullmatch": 2,
            "findall": 2,
            "finditer": 2,
            "split": 3,
            "sub": 4,
            "subn": 4,
        }[node.func.attr]
        if len(node.args) > positional_flags:
            flags |= _flags(node.args[positional_flags])
        yield first.value, flags, node.lineno, node.func.attr


_SOURCES: Dict[str, str] = {}


def anchored_only(name: str) -> bool:
    """Is the module-level pattern ``name`` only ever used with ``.match``/``.fullmatch`` (so it is
    tried at given positions, never searched from every position)?"""
    if not _SOURCES:
        _SOURCES.update({str(p): p.read_text("utf-8") for p in SRC.rglob("*.py")})
    uses = [
        m
        for text in _SOURCES.values()
        for m in re.finditer(r"(?<![\w.])%s\b(?!\s*=[^=])(\.\w+)?" % re.escape(name), text)
    ]
    return bool(uses) and all(m.group(1) in (".match", ".fullmatch") for m in uses)


def all_patterns() -> Dict[str, "re.Pattern"]:
    """Every pattern of the package, by where it lives (``module:NAME`` or ``file:line``); the
    key ends in ``:match`` when the pattern is only matched at positions, never searched."""
    found: Dict[str, re.Pattern] = {}
    seen: Set[Tuple[object, int]] = set()
    for info in pkgutil.walk_packages(rocm_lint.__path__, "rocm_lint."):
        if info.name.endswith(("__main__", ".server")):
            continue  # the language server needs pygls; its patterns are found inline below
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for name, value in vars(module).items():
            for pattern in _walk_values(value):
                key = (pattern.pattern, pattern.flags)
                if key not in seen:
                    seen.add(key)
                    found[f"{info.name}:{name}" + (":match" if anchored_only(name) else "")] = pattern
    for path in sorted(SRC.rglob("*.py")):
        for text, flags, line, how in inline_patterns(path):
            try:
                pattern = re.compile(text, flags)
            except re.error:
                continue
            key = (pattern.pattern, pattern.flags)
            if key not in seen:
                seen.add(key)
                found[
                    f"{path.relative_to(SRC.parent)}:{line}"
                    + (":match" if how in ("match", "fullmatch") else "")
                ] = pattern
    return found


# -- inputs built from a pattern ----------------------------------------------------------------
_SAMPLES = "a Z_0 9-.:/\\\"'`$#()[]{}<>=,;|&*+?!@%^~\t\n\r\f\u00e9\u2028"


def _accepts(items, category: str) -> List[str]:
    """Characters that one IN / ANY / LITERAL item of a parsed pattern accepts."""
    out: List[str] = []
    if category == "LITERAL":
        out.append(chr(items))
    elif category == "ANY":
        out.extend('a \\"')
    elif category == "IN":
        try:
            test = re.compile(_unparse_in(items))
        except (re.error, ValueError):
            return list("a0 _")
        out.extend(c for c in _SAMPLES if test.fullmatch(c))
        if not out:
            out.append("a")
    return out


def _unparse_in(items) -> str:
    """An IN node back as a character class (good enough to test single characters)."""
    parts = []
    negate = False
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            parts.append(re.escape(chr(av)))
        elif name == "RANGE":
            parts.append(f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}")
        elif name == "CATEGORY":
            parts.append(
                {
                    "CATEGORY_DIGIT": r"\d",
                    "CATEGORY_NOT_DIGIT": r"\D",
                    "CATEGORY_SPACE": r"\s",
                    "CATEGORY_NOT_SPACE": r"\S",
                    "CATEGORY_WORD": r"\w",
                    "CATEGORY_NOT_WORD": r"\W",
                }.get(str(av), r"\w")
            )
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


def _repeat_chars(parsed, out: Set[str]) -> None:
    """Characters accepted at the start of every repeated sub-pattern (what a long run is of)."""
    for op, av in parsed:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            _first_chars(sub, out)
            _repeat_chars(sub, out)
        elif name == "SUBPATTERN":
            _repeat_chars(av[-1], out)
        elif name == "BRANCH":
            for alt in av[1]:
                _repeat_chars(alt, out)
        elif name in ("ASSERT", "ASSERT_NOT"):
            _repeat_chars(av[1], out)
        elif name == "ATOMIC_GROUP":
            _repeat_chars(av, out)


def _first_chars(parsed, out: Set[str]) -> None:
    for op, av in parsed:
        name = str(op)
        if name in ("LITERAL", "ANY", "IN"):
            out.update(_accepts(av, name))
        elif name == "NOT_LITERAL":
            out.update(c for c in 'a \\"' if ord(c) != av)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _first_chars(av[2], out)
            if av[0] > 0:
                return
            continue
        elif name == "SUBPATTERN":
            _first_chars(av[-1], out)
        elif name == "BRANCH":
            for alt in av[1]:
                _first_chars(alt, out)
        elif name == "ATOMIC_GROUP":
            _first_chars(av, out)
        elif name in ("AT", "ASSERT", "ASSERT_NOT", "GROUPREF"):
            continue
        else:
            continue
        return


def _literal_runs(parsed, out: Set[str]) -> None:
    """The literal strings a pattern spells out (prefixes that lead into its repeats)."""
    run = ""
    for op, av in parsed:
        name = str(op)
        if name == "LITERAL":
            run += chr(av)
            continue
        if run:
            out.add(run)
            run = ""
        if name == "SUBPATTERN":
            _literal_runs(av[-1], out)
        elif name == "BRANCH":
            for alt in av[1]:
                _literal_runs(alt, out)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _literal_runs(av[2], out)
    if run:
        out.add(run)


def input_makers(pattern: "re.Pattern") -> Iterator[Tuple[str, Callable[[int], object]]]:
    """(label, size -> input of about ``size`` characters) pairs that make a backtracking regex slow."""
    if isinstance(pattern.pattern, bytes):  # the same inputs, as bytes
        as_text = re.compile(pattern.pattern.decode("latin-1"), pattern.flags & (re.I | re.M | re.S | re.X))
        for label, make in input_makers(as_text):
            yield label, lambda size, make=make: make(size).encode("latin-1", errors="replace")
        return
    parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    chars: Set[str] = set()
    _repeat_chars(parsed, chars)
    prefixes: Set[str] = {""}
    _literal_runs(parsed, prefixes)
    prefixes = set(sorted({p[:8] for p in prefixes if len(p) <= 40}, key=lambda p: (len(p), p))[:8])
    tails = ["", "\\", '"', "\x00"]
    for c in sorted(chars):
        for p in sorted(prefixes):
            for t in tails:
                yield f"{p!r}+{c!r}*n+{t!r}", lambda size, p=p, c=c, t=t: p + c * size + t
    # pairs of repeat characters alternating (a(ba)* style ambiguity), and prefix repeated
    ordered = sorted(chars)[:12]
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            yield f"({a!r}{b!r})*n", lambda size, ab=a + b: ab * (size // 2) + "\\"
    for p in sorted(prefixes):
        if p:
            yield f"({p!r})*n", lambda size, p=p: p * max(1, size // len(p)) + "\\"
            yield f"({p!r}+' ')*n", lambda size, p=p: (p + " ") * max(1, size // (len(p) + 1)) + "\\"


def adversarial_inputs(pattern: "re.Pattern", size: int) -> Iterator[Tuple[str, object]]:
    """(label, input of about ``size`` characters) pairs that make a backtracking regex slow."""
    for label, make in input_makers(pattern):
        yield label, make(size)


SCREEN = 3_000  # characters: every input once, to find each pattern's slowest
BIG = 200_000  # characters: the slowest input again, within BOUND
BOUND = 5.0  # seconds of CPU time for one input at BIG
SCREEN_BOUND = 10.0  # seconds of CPU time for all the inputs of one pattern at SCREEN (~0.8 s at most today)


def _run(pattern: "re.Pattern", text, anchored: bool) -> None:
    if anchored:
        pattern.match(text)
    else:
        for _m in pattern.finditer(text):
            pass


def _cpu(pattern: "re.Pattern", text, anchored: bool) -> float:
    start = time.thread_time()
    _run(pattern, text, anchored)
    return time.thread_time() - start


def slowest_input(
    pattern: "re.Pattern", anchored: bool = False, size: int = SCREEN, bound: float = SCREEN_BOUND
) -> Optional[str]:
    """The label of the input that took the most CPU time at ``size`` (None: no input); all of
    them together within ``bound`` seconds of CPU time (``Hang``)."""
    worst: Tuple[float, Optional[str]] = (-1.0, None)
    with cpu_limit(bound, f"{pattern.pattern!r}: the inputs at {size} characters"):
        for label, text in adversarial_inputs(pattern, size):
            worst = max(worst, (_cpu(pattern, text, anchored), label))
    return worst[1]


def hang_check(
    pattern: "re.Pattern",
    anchored: bool = False,
    big: int = BIG,
    bound: float = BOUND,
    screen: int = SCREEN,
    screen_bound: float = SCREEN_BOUND,
) -> Tuple[str, float]:
    """(label, CPU seconds) of the pattern's slowest input run at ``big`` characters; raises
    ``Hang`` (an AssertionError) when it takes more than ``bound`` seconds."""
    label = slowest_input(pattern, anchored, screen, screen_bound)
    if label is None:
        return "", 0.0
    text = dict(input_makers(pattern))[label](big)
    with cpu_limit(bound, f"{pattern.pattern!r}: input {label} at {big} characters"):
        seconds = _cpu(pattern, text, anchored)
    return label, seconds


def main() -> None:  # pragma: no cover - a report for people
    only = sys.argv[1:]
    for where, pattern in sorted(all_patterns().items()):
        if only and not any(o in where for o in only):
            continue
        try:
            label, seconds = hang_check(pattern, anchored=where.endswith(":match"))
            print(f"{seconds * 1e3:9.2f}ms  {where}  {label}", flush=True)
        except AssertionError as e:
            print(f"   SUPER-LINEAR  {where}  {e}", flush=True)


if __name__ == "__main__":
    main()
