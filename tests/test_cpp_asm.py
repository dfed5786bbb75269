"""Which inline assembly is PTX (rocm_lint.cpp.asm): PTX opcodes with PTX qualifiers, not the
dotted words of CPU vector instruction sets; and a .cpp/.h file whose only asm is a CPU's holds no
device code (ggml's CPU backend: RISC-V V, ARM SVE, LoongArch, POWER kernels)."""

import pytest

from rocm_lint.config import Config
from rocm_lint.cpp.asm import holds_gpu_assembly, ptx_instruction
from rocm_lint.cpp.scanner import holds_device_code
from rocm_lint.engine import check_file


@pytest.mark.parametrize(
    "text",
    [
        "mov.u32 %0, %%laneid;",
        "ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];",
        "cvt.rn.f16x2.f32 %0, %1, %2;",
        "cp.async.commit_group;\n",
        "shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;",
        "fence.acq_rel.gpu;",
        "vadd.u32.u32.u32.sat %0, %1, %2, %3;",
        "{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n}",
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;",
        "ex2.approx.ftz.f32 %0, %1;",
        "@p st.global.release.gpu.b32 [%0], %1;",
        "trap;",
        "fence.proxy.alias;",
        "prefetch.tensormap [%0];",
        "ld.shared::cta.u32 %0, [%1];",
    ],
)
def test_ptx_is_recognised(text):
    assert ptx_instruction(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "vsetvli t0, zero, e32, m8\n\tvle32.v v0, (a0)\n\tvxor.vv v8, v0, v0",  # RISC-V V
        "fence.i",
        "th.vsetvli zero, %[n], e8, m1",  # RISC-V
        "ptrue p0.b\nld1w {z0.s}, p0/z, [x0]\nfmla z0.s, p0/m, z1.s, z2.s",  # ARM SVE
        "ld1 {v0.4s}, [%0]\n eor v2.16b, v15.16b, v2.16b",  # ARM NEON
        "ld.w $a0, $a1, 0\n xvpermi.q $xr0, $xr1, 0x20\n vori.b $vr0, $vr1, 0",  # LoongArch
        "cvt.s.w $f0, $f1\n add.s $f2, $f0, $f0",  # MIPS
        "mov.m.x m0, x0, 0xFF\n mova.x.m %0\n flw.ps f0, 0(a0)",  # a RISC-V extension
        "xscvdphp %x0,%x1",
        "",
        "nop",
    ],
)
def test_cpu_assembly_is_not_ptx(text):
    assert ptx_instruction(text) is None


RVV_KERNEL = """#include <stddef.h>
void xor_rows(const unsigned char* a, unsigned char* out, size_t n) {
    __asm__ volatile(
        "vsetvli t0, %[n], e8, m8\\n\\t"
        "vle8.v v0, (%[a])\\n\\t"
        "vxor.vv v8, v0, v0\\n\\t"
        "vse8.v v8, (%[out])\\n\\t"
        : : [n] "r"(n), [a] "r"(a), [out] "r"(out) : "t0", "memory");
}
#if defined(__ARM_NEON) && !(defined(__CUDACC__) && __CUDACC_VER_MAJOR__ <= 11)
#define HAVE_FP16 1
#endif
"""


def test_a_cpu_file_whose_only_asm_is_a_cpus_is_not_scanned(tmp_path):
    assert not holds_device_code(RVV_KERNEL) and not holds_gpu_assembly(RVV_KERNEL)
    path = tmp_path / "quants.c"
    path.write_text(RVV_KERNEL)
    assert check_file(str(path), Config()) == []


def test_a_cpp_file_with_ptx_asm_is_device_code(tmp_path):
    text = 'static inline unsigned lane() {\n  unsigned r;\n  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));\n  return r;\n}\n'
    assert holds_device_code(text)
    path = tmp_path / "lane.h"
    path.write_text(text)
    assert [(f.line, f.code) for f in check_file(str(path), Config())] == [(3, "ROC701")]
    amd = 'inline void w() { asm volatile("s_waitcnt vmcnt(0)" ::: "memory"); }\n'
    assert holds_device_code(amd)
