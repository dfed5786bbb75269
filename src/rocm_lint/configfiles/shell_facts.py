"""What shell commands set: environment variables (``export X=1``, ``X=1 cmd``, ``env X=1 cmd``,
``ENV``-like commands), with the platform gate of the branch each runs in, read from a
``rocm_lint.configfiles.shell.ShellReader``'s commands (``shell_facts``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from rocm_lint.configfiles.shell import Command, ShellReader, Word


# -- what commands set ------------------------------------------------------------------------------
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=")
# Commands whose arguments are text or patterns, never flags handed to a tool.
TEXT_COMMANDS = frozenset(
    {
        "echo",
        "printf",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "sed",
        "awk",
        "cat",
        "test",
        "[",
        "[[",
        "read",
        "tee",
        "logger",
        "log",
        "info",
        "warn",
        "error",
        "die",
        "fail",
        "note",
        "msg",
        "say",
        "print",
        "local",
        "unset",
        "shift",
        "return",
        "exit",
        ":",
        "true",
        "false",
        "trap",
        "alias",
        "eval",
        "exec_echo",
        "case",
        "let",
        "expr",
        "basename",
        "dirname",
        "mkdir",
        "rm",
        "cp",
        "mv",
        "ln",
        "touch",
        "chmod",
        "cd",
        "curl",
        "wget",
        "git",
        "apt-get",
        "apt",
        "yum",
        "dnf",
        "pip",
        "pip3",
        "conda",
        "uv",
    }
)
_WRAPPERS = frozenset(
    {
        "nohup",
        "exec",
        "time",
        "nice",
        "command",
        "builtin",
        "stdbuf",
        "timeout",
        "srun",
        "mpirun",
        "numactl",
        "taskset",
        "xargs",
        "ccache",
    }
)


@dataclass
class ShellSetting:
    name: str
    value: str
    name_start: int
    value_start: int
    end: int
    how: str  # export, assign, prefix, env, declare, docker-env, build-arg, define
    computed: bool
    gate: Optional[str]
    conditions: Tuple[str, ...]
    branches: Tuple[Tuple[int, int], ...] = ()


@dataclass
class ShellFacts:
    settings: List[ShellSetting] = field(default_factory=list)
    args: List[Tuple[Command, List[Word]]] = field(default_factory=list)  # tool arguments per command


def _assignment(reader: ShellReader, w: Word) -> Optional[Tuple[str, Word]]:
    """``NAME=value`` written unquoted: (name, the value as a word of its own)."""
    m = _ASSIGNMENT.match(reader.text, w.start, w.end)
    if not m:
        return None
    value = reader.read_word(m.end()) if m.end() < w.end else Word(m.end(), m.end(), "", False)
    value.end = w.end
    return m.group(1), value


def _setting(
    reader: ShellReader, cmd: Command, name: str, value: Word, how: str, name_start: int
) -> ShellSetting:
    return ShellSetting(
        name,
        value.value,
        name_start,
        value.start,
        value.end,
        how,
        value.computed,
        cmd.gate,
        cmd.conditions,
        cmd.branches,
    )


def shell_facts(reader: ShellReader) -> ShellFacts:
    facts = ShellFacts()
    for cmd in reader.commands:
        _interpret(reader, cmd, cmd.words, facts)
    return facts


def _interpret(reader: ShellReader, cmd: Command, words: List[Word], facts: ShellFacts) -> None:
    i = 0
    n = len(words)
    while i < n:
        a = _assignment(reader, words[i])
        if a is None:
            break
        how = "prefix" if any(_assignment(reader, w) is None for w in words[i + 1 :]) else "assign"
        facts.settings.append(_setting(reader, cmd, a[0], a[1], how, words[i].start))
        i += 1
    if i >= n:
        return
    head = words[i].value.rsplit("/", 1)[-1] if not words[i].computed else ""
    rest = words[i + 1 :]
    if head in ("export", "declare", "typeset", "readonly"):
        exported = head == "export"
        for w in rest:
            if w.value.startswith("-") and not w.computed:
                exported = exported or "x" in w.value
                continue
            a = _assignment(reader, w)
            if a is not None:
                how = "export" if exported else ("declare" if head != "readonly" else "assign")
                facts.settings.append(_setting(reader, cmd, a[0], a[1], how, w.start))
        return
    if head in ("env", "sudo"):
        j = 0
        while j < len(rest):
            w = rest[j]
            if w.value.startswith("-") and not w.computed:
                if w.value in (
                    "-u",
                    "--unset",
                    "-C",
                    "--chdir",
                    "-S",
                    "--split-string",
                    "-g",
                    "-h",
                    "--user",
                    "--group",
                ) and head in ("env", "sudo"):
                    j += 1
                j += 1
                continue
            a = _assignment(reader, w)
            if a is None:
                break
            facts.settings.append(_setting(reader, cmd, a[0], a[1], "env", w.start))
            j += 1
        _interpret(reader, cmd, rest[j:], facts)
        return
    if head == "command" and rest and rest[0].value in ("-v", "-V", "-pv", "-pV"):
        return  # `command -v nvcc` looks the program up; it does not run it
    if head in _WRAPPERS:
        j = 0
        while j < len(rest) and rest[j].value.startswith("-"):
            j += 1
        if head in ("timeout",) and j < len(rest):
            j += 1  # the duration
        _interpret(reader, cmd, rest[j:], facts)
        return
    if head in ("docker", "podman", "nerdctl", "buildah"):
        j = 0
        while j < len(rest):
            w = rest[j]
            for flag, how in (("-e", "docker-env"), ("--env", "docker-env"), ("--build-arg", "build-arg")):
                if w.value == flag and j + 1 < len(rest):
                    nxt = rest[j + 1]
                    a = _assignment(reader, nxt)
                    if a is None and nxt.quoted:  # -e "X=1": the quotes start the word
                        a = _quoted_assignment(reader, nxt)
                    if a is not None:
                        setting = _setting(reader, cmd, a[0], a[1], how, _name_start(reader, nxt))
                        raw = reader.text[nxt.start : nxt.end]
                        if nxt.quoted and raw[-1:] in "\"'":
                            setting.end -= 1
                        facts.settings.append(setting)
                    j += 1
                    break
                if w.value.startswith(flag + "="):
                    m = _ASSIGNMENT.match(w.value, len(flag) + 1)
                    if m:
                        value = Word(w.start, w.end, w.value[m.end() :], w.computed, w.quoted)
                        facts.settings.append(
                            ShellSetting(
                                m.group(1),
                                value.value,
                                w.start,
                                w.start,
                                w.end,
                                how,
                                w.computed,
                                cmd.gate,
                                cmd.conditions,
                                cmd.branches,
                            )
                        )
                    break
            j += 1
        facts.args.append((cmd, words[i:]))
        return
    if head in TEXT_COMMANDS:
        return
    facts.args.append((cmd, words[i:]))


def _quoted_assignment(reader: ShellReader, w: Word) -> Optional[Tuple[str, Word]]:
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", w.value)
    if not m:
        return None
    raw = reader.text[w.start : w.end]
    at = raw.find(m.group(0))
    vstart = w.start + at + len(m.group(0)) if at >= 0 else w.start
    return m.group(1), Word(vstart, w.end, w.value[m.end() :], w.computed, True)


def _name_start(reader: ShellReader, w: Word) -> int:
    m = re.search(r"[A-Za-z_]", reader.text[w.start : w.end])
    return w.start + m.start() if m else w.start
