"""What an inline-assembly text is written in: PTX, AMD GCN, or neither (a CPU's).

PTX instructions carry dotted type/space qualifiers (``mov.u32``, ``ld.global.nc.v4.u32``,
``mma.sync``); AMD GCN mnemonics use underscores (``v_mov_b32``, ``s_waitcnt``).  CPU vector
instruction sets write dotted words too (RISC-V ``vle32.v``, ``vxor.vv``, ``fence.i``; LoongArch
``ld.w``, ``xvpermi.q``; MIPS ``cvt.s.w``; ARM operands ``v0.4s``, ``p0.b``): a dotted word is PTX
only when its mnemonic is a PTX opcode and, unless the opcode is PTX's alone (``shfl``,
``ldmatrix``, ``cp``, ``mbarrier`` ...), one of its qualifiers is PTX's (a type, a state space, a
memory order or scope, a rounding mode ...).
"""

from __future__ import annotations

import re
from typing import Optional

from rocm_lint.lazy import LazyPattern

_PTX_CANDIDATE = LazyPattern(
    r"(?:^|[;{}\s]|\\[nt])(?:@!?%?\w+\s+)?([a-z][a-z0-9]*)((?:\.[a-z0-9_]+)+)\b"
    r"|(?:^|[;{}\s])\.(?:reg|pred)\b|(?:^|[;{}\s])\.(?:shared|local|global|param)\s+\."
    r"|^\s*(?:trap|brkpt|pmevent)\s*;"
)
# Opcodes no CPU instruction set writes with a dot: the mnemonic alone says PTX.
PTX_ONLY_OPCODES = frozenset(
    (
        "activemask alloca applypriority bar barrier bfind bmsk brkpt clusterlaunchcontrol cnot copysign cp "
        "createpolicy cvta discard dp2a dp4a elect ex2 fns getctarank griddepcontrol isspacep istypep ldmatrix "
        "ldu lg2 lop3 mapa mbarrier membar mma movmatrix multimem nanosleep pmevent prefetchu prmt redux rsqrt "
        "selp setmaxnreg setp shfl stackrestore stacksave stmatrix suld suq sured sust szext tanh tcgen05 "
        "tensormap testp tld4 txq vote wgmma wmma"
    ).split()
)
# PTX opcodes CPU assembly also writes with dots (RISC-V `fence.i`, LoongArch `add.w`, MIPS
# `cvt.s.w`, RISC-V V `vadd.vv`): PTX only with a PTX qualifier.
PTX_SHARED_OPCODES = frozenset(
    (
        "abs add addc and atom bfe bfi bra brev brx call clz cos cvt div exit fence fma ld mad mad24 madc match "
        "max min mov mul mul24 neg not or popc prefetch rcp red rem ret sad set shf shl shr sin slct sqrt st sub "
        "subc tex trap vabsdiff vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin "
        "vmin2 vmin4 vset vset2 vset4 vshl vshr vsub vsub2 vsub4 xor"
    ).split()
)
PTX_QUALIFIERS = frozenset(
    (
        "b1 b8 b16 b32 b64 b128 u4 u8 u16 u32 u64 s4 s8 s16 s32 s64 f16 f16x2 f32 f64 bf16 bf16x2 tf32 e4m3 "
        "e5m2 e4m3x2 e5m2x2 e2m1x2 e2m3x2 e3m2x2 ue8m0x2 pred v2 v4 v8 global shared local const param generic "
        "relaxed acquire release acq_rel sc weak volatile mmio nc ca cg cs lu cv wb wt cta cluster gpu sys async "
        "bulk rn rz rm rp rni rzi rmi rpi rna ftz sat approx full relu sync aligned uni eq ne lt le gt ge lo ls hi "
        "hs ltu leu gtu geu equ neu num nan exch cas inc dec wide cc to proxy tensormap"
    ).split()
)


def ptx_instruction(text: str) -> "Optional[re.Match[str]]":
    """The first PTX instruction (or `.reg`/`.pred` declaration) of an assembly text, as a match
    whose ``group(0)`` holds it (with what precedes it on its line: a separator, a predicate);
    None when the text has none."""
    for m in _PTX_CANDIDATE.finditer(text):
        opcode = m.group(1)
        if opcode is None or opcode in PTX_ONLY_OPCODES:
            return m
        if opcode in PTX_SHARED_OPCODES and any(q in PTX_QUALIFIERS for q in m.group(2)[1:].split(".")):
            return m
    return None


# AMD assembly is not PTX: an asm label naming an LLVM AMDGPU intrinsic
# (`__device__ float rcp(float) __asm("llvm.amdgcn.rcp.f32");`, any `llvm.` intrinsic but NVVM's),
# and AMDGCN instructions (`v_mov_b32`, `s_waitcnt`, `ds_read_b128`, `buffer_load_dword`,
# `global_load_dwordx4` ...) at the start of a statement of the asm text.
_LLVM_LABEL = LazyPattern(r"\s*llvm\.(?!nvvm\.|nvptx)[a-z0-9_.]+\s*")
_AMDGCN = LazyPattern(
    r"(?:^|[;\n]|\\n)\s*(?:v|s|ds|buffer|tbuffer|global|flat|scratch|image|exp)_[a-z0-9_]+\b"
)


def is_amd_assembly(text: str) -> bool:
    """Is the asm text AMD's (an LLVM AMDGPU intrinsic label, or AMDGCN instructions)?"""
    return bool(_LLVM_LABEL.fullmatch(text) or _AMDGCN.search(text))


_ASM_WORD = LazyPattern(r"\b(?:asm|__asm__|__asm)\b")
_STRING = LazyPattern(r'"((?:[^"\\\n]|\\.)*)"')


def holds_gpu_assembly(text: str) -> bool:
    """Does a source text hold an asm statement written in PTX or AMD GCN (read from the string
    literals that follow each ``asm``)?  CPU assembly (SIMD kernels of a CPU backend) is not
    device code."""
    for m in _ASM_WORD.finditer(text):
        window = text[m.end() : m.end() + 2000]
        close = window.find(");")
        body = "".join(s.group(1) for s in _STRING.finditer(window[: close if close >= 0 else len(window)]))
        if body and (ptx_instruction(body) or is_amd_assembly(body)):
            return True
    return False
