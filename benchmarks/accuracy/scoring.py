"""Scoring of the accuracy benchmark: findings of one labeled file against its labels, tallies per
kind and per code, and the naive grep baseline scored the same way.

Rules (docs/benchmarks.md, "Accuracy benchmark"):
- a finding matches a hazard when the code is equal and its line is one of the hazard's lines +-1;
  each finding matches at most one hazard and each hazard at most one finding (a maximum matching,
  nearest lines first);
- another finding with the same code on a hazard's lines, or on the line of a finding that hit a
  hazard, is a second occurrence: neither a hit nor a false positive (a neighbouring line labeled
  otherwise keeps its own class);
- findings on ambiguous lines are ignored; findings on uncovered lines are counted apart;
- every other finding in a labeled file is a false positive: on a labeled decoy line, or on an
  unlabeled line (a finding with another code on a hazard's line counts there too, tallied apart).
This module imports nothing of rocm_lint.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

# The grep a porting engineer would run before any tool: one pattern per code, over the labeled
# files of the kinds listed (grep -rn --include=...).  Every pattern is linear: literals, classes
# and at most one unanchored `.*` before a literal.
GREP_BASELINE = [
    ("ROC101", "py", r"allow_tf32"),
    ("ROC102", "py", r"reduced_precision_reduction"),
    ("ROC103", "py", r"sdpa?_kernel\(|enable_(?:flash|mem_efficient|cudnn)_sdp\(|enable_math_sdp\(\s*False"),
    ("ROC104", "py", r"cufft_plan_cache"),
    ("ROC105", "py", r"init_process_group\(.*backend\s*=\s*[\"'](?:mpi|ucc|nvshmem|cuda)"),
    ("ROC106", "py", r"get_device_capability\("),
    ("ROC107", "py", r"torch\.version\.cuda"),
    ("ROC201", "py cfg", r"reduce-overhead"),
    ("ROC202", "py cfg", r"max-autotune"),
    ("ROC203", "py", r"triton\.cudagraphs|cudagraph_trees"),
    ("ROC204", "py", r"max_autotune\b|TORCHINDUCTOR_MAX_AUTOTUNE"),
    ("ROC205", "py", r"memory_planning"),
    ("ROC301", "py cfg", r"max_split_size_mb"),
    ("ROC302", "cfg", r"TORCHINDUCTOR_MAX_AUTOTUNE"),
    ("ROC401", "py", r"^\s*(?:import|from)\s+pynvml\b"),
    ("ROC402", "py", r"^\s*(?:import|from)\s+(?:tensorrt|torch_tensorrt|nvtx|pycuda|nvidia\.dali)\b"),
    ("ROC403", "py", r"^\s*(?:import|from)\s+flash_attn\b"),
    ("ROC404", "py cfg", r"nvidia-smi|\bnvcc\b|\bnsys\b|\bncu\b|\bnvprof\b"),
    (
        "ROC501",
        "py",
        r"-Xptxas|--ptxas-options|--expt-relaxed-constexpr|--expt-extended-lambda|--use_fast_math|-lineinfo",
    ),
    ("ROC502", "py cfg", r"TORCH_CUDA_ARCH_LIST|-gencode|CMAKE_CUDA_ARCHITECTURES|\bsm_[0-9]{2}"),
    ("ROC503", "py cfg", r"\bgfx[0-9]{3,4}|--offload-arch|PYTORCH_ROCM_ARCH"),
    ("ROC601", "cpp", r"__ballot_sync|__ballot\(|__activemask"),
    ("ROC602", "cpp", r"0xffffffff|FULL_MASK|~0u\b"),
    ("ROC603", "cpp", r"WARP_SIZE\s*=?\s*32\b|&\s*31\b|%\s*32\b|>>\s*5\b"),
    ("ROC604", "cpp", r"warpSize|__AMDGCN_WAVEFRONT_SIZE"),
    ("ROC605", "cpp", r"(?i:wave(?:front)?_?size)\s*=?\s*64\b"),
    ("ROC701", "cpp py", r"\basm\s*(?:volatile\s*)?\(|__asm__|inline_asm_elementwise"),
    (
        "ROC702",
        "cpp",
        r"#\s*include\s*[<\"](?:cuda|cublas|cufft|curand|cusparse|cusolver|cudnn|nvToolsExt|nvrtc)\w*\.h",
    ),
    ("ROC703", "cpp", r"#\s*(?:el)?if.*\b(?:CUDA_VERSION|CUDART_VERSION|__CUDACC_VER_MAJOR__)"),
    ("ROC704", "cpp", r"cudaRuntimeGetVersion|cudaDriverGetVersion"),
    ("ROC705", "cpp", r"__CUDA_ARCH__\s*(?:>=|<=|>|<|==)"),
    ("ROC706", "cpp", r"nvcuda::wmma|wmma::|<mma\.h>"),
    ("ROC707", "cpp", r"cutlass|\bcute::|<cute/|<cuda/"),
    ("ROC708", "cpp", r"__nanosleep|__syncwarp\(|__pipeline_|memcpy_async|cp\.async"),
    ("ROC801", "py", r"float8_e4m3fn\b|float8_e5m2\b"),
    ("ROC802", "py", r"(?i:warp_?size)\s*[=:]\s*32\b|num_warps\s*=\s*(?:32|64)\b"),
]
_GREP = [(code, set(kinds.split()), re.compile(rx)) for code, kinds, rx in GREP_BASELINE]


@dataclass(frozen=True)
class Finding:
    code: str
    line: int
    message: str = ""


def grep_findings(text, kind):
    """The grep baseline's findings in one file's text: one per line and matching pattern."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        for code, kinds, rx in _GREP:
            if kind in kinds:
                m = rx.search(line)
                if m:
                    out.append(Finding(code, n, f"grep: {m.group(0)}"))
    return out


def _match(hazards, findings):
    """Maximum matching of findings to hazards (same code, line within +-1), nearest lines first."""

    def dist(f, h):
        return min(abs(f.line - n) for n in h.lines)

    options = {}
    for i, f in enumerate(findings):
        near = [(dist(f, h), j) for j, h in enumerate(hazards) if h.code == f.code and dist(f, h) <= 1]
        options[i] = [j for _, j in sorted(near)]
    owner = {}  # hazard index -> finding index

    def augment(i, seen):
        for j in options[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for dmax in (0, 1):  # exact lines first, so an off-by-one finding never steals an exact one's hazard
        for i, f in enumerate(findings):
            if i not in owner.values() and any(dist(f, hazards[j]) <= dmax for j in options[i]):
                augment(i, set())
    return {i: j for j, i in owner.items()}


def score_file(labels, findings):
    """Classify a labeled file's findings: dict of hits [(hazard, finding)], misses [hazard],
    second, ambiguous, uncovered [finding], fps [(finding, where, decoy_note)]."""
    findings = sorted(findings, key=lambda f: (f.line, f.code, f.message))
    matched = _match(labels.hazards, findings)
    amb = labels.lines_of("ambiguous")
    unc = labels.lines_of("uncovered")
    decoy_notes = {}
    for d in labels.decoys:
        for n in d.lines:
            decoy_notes.setdefault(n, d.note)
    hazard_lines = labels.lines_of("hazards")
    out = {"hits": [], "misses": [], "second": [], "ambiguous": [], "uncovered": [], "fps": []}
    hit_hazards = set()
    for i, j in matched.items():
        out["hits"].append((labels.hazards[j], findings[i]))
        hit_hazards.add(j)
    hit_at = {(findings[i].code, findings[i].line) for i in matched}
    out["misses"] = [h for j, h in enumerate(labels.hazards) if j not in hit_hazards]
    for i, f in enumerate(findings):
        if i in matched:
            continue
        if any(h.code == f.code and f.line in h.lines for h in labels.hazards) or (f.code, f.line) in hit_at:
            out["second"].append(f)
        elif f.line in amb:
            out["ambiguous"].append(f)
        elif f.line in unc:
            out["uncovered"].append(f)
        elif f.line in decoy_notes:
            out["fps"].append((f, "decoy", decoy_notes[f.line]))
        elif f.line in hazard_lines:
            out["fps"].append((f, "other-code", ""))
        else:
            out["fps"].append((f, "unlabeled", ""))
    return out


_COUNTS = (
    "hazards",
    "hits",
    "misses",
    "fp",
    "fp_decoy",
    "fp_unlabeled",
    "fp_other_code",
    "second",
    "ambiguous",
    "uncovered",
)


def _ratio(a, b):
    return round(a / b, 4) if b else None


class Tally:
    """Counts overall, per kind and per code; recall and precision from them."""

    def __init__(self):
        self.groups = defaultdict(lambda: dict.fromkeys(_COUNTS, 0))

    def add(self, kind, result):
        def bump(code, key, n=1):
            for g in ("all", "kind:" + kind, "code:" + code):
                self.groups[g][key] += n

        for h, _ in result["hits"]:
            bump(h.code, "hazards")
            bump(h.code, "hits")
        for h in result["misses"]:
            bump(h.code, "hazards")
            bump(h.code, "misses")
        for key in ("second", "ambiguous", "uncovered"):
            for f in result[key]:
                bump(f.code, key)
        for f, where, _ in result["fps"]:
            bump(f.code, "fp")
            bump(f.code, "fp_decoy" if where == "decoy" else "fp_unlabeled")
            if where == "other-code":
                bump(f.code, "fp_other_code")

    def stats(self, group):
        c = dict(self.groups[group]) if group in self.groups else dict.fromkeys(_COUNTS, 0)
        c["recall"] = _ratio(c["hits"], c["hazards"])
        c["precision"] = _ratio(c["hits"], c["hits"] + c["fp"])
        c["precision_decoys"] = _ratio(c["hits"], c["hits"] + c["fp_decoy"])
        return c

    def table(self):
        kinds = sorted(g[5:] for g in self.groups if g.startswith("kind:"))
        codes = sorted(g[5:] for g in self.groups if g.startswith("code:"))
        return {
            "overall": self.stats("all"),
            "kinds": {k: self.stats("kind:" + k) for k in kinds},
            "codes": {c: self.stats("code:" + c) for c in codes},
        }
