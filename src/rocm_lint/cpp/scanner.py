"""The CUDA/C++ scanner: lex once, model the preprocessor once, run the C++ rules.

Rules (``rocm_lint.rules.warp``, ``rocm_lint.rules.cuda_cpp``) are functions of a
:class:`CppUnit` that yield :class:`rocm_lint.rule.Hit` objects (made with ``Rule.hit``).  They match on
``unit.code`` (comments and literals blanked, offsets intact), so comments and strings
never fire.  The engine (``rocm_lint.engine.unit_findings``) then drops hits on lines that are
never compiled on ROCm (``CppUnit.drops``: NVIDIA-only branches, ``#if 0``) and hits suppressed by
a ``rocm-lint: ignore`` or ``NOLINT`` comment.  Code in ROCm-only branches is checked: hazards
there are real.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Tuple, Union

from rocm_lint.config import Config
from rocm_lint.build import context as build_context
from rocm_lint.build.headers import HEADER_EXT as HEADER_PATH
from rocm_lint.cpp.build_facts import build_base, hipify_build_above
from rocm_lint.cpp.facts import (
    Facts,
    const_declarations,
    declared_type,
    int_aliases_in,
    unit_facts,
    wrappers_in,
)
from rocm_lint.cpp.includes import included_macro_facts, shared_lex
from rocm_lint.cpp.lexer import Lexed, lex
from rocm_lint.cpp.narrowing import (  # noqa: F401 (the scanner's API)
    ASM_WORDS,
    DEVICE_WORDS,
    holds_cuda_host_code,
    holds_device_code,
)
from rocm_lint.cpp.vocabulary import learned_macros
from rocm_lint.cpp.conditions import CUDA_ONLY, ROCM, is_rocm_macro, names_in
from rocm_lint.cpp.preproc import Preprocessed, analyse, include_guard
from rocm_lint.cpp.tu_entry import entry_environment, with_entry_facts
from rocm_lint.cpp.values import INT_TYPES, WIDTH_SENSITIVE, literal_value
from rocm_lint.finding import FileError
from rocm_lint.lines import LineIndex
from rocm_lint.workspace import Workspace

_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_BRACKET = re.compile(r"[()\[\]{}]")
_BRACE = re.compile(r"[{}]")
_BRACKET_OR_COMMA = re.compile(r"[()\[\]{},]")
# A torch extension source: CUDAExtension/load() hipify it on ROCm.
_TORCH_INCLUDE = re.compile(
    r"^[ \t\f\v]*#[ \t\f\v]*include[ \t\f\v]*[<\"](?:torch/extension\.h|torch/all\.h|ATen/|c10/|torch/csrc/)",
    re.M,
)
_CUTLASS_INCLUDE = re.compile(r"\s*[<\"](?:cutlass|cute)/")
_CUTLASS_USE = re.compile(r"\b(?:cute|cutlass)\s*::")

_IDENT = re.compile(r"[A-Za-z_]\w*$")
_QUALIFIED_NAME = re.compile(r"(?:[A-Za-z_]\w*\s*::\s*)+([A-Za-z_]\w*)")


@dataclass
class CppUnit:
    path: str
    text: str
    config: Config
    lexed: Lexed
    pre: Preprocessed
    index: LineIndex
    workspace: Workspace = field(default_factory=Workspace)  # the front end's caches: headers, build files
    scope: Optional[str] = None  # "nvidia-only": a source the ROCm build never compiles, reported apart
    keeps_fixes: bool = True  # False: the findings come without fixes (mixed CRs, a byte-order mark)
    no_fix_reason: str = ""  # why, when they do
    line_break: str = "\n"  # "\r": every line ends in a lone CR (the fixes' new lines do too)
    memo: Dict[str, object] = field(default_factory=dict)
    comment_style = "//"  # what a suppression comment starts with (rocm_lint.noqa)
    unique_hits = False  # every hit counts (the config readers keep one per offset and rule)
    host_only: bool = False  # a .cpp/.h file with no device code that uses the CUDA host API

    def drops(self, offset: int) -> bool:
        """Is a hit at ``offset`` in code the ROCm build never compiles (NVIDIA-only branches)?"""
        return self.nvidia_only(offset)

    @property
    def code(self) -> str:
        return self.lexed.code

    def line_of(self, offset: int) -> int:
        return self.index.line_of(offset)

    def nvidia_only(self, offset: int) -> bool:
        return self.pre.nvidia_only(self.line_of(offset))

    def rocm_only(self, offset: int) -> bool:
        return self.pre.rocm_only(self.line_of(offset))

    @property
    def hipified(self) -> bool:
        """Is this file run through PyTorch's hipify before a ROCm build?  Then CUDA headers,
        types and API names are rewritten to their HIP twins automatically."""
        cached = self.memo.get("hipified")
        if cached is None:
            cached = bool(_TORCH_INCLUDE.search(self.text)) or hipify_build_above(
                self.workspace, os.path.dirname(os.path.abspath(self.path))
            )
            self.memo["hipified"] = cached
        return cached  # type: ignore[return-value]

    @property
    def cutlass_bound(self) -> bool:
        """Does the file build on CUTLASS/CuTe outside an NVIDIA-only branch?"""
        cached = self.memo.get("cutlass")
        if cached is None:
            cached = False
            if "cutlass" in self.text or "cute" in self.text:
                for d in self.pre.directives:
                    if (
                        d.name == "include"
                        and _CUTLASS_INCLUDE.match(self.text, d.arg_start, d.end)
                        and not self.pre.nvidia_only(d.line)
                    ):
                        cached = True
                        break
                else:
                    m = _CUTLASS_USE.search(self.code)
                    cached = bool(m) and not self.nvidia_only(m.start())
            self.memo["cutlass"] = cached
        return cached  # type: ignore[return-value]

    def rocm_macro(self, name: str) -> bool:
        """Is ``name`` a platform macro: a built-in or configured ROCm macro, or one the build or
        the file's own includes tie to a platform?"""
        return is_rocm_macro(name, self.config.rocm_macros) or name in self.pre.platform_terms

    # -- structure --------------------------------------------------------------------------
    def matching(self, open_at: int) -> int:
        """Offset just past the bracket that closes the one at ``open_at`` (or where the
        nesting breaks, or len(code)).  Only bracket characters are visited."""
        code = self.code
        stack = [_CLOSERS[code[open_at]]]
        for m in _BRACKET.finditer(code, open_at + 1):
            c = m.group()
            if c in _CLOSERS:
                stack.append(_CLOSERS[c])
            elif c != stack[-1]:
                return m.start()  # unbalanced: stop here
            else:
                stack.pop()
                if not stack:
                    return m.end()
        return len(code)

    def args(self, open_paren: int) -> List[Tuple[int, int]]:
        """Spans of the top-level arguments of the call whose ``(`` is at ``open_paren``."""
        code = self.code
        close = self.matching(open_paren) - 1
        spans, depth, start = [], 0, open_paren + 1
        for m in _BRACKET_OR_COMMA.finditer(code, open_paren + 1, max(close, open_paren + 1)):
            c = m.group()
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif depth == 0:
                spans.append(self._strip(start, m.start()))
                start = m.end()
        if close > start or spans:
            spans.append(self._strip(start, close))
        return spans

    def _strip(self, a: int, b: int) -> Tuple[int, int]:
        while a < b and self.code[a].isspace():
            a += 1
        while b > a and self.code[b - 1].isspace():
            b -= 1
        return a, b

    def statement_start(self, offset: int) -> int:
        """Offset after the previous ``;``, ``{``, ``}`` or preprocessor line before ``offset``.
        The boundaries are indexed once per file: each call is a binary search (walking back
        from every call of a long statement was quadratic)."""
        bounds = self.memo.get("statement_bounds")
        if bounds is None:
            bounds = self.memo["statement_bounds"] = _statement_bounds(self.code)
        i = bisect_right(bounds, offset)  # type: ignore[arg-type]
        return bounds[i - 1] if i else 0  # type: ignore[index]

    def block_end(self, offset: int) -> int:
        """Offset of the ``}`` that closes the innermost block around ``offset`` (or the end):
        the first ``}`` after ``offset`` that brings the brace depth below its depth there.
        The braces are indexed once per file, so each call is a binary search."""
        index = self.memo.get("braces")
        if index is None:
            index = self.memo["braces"] = _brace_index(self.code)
        positions, depths, closes, _ = index  # type: ignore[misc]
        i = bisect_left(positions, offset)
        depth = depths[i]  # the depth before the first brace at or after ``offset``
        at = closes.get(depth)
        if at:
            j = bisect_left(at, offset)
            if j < len(at):
                return at[j]
        return len(self.code)

    def open_brace_before(self, offset: int) -> int:
        """Offset of the last ``{`` before ``offset``, or -1 (``code.rfind("{", 0, offset)``
        from the brace index)."""
        index = self.memo.get("braces")
        if index is None:
            index = self.memo["braces"] = _brace_index(self.code)
        opens = index[3]  # type: ignore[index]
        i = bisect_left(opens, offset)
        return opens[i - 1] if i else -1

    def line_span(self, line: int) -> Tuple[int, int]:
        """(start, end) offsets of a line, the newline excluded."""
        start = self.index.offset(line)
        end = self.text.find("\n", start)
        end = len(self.text) if end == -1 else end
        if end > start and self.text[end - 1] == "\r":
            end -= 1
        return start, end

    # -- values -----------------------------------------------------------------------------
    def constants(self) -> Dict[str, List[Tuple[int, str]]]:
        """``const``/``constexpr`` scalars of the file: name -> [(offset, initializer text)]; an
        initializer whose declared integer type changes its value is given as a cast
        (``constexpr uint64_t kAll = -1;`` -> ``(uint64_t)(-1)``, 64 ones: ``_typed``)."""
        cached = self.memo.get("constants")
        if cached is None:
            cached = {}
            if "const" in self.code:
                for at, name, value in const_declarations(self.code):
                    cached.setdefault(name, []).append(
                        (at, self._typed(declared_type(self.code, at, name), value))
                    )
            self.memo["constants"] = cached
        return cached  # type: ignore[return-value]

    def _typed(self, type_name: str, value: str) -> str:
        """``value`` as a constant of ``type_name`` holds it: a cast where the type changes the
        value (``-1`` in a ``uint64_t``, or in a project's ``U64``), else ``value`` itself."""
        if not type_name or not value:
            return value
        plain = literal_value(value)
        if plain not in WIDTH_SENSITIVE:
            return value  # a value no cast between 32 and 64 bits changes as a mask: not read
        aliases = self.project.int_aliases if type_name not in INT_TYPES else None
        if aliases is not None and type_name not in aliases:
            return value
        cast = f"({type_name})({value})"
        held = literal_value(cast, aliases)
        return cast if held is not None and held != plain else value

    def expand(self, text: str, offset: int, depth: int = 0) -> str:
        """Follow ``text`` through object-like macros (as ROCm sees them at ``offset``) and
        file-level constants, until it is no longer a plain name."""
        text = text.strip()
        while text.startswith("(") and text.endswith(")") and depth < 8:
            text = text[1:-1].strip()
        if depth >= 8:
            return text
        if not _IDENT.match(text):
            qualified = _QUALIFIED_NAME.fullmatch(text)  # `util::kFullMask`: a namespace's constant
            if qualified is None:
                return text
            name = qualified.group(1)
            decls = [
                v for at, v in self.constants().get(name, ()) if at < offset and not self.nvidia_only(at)
            ]
            known = self.project.values.get(name)
            value = decls[-1] if decls else None if known is None else self._typed(known.type, known.text)
            return text if value is None else self.expand(value, offset, depth + 1)
        d = self.pre.macro(text, self.line_of(offset), ROCM)
        if d is not None and d.params is None:
            return self.expand(d.body, offset, depth + 1)
        decls = [v for at, v in self.constants().get(text, ()) if at < offset and not self.nvidia_only(at)]
        if decls:
            return self.expand(decls[-1], offset, depth + 1)
        if d is None and text not in self.pre.macros:
            value = self.project.values.get(text)
            if value is not None:  # a macro or constant of a project header
                return self.expand(self._typed(value.type, value.text), offset, depth + 1)
        return text

    def defined_for_rocm(self, name: str, offset: int) -> bool:
        """Is ``name`` an object-like macro whose ROCm value comes from a definition only ROCm
        compiles (``#if BNB_HIP`` / ``#define FULL_MASK 0xffffffffull``), in this file or a project
        header?  Such a value was chosen for ROCm on purpose."""
        if not _IDENT.match(name):
            return False
        d = self.pre.macro(name, self.line_of(offset), ROCM)
        if d is not None:
            return d.cuda is False and d.rocm is True
        value = self.project.values.get(name) if name not in self.pre.macros else None
        return value is not None and value.rocm_only

    @property
    def project(self) -> Facts:
        """What the project headers this file includes provide (``rocm_lint.cpp.facts``), and the
        ballot and shuffle wrappers the file itself defines."""
        cached = self.memo.get("project")
        if cached is None:
            headers = unit_facts(self.workspace, self.path, self.text)
            if HEADER_PATH.search(self.path):  # what its translation units give a header at its entry
                headers = with_entry_facts(self.workspace, self.path, headers)
            ballots, shuffles = wrappers_in(self.code, self.pre, self.path)
            aliases, links = int_aliases_in(self.code, self.pre)
            if ballots or shuffles or aliases or links:
                cached = Facts(
                    headers.values,
                    {**headers.ballot_wrappers, **ballots},
                    {**headers.shuffle_wrappers, **shuffles},
                    {**headers.int_aliases, **aliases},
                    {**headers.alias_links, **links},
                    headers.mask_free_sync,
                )
                cached.resolve_aliases()
            else:
                cached = headers
            self.memo["project"] = cached
        return cached  # type: ignore[return-value]


def _brace_index(code: str) -> Tuple[List[int], List[int], Dict[int, List[int]], List[int]]:
    """(offsets of every brace, the depth before each (one more entry: the depth at the end),
    depth -> offsets of the ``}`` that close a block at that depth, offsets of every ``{``)."""
    opens: List[int] = []
    positions: List[int] = []
    depths: List[int] = []
    closes: Dict[int, List[int]] = {}
    depth = 0
    for m in _BRACE.finditer(code):
        positions.append(m.start())
        depths.append(depth)
        if m.group() == "{":
            opens.append(m.start())
            depth += 1
        else:
            closes.setdefault(depth, []).append(m.start())
            depth -= 1
    depths.append(depth)
    return positions, depths, closes, opens


def _tests_foreign_macros(pre: Preprocessed) -> bool:
    """Does a conditional test a macro this file neither defines nor knows (one its headers
    may define, like PTX_AVAILABLE)?  Only then are the headers read."""
    for d in pre.directives:
        if d.condition is not None:
            for name in names_in(d.condition):
                if (
                    name not in pre.macros
                    and not is_rocm_macro(name)
                    and name not in CUDA_ONLY
                    and name != "defined"
                ):
                    return True
    return False


_LONE_CR = re.compile(r"\r(?!\n)")
_BOM_NO_FIX = (
    "not fixed: the text starts with a UTF-8 byte-order mark, which the check reads as a space: the "
    "fixes' offsets and line arithmetic are not applied to such a text (a file's mark is kept apart "
    "when it is read and written back after the fix; an editor's buffer keeps it in the text)"
)
_LONE_CR_NO_FIX = (
    "not fixed: the file mixes lone CR line breaks with LF ones, and the fixes count lines as "
    "LF-ended text (the #line numbers they write, the lines they gate): no fix rather than a wrong one"
)


def _statement_bounds(code: str) -> List[int]:
    """Sorted offsets just after each ``;``, ``{``, ``}`` and after the newline that ends each
    preprocessor line: where a statement can start."""
    bounds = [m.end() for m in _STATEMENT_END.finditer(code)]
    # A preprocessor line: its first non-blank (``str.isspace``) is a ``#``, found from each ``#``
    # (no split into lines); newlines are looked for since the previous ``#`` only (linear).
    find, rfind = code.find, code.rfind
    line_start = scanned = 0
    done = -1  # the start of the line last decided
    for m in _HASH.finditer(code):
        at = m.start()
        newline = rfind("\n", scanned, at)
        if newline != -1:
            line_start = newline + 1
        scanned = at
        if line_start == done:
            continue
        done = line_start
        if line_start == at or code[line_start:at].isspace():
            end = find("\n", at)
            if end != -1:  # the last line (no newline after it) gives no bound
                bounds.append(end + 1)
    bounds.sort()
    return bounds


_STATEMENT_END = re.compile(r"[;{}]")
_HASH = re.compile("#")


def read_cpp_unit(
    path: str, text: str, config: Config, language: str = "cuda", workspace: Optional[Workspace] = None
) -> Union[CppUnit, FileError, None]:
    """The :class:`CppUnit` of one C++/CUDA file (None: a C++ file without device code);
    ``workspace`` holds what was read of other files (a fresh one when None).  The engine runs
    the checkers on it, drops what NVIDIA-only code yields (``CppUnit.drops``), applies
    ``supersedes`` and the suppressions (``rocm_lint.engine.unit_findings``)."""
    host_only = language != "cuda" and not holds_device_code(text)
    if host_only and (HEADER_PATH.search(path) or not holds_cuda_host_code(text)):
        # A host *header* of the CUDA API is often one vendor's side of a split its includers
        # make (`#if X_USE_HIP` a HIP header `#elif` this one) that the build files do not name:
        # only a source (.cpp/.cc) is read for the host-code rules.
        return None
    # A lone CR ends a line for C/C++ compilers (and for LineIndex, noqa and the fixes): the
    # lexer and the #if model read a copy where it is an LF, same length, so offsets and the
    # text the fixes copy stay the original's.
    scanned = _LONE_CR.sub("\n", text) if "\r" in text else text
    if scanned.startswith("\ufeff"):
        # a UTF-8 byte-order mark is no character of the program (compilers skip it): the
        # lexer and the #if model read a space there, so `#include` on line 1 is a directive
        scanned = " " + scanned[1:]
    cr_only = "\r" in text and "\n" not in text
    fixable = not text.startswith("\ufeff") and (scanned is text or cr_only)
    ws = workspace if workspace is not None else Workspace()
    base = build_base(ws, path)
    nvidia_only_source = base == (True, False) and config.report_nvidia_only_sources
    if nvidia_only_source:
        base = (True, True)  # the whole port: analysed as if ROCm compiled it, reported apart
    try:
        # a header's lex is shared with those who read it as a header (cpp.includes.shared_lex)
        lexed = shared_lex(ws, scanned) if HEADER_PATH.search(path) else lex(scanned)
        # what the project's own headers define per platform (PTX_AVAILABLE, BNB_HIP ...)
        pre = analyse(scanned, lexed, config.rocm_macros, config.cuda_macros, base=base)
        if _tests_foreign_macros(pre):
            # what every translation unit has defined at a header's entry (cpp.tu_entry), the
            # build's per-platform macros, then what the headers define, and the macros the
            # file's own includes tie to a platform (cpp.vocabulary)
            entry = entry_environment(ws, path) if HEADER_PATH.search(path) else None
            guard = include_guard(lexed.code) if entry is not None else None
            seed = (
                (entry.seed(frozenset((guard,) if guard is not None else ())) if entry is not None else ())
                + build_context.macro_facts(ws, path)
                + included_macro_facts(ws, path, text)
            )
            rocm_extra, cuda_extra = learned_macros(
                pre, frozenset(config.rocm_macros), frozenset(config.cuda_macros)
            )
            if seed or rocm_extra or cuda_extra:
                pre = analyse(
                    scanned,
                    lexed,
                    set(config.rocm_macros) | rocm_extra,
                    set(config.cuda_macros) | cuda_extra,
                    seed,
                    base,
                )
    except RecursionError:
        return FileError(path, "cannot analyse: preprocessor nesting too deep")
    return CppUnit(
        path,
        text,
        config,
        lexed,
        pre,
        LineIndex(text),
        ws,
        scope="nvidia-only" if nvidia_only_source else None,
        # Fixes copy and count lines as LF-ended text (the #line numbers they write, the
        # lines they gate): a file whose lines all end in a lone CR is that text with another
        # line break (its fixes' new lines end in CR: ``line_break``, and ``--fix`` fixes its
        # LF twin: rocm_lint.fix.api.fix_text); a file that mixes them gets its findings
        # without fixes, never a wrong one.
        keeps_fixes=fixable,
        no_fix_reason="" if fixable else _BOM_NO_FIX if text.startswith("\ufeff") else _LONE_CR_NO_FIX,
        line_break="\r" if cr_only else "\n",
        host_only=host_only,
    )


def calls(unit: CppUnit, pattern: "re.Pattern[str]") -> Iterator[Tuple[re.Match, int]]:
    """Matches of ``pattern`` (ending in a name) followed by ``(``: (match, offset of the paren).
    Patterns start with a literal (no leading ``\\b``, which would defeat the regex engine's
    literal search); a match that continues an identifier is skipped here."""
    code = unit.code
    for m in pattern.finditer(code):
        if m.start() and (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
            continue
        i = m.end()
        while i < len(code) and code[i] in " \t\r\n":
            i += 1
        if i < len(code) and code[i] == "(":
            yield m, i
