"""A small reader of POSIX shell: enough to find environment settings and compiler flags.

It splits a region of a file into *simple commands* made of *words*, the way a shell
would: quotes (``'...'``, ``"..."``, ``$'...'``), backslash escapes and ``\\``-newline
continuations, ``$(...)``, ``${...}`` (so ``${#x}`` is not a comment), backticks, comments
(a ``#`` that starts a word), here-documents (their bodies are data: skipped), and the
operators ``; & && || | ( ) ;;``.  Offsets always point into the original text.

It also follows the control structure far enough to know which commands only run on one
platform: ``if``/``elif``/``else`` and ``case`` arms whose test names NVIDIA or ROCm
(``[ -d /opt/rocm ]``, ``command -v nvidia-smi``, ``case $GPU in cuda)``), and ``&&``/``||``
chains after such a test.  Nothing is executed and nothing is expanded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple
from rocm_lint.configfiles.platform_tests import branch_gates
from rocm_lint.domain import NVIDIA, ROCM  # noqa: F401  (re-exported for the rules)


# -- words and commands --------------------------------------------------------------------------
@dataclass
class Word:
    start: int  # offsets of the word in the original text
    end: int
    value: str  # quotes removed, escapes resolved; expansions kept as written
    computed: bool  # holds a $-expansion, command substitution or backticks (outside '...')
    quoted: bool = False


@dataclass
class Command:
    words: List[Word]
    gate: Optional[str]  # NVIDIA, ROCM or None
    conditions: Tuple[str, ...]  # texts of the tests this command's branch depends on
    start: int = 0
    end: int = 0
    branches: Tuple[Tuple[int, int], ...] = ()  # (if/case id, branch number) of each enclosing branch


_REDIRECT = re.compile(r"(<<<|<<-|<<|<&|>&|>>|<>|>\||<|>)")
_KEYWORDS_SKIP = {"{", "}", "!", "time", "then", "do", "else", "fi", "done", "esac", "in"}
_OPS = (";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "(", ")")
_NAME_CHARS = re.compile(r"[A-Za-z0-9_]")
_SPECIAL_PARAMS = set("@*#?$!-0123456789")
_TEST_COMMANDS = {
    "[",
    "[[",
    "test",
    "command",
    "which",
    "type",
    "hash",
    "nvidia-smi",
    "rocm-smi",
    "rocminfo",
    "nvcc",
    "hipcc",
    "lspci",
    "grep",
    "ls",
}


class _Frame:
    __slots__ = ("kind", "gate", "cond", "seen", "mode", "cond_start", "conds_before", "uid", "branch")
    count = 0

    def __init__(self, kind: str) -> None:
        _Frame.count += 1
        self.uid = _Frame.count
        self.branch = 0
        self.kind = kind  # "if", "loop", "case"
        self.gate: Optional[str] = None  # gate of the current branch
        self.cond: str = ""  # condition text of the current branch
        self.seen: List[Tuple[Optional[str], Optional[str]]] = []  # (yes, no) of earlier tests
        self.mode = "cond"  # if: cond/body; loop: cond/body; case: word/pattern/body
        self.cond_start = -1
        self.conds_before: List[str] = []


class ShellReader:
    """Read ``text[start:end]`` as shell; ``commands`` lists every simple command."""

    def __init__(
        self,
        text: str,
        start: int = 0,
        end: Optional[int] = None,
        gate: Optional[str] = None,
        conditions: Tuple[str, ...] = (),
    ) -> None:
        self.text = text
        self.pos = start
        self.end = len(text) if end is None else end
        self.base_gate = gate
        self.base_conditions = conditions
        self.commands: List[Command] = []
        self.heredocs: List[Tuple[str, bool]] = []  # pending (delimiter, strip tabs)
        self.heredoc_bodies: List[Tuple[int, int]] = []
        self.frames: List[_Frame] = []
        # && / || chains: (gate, condition text) for the next command of the chain
        self.chain_gate: Optional[str] = None
        self.chain_cond: str = ""
        self._read()

    # -- lexing ------------------------------------------------------------------------------
    def _skip_balanced(self, i: int, opener: str, closer: str) -> int:
        """``i`` is just past ``opener``: the offset just past its ``closer`` (quotes respected)."""
        text, end = self.text, self.end
        depth = 1
        while i < end:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == "'" and opener != "{":
                j = text.find("'", i + 1, end)
                i = end if j < 0 else j + 1
                continue
            if c == '"':
                i = self._skip_double(i + 1)
                continue
            if c == "`":
                i = self._skip_backtick(i + 1)
                continue
            if c == opener:
                depth += 1
            elif c == closer:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return end

    def _skip_double(self, i: int) -> int:
        """``i`` is just past an opening ``"``: the offset just past the closing one."""
        text, end = self.text, self.end
        while i < end:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == '"':
                return i + 1
            if c == "$" and i + 1 < end and text[i + 1] in "({":
                i = self._skip_balanced(i + 2, text[i + 1], ")" if text[i + 1] == "(" else "}")
                continue
            if c == "`":
                i = self._skip_backtick(i + 1)
                continue
            i += 1
        return end

    def _skip_backtick(self, i: int) -> int:
        text, end = self.text, self.end
        while i < end:
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == "`":
                return i + 1
            i += 1
        return end

    def _dollar(self, i: int) -> int:
        """``text[i] == '$'``: the offset just past the expansion (``i + 1`` for a lone ``$``)."""
        text, end = self.text, self.end
        nxt = text[i + 1] if i + 1 < end else ""
        if nxt == "(":
            return self._skip_balanced(i + 2, "(", ")")
        if nxt == "{":
            return self._skip_balanced(i + 2, "{", "}")
        if nxt and (nxt in _SPECIAL_PARAMS):
            return i + 2
        j = i + 1
        while j < end and _NAME_CHARS.match(text[j]):
            j += 1
        return j

    def read_word(self, i: int, stop_at_equals: bool = False) -> Word:
        """The word that starts at ``i`` (which holds no blank or operator)."""
        text, end = self.text, self.end
        start = i
        buf: List[str] = []
        computed = quoted = False
        while i < end:
            c = text[i]
            if c in " \t\n\r\f;&|<>()":
                if c == "(" and buf and buf[-1] == "=" and not quoted:  # X=(a b): an array
                    j = self._skip_balanced(i + 1, "(", ")")
                    buf.append(text[i:j])
                    i = j
                    continue
                break
            if c == "\\":
                if i + 1 < end and text[i + 1] == "\n":
                    i += 2
                    continue
                if i + 2 < end and text[i + 1] == "\r" and text[i + 2] == "\n":
                    i += 3
                    continue
                if i + 1 < end:
                    buf.append(text[i + 1])
                quoted = True
                i += 2
                continue
            if c == "'":
                j = text.find("'", i + 1, end)
                j = end if j < 0 else j
                buf.append(text[i + 1 : j])
                quoted = True
                i = j + 1
                continue
            if c == '"':
                j = self._skip_double(i + 1)
                inner = text[i + 1 : j - 1 if j <= end and text[j - 1 : j] == '"' else j]
                if "$" in inner or "`" in inner:
                    computed = True
                buf.append(
                    re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), inner)
                )
                quoted = True
                i = j
                continue
            if c == "$":
                if i + 1 < end and text[i + 1] == "'":  # $'...' (ANSI-C quoting)
                    j = i + 2
                    while j < end and text[j] != "'":
                        j += 2 if text[j] == "\\" else 1
                    buf.append(text[i + 2 : j])
                    quoted = True
                    i = j + 1
                    continue
                j = self._dollar(i)
                if j > i + 1:
                    computed = True
                buf.append(text[i:j])
                i = j
                continue
            if c == "`":
                j = self._skip_backtick(i + 1)
                buf.append(text[i:j])
                computed = True
                i = j
                continue
            buf.append(c)
            i += 1
        return Word(start, min(i, end), "".join(buf), computed, quoted)

    # -- structure ---------------------------------------------------------------------------
    def _branches(self) -> Tuple[Tuple[int, int], ...]:
        return tuple((f.uid, f.branch) for f in self.frames if f.mode == "body" and f.kind != "loop")

    def _gate(self) -> Tuple[Optional[str], Tuple[str, ...]]:
        gates = [self.base_gate] + [f.gate for f in self.frames if f.mode == "body"] + [self.chain_gate]
        conds = list(self.base_conditions)
        for f in self.frames:
            if f.mode == "body":
                conds.extend(f.conds_before)
                if f.cond:
                    conds.append(f.cond)
        if self.chain_cond:
            conds.append(self.chain_cond)
        gate = NVIDIA if NVIDIA in gates else (ROCM if ROCM in gates else None)
        return gate, tuple(conds)

    def _read(self) -> None:
        text, end = self.text, self.end
        words: List[Word] = []
        i = self.pos
        while i < end:
            c = text[i]
            if c in " \t\r\f":  # a form feed (a page break) is a blank too
                i += 1
                continue
            if c == "\\" and i + 1 < end and text[i + 1] == "\n":
                i += 2
                continue
            if c == "\\" and text.startswith("\r\n", i + 1):
                i += 3
                continue
            if c == "\n":
                self._finish(words, "\n")
                words = []
                i += 1
                if self.heredocs:
                    i = self._skip_heredocs(i)
                continue
            if c == "#":  # at the start of a word: a comment (inside a word it is read as text)
                j = text.find("\n", i, end)
                i = end if j < 0 else j
                continue
            if c in "<>":
                # redirections: `<<EOF` opens a here-document; the target word is not an argument
                m = _REDIRECT.match(text, i)
                op = m.group(1) if m else c
                i = m.end() if m else i + 1
                while i < end and text[i] in " \t":
                    i += 1
                if i < end and text[i] not in "\n;&|()":
                    target = self.read_word(i)
                    i = max(target.end, i + 1)
                    if op in ("<<", "<<-"):
                        self.heredocs.append((target.value, op == "<<-"))
                continue
            op = next((o for o in _OPS if text.startswith(o, i)), None)
            if op is not None:
                self._finish(words, op)
                words = []
                i += len(op)
                continue
            w = self.read_word(i)
            if w.end <= i:  # defensive: never loop
                i += 1
                continue
            i = w.end
            if self._keyword(w, words):
                continue
            words.append(w)
        self._finish(words, "\n")

    def _skip_heredocs(self, i: int) -> int:
        text, end = self.text, self.end
        for delim, strip in self.heredocs:
            body_start = i
            while i < end:
                j = text.find("\n", i, end)
                line = text[i : end if j < 0 else j].rstrip("\r")
                if (line.lstrip("\t") if strip else line) == delim:
                    self.heredoc_bodies.append((body_start, i))
                    i = end if j < 0 else j + 1
                    break
                i = end if j < 0 else j + 1
            else:
                self.heredoc_bodies.append((body_start, end))
        self.heredocs = []
        return i

    def _keyword(self, w: Word, words: List[Word]) -> bool:
        """Handle a reserved word at the start of a command; True when it was one."""
        frame = self.frames[-1] if self.frames else None
        if frame is not None and frame.kind == "case" and frame.mode in ("word", "pattern"):
            if frame.mode == "word":
                if w.value == "in" and not w.quoted:
                    frame.mode = "pattern"
                    frame.cond = ""
                return True
            if w.value == "esac" and not w.quoted and not words:
                self.frames.pop()
                return True
            frame.cond += " " + w.value  # a pattern word, up to `)`
            return True
        if frame is not None and frame.kind == "loop" and frame.mode == "header":
            if w.value == "do" and not w.quoted:
                frame.mode = "body"
            return True
        if words or w.quoted:
            return False
        v = w.value
        if v in ("if", "while", "until"):
            f = _Frame("if" if v == "if" else "loop")
            f.cond_start = w.end
            self.frames.append(f)
            return True
        if v in ("for", "select"):
            f = _Frame("loop")
            f.mode = "header"
            self.frames.append(f)
            return True
        if v == "case":
            f = _Frame("case")
            f.mode = "word"
            self.frames.append(f)
            return True
        if frame is not None:
            if v == "then" and frame.kind == "if" and frame.mode == "cond":
                cond = self.text[frame.cond_start : w.start]
                yes, no = branch_gates(cond)
                if yes is None and NVIDIA in [n for _, n in frame.seen]:
                    yes = NVIDIA  # `elif` after a ROCm test: never on ROCm
                frame.seen.append((yes, no))
                frame.gate, frame.cond, frame.mode = yes, cond.strip(), "body"
                return True
            if v == "elif" and frame.kind == "if":
                frame.branch += 1
                frame.conds_before.append(frame.cond)
                frame.mode, frame.cond_start = "cond", w.end
                return True
            if v == "else" and frame.kind == "if":
                frame.branch += 1
                nos = [no for _, no in frame.seen]
                frame.conds_before.append(frame.cond)
                frame.gate = NVIDIA if NVIDIA in nos else (ROCM if ROCM in nos and len(nos) == 1 else None)
                frame.cond = ""
                frame.mode = "body"
                return True
            if v == "fi" and frame.kind == "if" or v == "done" and frame.kind == "loop":
                self.frames.pop()
                return True
            if v == "do" and frame.kind == "loop" and frame.mode == "cond":
                frame.mode = "body"
                return True
            if v == "esac" and frame.kind == "case":
                self.frames.pop()
                return True
        return v in _KEYWORDS_SKIP

    def _finish(self, words: List[Word], op: str) -> None:
        frame = self.frames[-1] if self.frames else None
        if frame is not None and frame.kind == "case":
            if frame.mode == "pattern" and op == ")":
                patterns = frame.cond
                yes, _ = branch_gates(patterns, 0)
                if "*" in patterns.split() and not yes:
                    nos = [no for _, no in frame.seen]
                    yes = NVIDIA if NVIDIA in nos else None
                else:
                    frame.seen.append((yes, NVIDIA if yes == ROCM else None))
                frame.gate, frame.mode = yes, "body"
                frame.cond = patterns.strip()
                return
            if frame.mode == "body" and op in (";;", ";&", ";;&"):
                self._emit(words)
                frame.branch += 1
                frame.mode, frame.cond, frame.gate = "pattern", "", None
                self.chain_gate, self.chain_cond = None, ""
                return
            if frame.mode == "pattern" and op == "(":
                return
        if frame is not None and frame.kind == "loop" and frame.mode == "header":
            return
        self._emit(words)
        # && / || chains after a test: `[ -d /opt/rocm ] || export X=1`
        if op in ("&&", "||"):
            if words and words[0].value in _TEST_COMMANDS and not self.chain_gate:
                cond = self.text[words[0].start : words[-1].end]
                yes, no = branch_gates(cond)
                self.chain_gate = yes if op == "&&" else no
                self.chain_cond = cond
        elif op != "|":
            self.chain_gate, self.chain_cond = None, ""

    def _emit(self, words: List[Word]) -> None:
        if not words:
            return
        frame = self.frames[-1] if self.frames else None
        if frame is not None and frame.mode == "cond":
            return  # a test: not a setting
        gate, conds = self._gate()
        self.commands.append(
            Command(list(words), gate, conds, words[0].start, words[-1].end, self._branches())
        )
