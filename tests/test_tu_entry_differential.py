"""``rocm_lint.cpp.tu_entry`` against the real preprocessor: generated include graphs (a few
``.cu`` files, headers including headers, guards, ``#pragma once`` and unguarded ``.inl`` files,
``#define``/``#undef``/``#if`` on values, per-platform ``-D`` flags from the build) are run
through gcc's ``cpp -dD -E`` once per translation unit and platform; the macros in effect at every
entry of a header are read from its output (``#define``/``#undef`` in order, the line markers
that enter a file).  Wherever the analysis gives a fact at a header's entry it must hold at every
entry cpp makes, and a platform on which the analysis says no inclusion compiles the header has
no entry in cpp's output either; where the entries disagree the analysis gives none."""

import os
import random
import re
import shutil
import subprocess

import pytest

from rocm_lint.cpp.tu_entry import entry_environment
from rocm_lint.workspace import Workspace

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("cpp") is None, reason="gcc's cpp is not installed"),
]

CMAKE = """cmake_minimum_required(VERSION 3.21)
project(gen LANGUAGES CXX)
if(USE_ROCM)
  add_compile_definitions(GEN_HIP=1)
else()
  add_compile_definitions(GEN_NV=2)
endif()
add_library(gen {sources})
"""
# the -D flags each platform's compiler gets: the build's, and the ROCm macros the model assumes
FLAGS = (["-DGEN_NV=2"], ["-DUSE_ROCM=1", "-D__HIP_PLATFORM_AMD__=1", "-DGEN_HIP=1"])
MACROS = ("MA", "MB", "MC", "MD")
HEADERS = ("h0.h", "h1.cuh", "detail/h2.inl", "detail/h3.h", "h4.inl", "detail/h5.cuh")
SOURCES = ("s0.cu", "s1.cu", "s2.cu")


def _condition(rng):
    m = rng.choice(MACROS)
    atoms = [
        f"defined({m})",
        f"!defined({m})",
        f"{m} == {rng.randint(0, 3)}",
        f"{m} > {rng.randint(0, 2)}",
        "defined(USE_ROCM)",
        "defined(__HIP_PLATFORM_AMD__)",
        "GEN_HIP",
        "defined(GEN_NV)",
        "GEN_NV == 2",
    ]
    a = rng.choice(atoms)
    if rng.random() < 0.3:
        a = f"({a}) {rng.choice(('&&', '||'))} ({rng.choice(atoms)})"
    return a


def _guard(header):
    return "GUARD_" + re.sub(r"\W", "_", header).upper()


def _body(rng, includable, depth=0):
    lines = []
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        m = rng.choice(MACROS)
        if r < 0.3:
            value = rng.choice((str(rng.randint(0, 3)), rng.choice(MACROS), f"{rng.choice(MACROS)}+1"))
            lines.append(f"#define {m} {value}")
        elif r < 0.4:
            lines.append(f"#define FN_{m}(x, y) x+{m}")
        elif r < 0.5:
            lines.append(f"#undef {m}")
        elif r < 0.75 and includable:
            lines.append(f'#include "{rng.choice(includable)}"')
        elif depth < 2:
            lines.append(
                f"#{rng.choice(('if', 'if', 'ifdef', 'ifndef'))} " + (_condition(rng) if True else "")
            )
            if lines[-1].startswith(("#ifdef", "#ifndef")):
                lines[-1] = lines[-1].split()[0] + " " + m
            lines += _body(rng, includable, depth + 1)
            if rng.random() < 0.3:
                lines.append(f"#elif {_condition(rng)}")
                lines += _body(rng, includable, depth + 1)
            if rng.random() < 0.5:
                lines.append("#else")
                lines += _body(rng, includable, depth + 1)
            lines.append("#endif")
    return lines


def _generate(rng, root):
    files = {}
    for i, header in enumerate(HEADERS):
        body = _body(rng, HEADERS[i + 1 :])
        kind = rng.random()
        guard = _guard(header)
        if kind < 0.6:
            text = [f"#ifndef {guard}", f"#define {guard}", *body, "#endif"]
        elif kind < 0.8:
            text = ["#pragma once", *body]
        else:
            text = body
        files["src/" + header] = "\n".join(text) + "\n"
    for source in SOURCES:
        # a source that starts from a known state (every project macro defined) or not (the
        # command line may define them: unknown to the analysis)
        known = [f"#define {m} {rng.randint(0, 3)}" for m in MACROS] if rng.random() < 0.5 else []
        files["src/" + source] = "\n".join(known + _body(rng, HEADERS)) + "\n"
    files["CMakeLists.txt"] = CMAKE.format(sources=" ".join("src/" + s for s in SOURCES))
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


_MARKER = re.compile(r'^# \d+ "([^"]+)"((?: \d+)*)$')
_DEFINE = re.compile(r"^#define ([A-Za-z_]\w*)(\([^)]*\))?(?: (.*))?$")
_UNDEF = re.compile(r"^#undef ([A-Za-z_]\w*)")


def _cpp_entries(root, tu, world):
    """{header real path: [macros at each entry]} of one translation unit on one platform."""
    out = subprocess.run(
        ["cpp", "-dD", "-E", "-undef", "-I", "src", *FLAGS[world], os.path.relpath(tu, root)],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    env, entries = {}, {}
    entries[None] = [env]  # (the state at the end of the unit: ``_cpp_final`` checks the reading)
    for line in out.stdout.splitlines():
        m = _MARKER.match(line)
        if m:
            if "1" in m.group(2).split() and not m.group(1).startswith("<"):
                path = os.path.realpath(os.path.join(root, m.group(1)))
                if _guard(os.path.relpath(path, root / "src")) not in env:
                    # (an entry whose guard is defined compiles nothing of the header)
                    entries.setdefault(path, []).append(dict(env))
            continue
        d = _DEFINE.match(line)
        if d:
            env[d.group(1)] = (
                (d.group(2) or "").replace(" ", "") or None,
                " ".join((d.group(3) or "").split()),
            )
            continue
        u = _UNDEF.match(line)
        if u:
            env.pop(u.group(1), None)
    return entries


def _cpp_final(root, tu, world):
    """The macros at the end of the unit as ``cpp -dM -E`` lists them (built-ins left out): the
    reading of ``-dD``'s output above must end there."""
    out = subprocess.run(
        ["cpp", "-dM", "-E", "-undef", "-I", "src", *FLAGS[world], os.path.relpath(tu, root)],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    env = {}
    for line in out.stdout.splitlines():
        d = _DEFINE.match(line)
        if d and not d.group(1).startswith("__") and not d.group(1).startswith("_STDC"):
            env[d.group(1)] = (
                (d.group(2) or "").replace(" ", "") or None,
                " ".join((d.group(3) or "").split()),
            )
    return env


def _check_seed(seed, tmp_path):
    rng = random.Random(seed)
    root = tmp_path / f"g{seed}"
    _generate(rng, root)
    included = set()
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in (".h", ".cuh", ".inl", ".cu"):
            included |= {
                os.path.realpath(root / "src" / m)
                for m in re.findall(r'#include "([^"]+)"', path.read_text())
            }
    # the translation units: every source, and every header nothing includes
    tus = [root / "src" / s for s in SOURCES] + [
        root / "src" / h for h in HEADERS if os.path.realpath(root / "src" / h) not in included
    ]
    reference = [{}, {}]
    for world in (0, 1):
        for tu in tus:
            found = _cpp_entries(root, tu, world)
            final = {n: v for n, v in found.pop(None)[0].items() if not n.startswith(("__", "_STDC"))}
            assert final == _cpp_final(root, tu, world)
            for path, envs in found.items():
                reference[world].setdefault(path, []).extend(envs)
    ws = Workspace()
    facts = agreed = given = 0
    for header in HEADERS:
        path = os.path.realpath(root / "src" / header)
        entry = entry_environment(ws, path)
        if path not in included:
            assert entry is None, (seed, header)  # no includer: today's per-file view
            continue
        for world in (0, 1):
            seen = reference[world].get(path, [])
            if entry is None:
                continue
            mine = entry.macros[world]
            if mine is None:
                assert not seen, (seed, header, world, "the analysis says never compiled here")
                continue
            for name, (defined, body, params, _, _) in mine.items():
                if name == _guard(header):
                    continue  # the header's own guard: left out of its seed
                facts += 1
                for env in seen:
                    if defined:
                        assert name in env, (seed, header, world, name, body)
                        assert env[name] == (
                            (params or "").replace(" ", "") or None,
                            " ".join((body or "").split()),
                        ), (
                            seed,
                            header,
                            world,
                            name,
                        )
                    else:
                        assert name not in env, (seed, header, world, name)
            if seen:  # how much of what every entry agrees on the analysis gives
                common = {n for n in seen[0] if all(e.get(n) == seen[0][n] for e in seen)}
                named = set(re.findall(r"[A-Za-z_]\w*", (root / "src" / header).read_text()))
                user = {n for n in common if (n in MACROS or n.startswith("FN_")) and n in named}
                agreed += len(user)
                given += len(user & {n for n, m in mine.items() if m[0]})
    return facts, agreed, given


def test_the_entry_macros_agree_with_cpp_on_generated_include_graphs(tmp_path):
    facts = agreed = given = 0
    for seed in range(40):
        f, a, g = _check_seed(seed, tmp_path)
        facts, agreed, given = facts + f, agreed + a, given + g
    # a test that can fail: the analysis gives facts, not only "no fact" (the project's macros every
    # entry agrees on and that the analysis gives defined: most of them)
    assert facts > 200 and 3 * given > agreed, (facts, agreed, given)
