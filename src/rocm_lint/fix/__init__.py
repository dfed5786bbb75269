"""Autofix: rules describe a repair, this package builds, verifies and writes it.

A Python checker attaches a recipe to a finding's fix (gate the statement, give ROCm another
value, guard an import: ``rocm_lint.finding``); C++ rules attach text edits.  Only files that
have such findings are parsed with LibCST; every fixed file must re-parse, and every safe fix
must leave the NVIDIA program unchanged (:mod:`rocm_lint.fix.nvidia_path` for Python,
``rocm_lint.cpp.nvidia_view.same_on_nvidia`` for C++).  A fix that fails either check is dropped,
never written.  :mod:`rocm_lint.fix.api` is the one entry point of every front end.
"""
