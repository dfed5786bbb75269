"""Editor latency of ``rocm-lint server``: ``didChange`` -> ``publishDiagnostics`` on a 3,000-line module.

The script is the editor: it starts the real server (``python -m rocm_lint server``) over stdio,
opens a module of the torch 2.13.0 wheel's sources (``$ROCM_LINT_BENCH_DIR``, as
``bench_python.py`` unpacks them, or ``--tree``) and types into it: each edit inserts or removes
one statement in the middle of the module (incremental sync, as editors send keystrokes), waits
for the diagnostics of that version and records the wall time and the server process's CPU time
(``/proc/PID/task/*/schedstat``; the machine is shared, CPU time is the steadier figure).

Modules (``--module``, repeatable; paths inside the tree, checked under their own name so that
their imports resolve):

* ``torch/_inductor/utils.py`` cut at the last top-level statement before line 3,000 (2,996
  lines; it imports many project modules: the project model's share of a keystroke);
* ``torch/utils/cpp_extension.py`` whole (3,315 lines; trigger-rich: nvcc flags, capability
  checks, build code).

``--debounce MS`` is the server setting (``initializationOptions``); the latency rows use 0 (the
check itself, what a keystroke waits for after the quiet spell) and a burst row uses the default:
``--burst N`` edits sent back to back, then the number of ``publishDiagnostics`` that came and the
time to the last version's.  With ``--baseline-src DIR`` (another checkout's ``src/``, e.g. a
``git worktree`` of main) a second server runs the same edits, alternating with this one edit by
edit, so a slow spell of the machine hits both.

Usage: python benchmarks/bench_lsp.py [--tree DIR] [--module REL ...] [--edits N] [--burst N]
                                      [--baseline-src DIR]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(os.environ.get("ROCM_LINT_BENCH_DIR", Path(tempfile.gettempdir()) / "rocm-lint-bench"))
SRC = Path(__file__).resolve().parent.parent / "src"
MODULES = ("torch/_inductor/utils.py@3000", "torch/utils/cpp_extension.py")


def module_text(tree: Path, spec: str) -> Tuple[Path, str]:
    """``REL[@LINES]``: the module, cut at its last top-level statement ending by line LINES."""
    rel, _, limit = spec.partition("@")
    path = tree / rel
    text = path.read_text(encoding="utf-8")
    if limit:
        body = ast.parse(text).body
        end = max(s.end_lineno or 0 for s in body if (s.end_lineno or 0) <= int(limit))
        text = "".join(text.splitlines(keepends=True)[:end])
    return path, text


class Server:
    """One ``rocm-lint server`` process and the JSON-RPC of a minimal editor."""

    def __init__(self, name: str, src: Path, root: Path, options: dict) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = str(src)
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rocm_lint", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=root,
        )
        self.next_id = 0
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {},
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})

    def send(self, message: dict) -> None:
        body = json.dumps(dict(message, jsonrpc="2.0")).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def receive(self) -> dict:
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"{self.name}: the server exited")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                return message
            if "id" in message and "method" in message:  # a request of the server's: answer it
                self.send({"id": message["id"], "result": None})

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def published(self, uri: str, version: int) -> Tuple[int, list]:
        """Wait for the diagnostics of ``version``; (how many publications came, the last's)."""
        count = 0
        while True:
            message = self.receive()
            if "id" in message and "method" in message:
                self.send({"id": message["id"], "result": None})
            if message.get("method") != "textDocument/publishDiagnostics":
                continue
            params = message["params"]
            if params["uri"] == uri:
                count += 1
                if params.get("version") == version:
                    return count, params["diagnostics"]

    def cpu(self) -> float:
        """CPU seconds of the server's threads so far (``schedstat``: nanoseconds; ``stat``'s
        clock ticks are 10 ms, too coarse for one keystroke)."""
        total = 0
        for task in os.listdir(f"/proc/{self.proc.pid}/task"):
            try:
                with open(f"/proc/{self.proc.pid}/task/{task}/schedstat") as fh:
                    total += int(fh.read().split()[0])
            except OSError:  # a thread that ended meanwhile
                continue
        return total / 1e9

    def close(self) -> None:
        try:
            self.request("shutdown", {})
            self.notify("exit", {})
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a benchmark's teardown
            self.proc.kill()


class Document:
    """The text one server holds, edited by inserting and removing a statement mid-module."""

    def __init__(self, server: Server, path: Path, text: str) -> None:
        self.server, self.uri, self.version = server, path.as_uri(), 1
        self.line = _statement_line(text)
        self.inserted = False
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": self.uri, "languageId": "python", "version": 1, "text": text}},
        )
        server.published(self.uri, 1)

    def edit(self) -> None:
        start = {"line": self.line, "character": 0}
        if self.inserted:
            change = {"range": {"start": start, "end": {"line": self.line + 1, "character": 0}}, "text": ""}
        else:
            change = {"range": {"start": start, "end": start}, "text": f"_edit = {self.version}\n"}
        self.inserted = not self.inserted
        self.version += 1
        self.server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": [change]},
        )

    def keystroke(self) -> Tuple[float, float]:
        """(wall seconds, server CPU seconds) from didChange to its diagnostics."""
        cpu = self.server.cpu()
        start = time.perf_counter()
        self.edit()
        self.server.published(self.uri, self.version)
        return time.perf_counter() - start, self.server.cpu() - cpu


def _statement_line(text: str) -> int:
    """0-based line of the top-level statement nearest the middle: an edit there parses."""
    middle = text.count("\n") // 2
    starts = [
        (s.decorator_list[0].lineno if getattr(s, "decorator_list", None) else s.lineno) - 1
        for s in ast.parse(text).body
    ]
    return min(starts, key=lambda line: abs(line - middle))


def percentile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=ROOT / "torch-2.13.0", help="the torch wheel's sources")
    ap.add_argument(
        "--module", action="append", help=f"REL[@LINES] in the tree (default: {', '.join(MODULES)})"
    )
    ap.add_argument("--edits", type=int, default=40, help="timed edits per server and module")
    ap.add_argument("--burst", type=int, default=20, help="edits sent back to back (default debounce)")
    ap.add_argument(
        "--no-profile", action="store_true", help="no profile of what is left under a goal not met"
    )
    ap.add_argument("--baseline-src", type=Path, help="another checkout's src/: the same edits, alternately")
    args = ap.parse_args()
    if not (args.tree / "torch").is_dir():
        raise SystemExit(
            f"{args.tree}: no torch sources (run benchmarks/bench_python.py --corpus torch, or --tree)"
        )
    sides: Dict[str, Path] = {"this": SRC}
    if args.baseline_src:
        sides["baseline"] = args.baseline_src.resolve()
    print(
        f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, {args.edits} edits per row, "
        f"sides alternating edit by edit: {', '.join(f'{k}={v}' for k, v in sides.items())}"
    )
    for spec in args.module or MODULES:
        path, text = module_text(args.tree, spec)
        print(f"module {path.relative_to(args.tree)} ({text.count(chr(10))} lines), debounce 0")
        servers = {name: Server(name, src, args.tree, {"debounce": 0}) for name, src in sides.items()}
        try:
            docs = {name: Document(s, path, text) for name, s in servers.items()}
            for doc in docs.values():  # warm: the first checks read the imported modules
                for _ in range(3):
                    doc.keystroke()
            walls: Dict[str, List[float]] = {n: [] for n in docs}
            cpus: Dict[str, List[float]] = {n: [] for n in docs}
            for _ in range(args.edits):
                for name, doc in docs.items():
                    wall, cpu = doc.keystroke()
                    walls[name].append(wall)
                    cpus[name].append(cpu)
            for name in docs:
                print(
                    f"  {name:<9} didChange -> diagnostics: wall median {statistics.median(walls[name]) * 1000:6.1f} ms"
                    f"  p90 {percentile(walls[name], 0.9) * 1000:6.1f} ms;  server CPU median "
                    f"{statistics.median(cpus[name]) * 1000:6.1f} ms  p90 {percentile(cpus[name], 0.9) * 1000:6.1f} ms"
                )
            this_cpu = statistics.median(cpus["this"]) * 1000
            print(
                f"  goal: didChange -> diagnostics <= 50 ms median server CPU: {'MET' if this_cpu <= 50 else 'NOT MET'} "
                f"({this_cpu:.1f} ms)"
            )
            if this_cpu > 50 and not args.no_profile:
                sys.path.insert(0, str(Path(__file__).resolve().parent))
                import leftover

                print(
                    "  what is left, by profile of the same check in-process (10 checks of the text, warm):"
                )
                print("\n".join(leftover.render(leftover.profile_checks([str(path)], 10, {str(path): text}))))
                print(f"  the design that would meet it: {leftover.DESIGN}")
            if len(docs) == 2:
                print(
                    f"  ratio this/baseline: wall {statistics.median(walls['this']) / statistics.median(walls['baseline']):.2f}x"
                    f"  CPU {statistics.median(cpus['this']) / max(statistics.median(cpus['baseline']), 1e-9):.2f}x"
                )
        finally:
            for server in servers.values():
                server.close()
        if args.burst:
            burst(args, path, text, sides)
    return 0


def burst(args, path: Path, text: str, sides: Dict[str, Path]) -> None:
    """``--burst`` edits back to back, each server with its default debounce."""
    for name, src in sides.items():
        server = Server(name, src, args.tree, {})
        try:
            doc = Document(server, path, text)
            cpu, start = server.cpu(), time.perf_counter()
            for _ in range(args.burst):
                doc.edit()
            count, _ = server.published(doc.uri, doc.version)
            print(
                f"  {name:<9} burst of {args.burst} edits (default debounce): {count} publications, last version's "
                f"after {(time.perf_counter() - start) * 1000:.0f} ms, server CPU {(server.cpu() - cpu) * 1000:.0f} ms"
            )
        finally:
            server.close()


if __name__ == "__main__":
    sys.exit(main())
