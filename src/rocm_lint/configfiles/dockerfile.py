"""The Dockerfile reader: ``ENV``, legacy ``ENV X v``, ``ARG`` and the shell of ``RUN``/``CMD``/
``ENTRYPOINT`` (here-documents included), with NVIDIA-only stages (``FROM nvidia/cuda``...) gated."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

from rocm_lint.configfiles.shell import NVIDIA, ROCM, ShellReader, Word
from rocm_lint.configfiles.unit import Setting, UnitBuilder

_INSTRUCTION = re.compile(r"[ \t\f]*([A-Za-z]+)(?=[ \t\f\n]|$)")
_HEREDOC = re.compile(r"<<-?[ \t]*([\"']?)([A-Za-z_][\w.-]*)\1")
_RUN_FLAG = re.compile(r"[ \t]*--[a-z-]+=\S*")
_SHELL_COMMAND = re.compile(r"(?:\S*/)?(?:ba|da|z|k|a)?sh(?:\s+-\S+)*")


def is_nvidia_image(image: str) -> bool:
    image = image.lower()
    if "rocm" in image or "amd" in image.split("/")[0]:
        return False
    return (
        image.startswith(("nvidia/", "docker.io/nvidia/"))
        or "nvcr.io/" in image
        or "cuda" in image
        or any(":" in part and _CUDA_TAG.search(part, part.index(":")) for part in image.split("/"))
    )


# `:...cu121` after a colon in the same path segment (searched per segment: `:[^/]*\bcu1..` tried
# from every colon was quadratic on a long run of colons).
_CUDA_TAG = re.compile(r"\bcu1\d{1,2}\b")


def is_rocm_image(image: str) -> bool:
    return "rocm" in image.lower()


def _instructions(code: str) -> Tuple[str, List[Tuple[int, int, int]]]:
    """(code with the comment lines of continued instructions blanked, [(start, end, last line)]).

    Docker drops comment lines inside a continued instruction; blanking them (newline
    included, offsets kept) lets the instruction read as one command."""
    lines = []
    pos = 0
    for raw in code.split("\n"):
        lines.append((pos, raw))
        pos += len(raw) + 1
    chars = None
    out = []
    k = 0
    while k < len(lines):
        start, raw = lines[k]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            k += 1
            continue
        last = k
        while lines[last][1].rstrip().endswith("\\") and last + 1 < len(lines):
            nxt = last + 1
            while nxt < len(lines) and lines[nxt][1].strip().startswith("#"):
                if chars is None:
                    chars = list(code)
                s, r = lines[nxt]
                for p in range(s, min(s + len(r) + 1, len(code))):
                    chars[p] = " "
                nxt += 1
            if nxt >= len(lines):
                break
            last = nxt
        out.append((start, lines[last][0] + len(lines[last][1]), last))
        k = last + 1
    return ("".join(chars) if chars is not None else code), out


_COPY_FROM = re.compile(r"--from=(\S+)", re.I)


def _nvidia_fed_stages(code: str, instructions: List[Tuple[int, int, int]]) -> Set[str]:
    """Named build stages that only NVIDIA stages use: a ``compile-image`` stage on a neutral base
    (``continuumio/miniconda3``) whose environment is only copied (``COPY --from=compile-image``)
    into ``FROM nvidia/cuda...`` stages builds for that NVIDIA image, whatever its own base.  The
    last stage is the image itself (never one of them), and a stage no other stage uses is kept
    (it may be built on its own with ``--target``)."""
    args: Dict[str, str] = {}
    names: List[Optional[str]] = []  # per stage
    bases: List[str] = []  # per stage: the image or stage it starts from
    users: Dict[str, Set[int]] = {}  # stage name -> the stages that copy from it or start from it
    for start, end, _ in instructions:
        m = _INSTRUCTION.match(code, start, end)
        if not m:
            continue
        keyword = m.group(1).upper()
        if keyword == "ARG" and not names:
            for word in code[m.end() : end].split():  # ARG NAME=value (no regex: linear on any input)
                name, eq, value = word.partition("=")
                if eq and name.isidentifier():
                    args[name] = value.strip("\"'")
        elif keyword == "FROM":
            words = [w for w in code[m.end() : end].split() if not w.startswith("--")]
            base = _resolve(words[0], args).lower() if words else ""
            if base in names:
                users.setdefault(base, set()).add(len(names))
            bases.append(base)
            names.append(words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None)
        elif keyword == "COPY" and names:
            for cm in _COPY_FROM.finditer(code, m.end(), end):
                ref = cm.group(1).strip("\"'").lower()
                if ref.isdigit() and int(ref) < len(names):
                    ref = names[int(ref)] or ref
                if ref in names:
                    users.setdefault(ref, set()).add(len(names) - 1)
    if len(names) < 2:
        return set()
    nvidia: Set[int] = set()
    for i, base in enumerate(bases):
        if is_nvidia_image(base):
            nvidia.add(i)
    for _ in range(len(names)):  # a chain of builder stages: until nothing changes
        before = len(nvidia)
        for i, name in enumerate(names[:-1]):
            used_by = users.get(name or "", set())
            if name and i not in nvidia and not is_rocm_image(bases[i]) and used_by and used_by <= nvidia:
                nvidia.add(i)
        for i, base in enumerate(bases):  # FROM <stage>: inherits
            if base in names and names.index(base) in nvidia:
                nvidia.add(i)
        if len(nvidia) == before:
            break
    return {
        name for i, name in enumerate(names[:-1]) if name and i in nvidia and not is_nvidia_image(bases[i])
    }


def read_dockerfile(b: UnitBuilder) -> None:
    code, instructions = _instructions(b.code)
    line_starts = [0] + [m.end() for m in re.finditer("\n", code)]
    global_args: Dict[str, str] = {}
    stages: Dict[str, Optional[str]] = {}
    nvidia_fed = _nvidia_fed_stages(code, instructions) if "--from" in code.lower() else set()
    gate: Optional[str] = None
    seen_from = False
    skip_until = -1
    for start, end, last in instructions:
        if start < skip_until:
            continue  # inside a here-document
        m = _INSTRUCTION.match(code, start, end)
        if not m:
            continue
        keyword = m.group(1).upper()
        body = m.end()
        if keyword == "FROM":
            seen_from = True
            words = [w for w in code[body:end].split() if not w.startswith("--")]
            image = _resolve(words[0], global_args) if words else ""
            if image.lower() in stages:
                gate = stages[image.lower()]
            elif is_nvidia_image(image):
                gate = NVIDIA
            elif is_rocm_image(image):
                gate = ROCM
            else:
                gate = None
            if gate is None and len(words) >= 3 and words[2].lower() in nvidia_fed:
                gate = NVIDIA  # a builder stage only NVIDIA stages copy from
            if len(words) >= 3 and words[1].lower() == "as":
                stages[words[2].lower()] = gate
        elif keyword in ("ENV", "ARG"):
            for s in _env_pairs(code, body, end, keyword, gate):
                b.settings.append(s)
                if keyword == "ARG" and not seen_from:
                    global_args[s.name] = s.value
        elif keyword in ("RUN", "CMD", "ENTRYPOINT"):
            at = body
            while True:  # RUN --mount=... --network=...
                fm = _RUN_FLAG.match(code, at, end)
                if not fm:
                    break
                at = fm.end()
            if code[at:end].lstrip().startswith("["):
                b.exec_form(at, end, gate)  # exec form: a program and its arguments, no shell
                continue
            heredocs = list(_HEREDOC.finditer(code, at, end))
            b.shell(at, end, gate, text=code)
            # here-documents (`RUN <<EOF` ... `EOF`): their bodies are scripts, or files the step writes
            body_start, line_no = end + 1, last + 1  # bodies follow each other after the line
            for hm in heredocs:
                delim = hm.group(2)
                # the body is the step's script (`RUN <<EOF`, `RUN bash -e <<EOF`), else a file's data
                before = re.split(r"&&|\|\||;|\|", code[at : hm.start()])[-1].strip()
                script = not before or bool(_SHELL_COMMAND.fullmatch(before))
                j = line_no
                while j < len(line_starts):
                    line_end = code.find("\n", line_starts[j])
                    line = code[line_starts[j] : line_end if line_end >= 0 else len(code)]
                    if line.strip() == delim:
                        break
                    j += 1
                body_end = line_starts[j] if j < len(line_starts) else len(code)
                if script and body_start < body_end:
                    b.shell(body_start, body_end, gate, text=code)
                line_no = j + 1
                body_start = line_starts[j + 1] if j + 1 < len(line_starts) else len(code)
                skip_until = body_start


def _resolve(image: str, args: Dict[str, str]) -> str:
    def sub(m: "re.Match[str]") -> str:
        name = m.group(1) or m.group(3)
        return args.get(name, m.group(2) or "")

    return re.sub(r"\$\{([A-Za-z_]\w*)(?::?-([^}]*))?\}|\$([A-Za-z_]\w*)", sub, image)


def _env_pairs(code: str, start: int, end: int, keyword: str, gate: Optional[str]) -> List[Setting]:
    """``ENV A=1 B="x y"`` / ``ENV A x y`` / ``ARG A=1`` / ``ARG A``."""
    reader = ShellReader(code, start, start)  # only its word reader is used
    reader.end = end
    out: List[Setting] = []
    i = start
    words: List[Word] = []
    while i < end:
        c = code[i]
        if c in " \t\n\r\f":
            i += 1
            continue
        if c == "\\" and i + 1 < end and code[i + 1] in "\n\r":
            i += 2
            continue
        if c == "#" and (i == start or code[i - 1] in " \t"):
            break  # not a comment to Docker, but no setting either
        w = reader.read_word(i)
        if w.end <= i:
            i += 1
            continue
        words.append(w)
        i = w.end
    if not words:
        return out
    if keyword == "ENV" and "=" not in code[words[0].start : words[0].end]:
        # legacy `ENV NAME value with spaces`
        name = words[0].value
        if len(words) > 1 and re.fullmatch(r"[A-Za-z_]\w*", name):
            first, last = words[1], words[-1]
            value = " ".join(w.value for w in words[1:])
            out.append(
                Setting(
                    name,
                    value,
                    words[0].start,
                    first.start,
                    last.end,
                    "ENV",
                    any(w.computed for w in words[1:]),
                    False,
                    gate,
                )
            )
        return out
    for w in words:
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", code[w.start : w.end])
        if m:
            value = (
                reader.read_word(w.start + m.end())
                if w.start + m.end() < w.end
                else Word(w.end, w.end, "", False)
            )
            out.append(
                Setting(
                    m.group(1),
                    value.value,
                    w.start,
                    w.start + m.end(),
                    w.end,
                    keyword,
                    value.computed,
                    keyword == "ARG",
                    gate,
                )
            )
        elif keyword == "ARG" and re.fullmatch(r"[A-Za-z_]\w*", w.value):
            continue  # `ARG NAME`: declared, no value
    return out


# -- .env -------------------------------------------------------------------------------------------
