"""The config-file scanner: shell scripts, Dockerfiles, YAML, .env files and CMake.

These files hold the environment and build settings that reach PyTorch and the compilers
(``PYTORCH_CUDA_ALLOC_CONF``, ``TORCHINDUCTOR_MAX_AUTOTUNE``, arch lists and arch flags).
Each language has a small hand-written reader (YAML anchors, merge keys and flow collections are
also read by ruamel.yaml: ``yaml_tree.py``); together they give a :class:`ConfigUnit`:

* ``settings``: every name given a value, with offsets into the text —
  shell ``export X=v`` / ``X=v cmd`` / ``env X=v cmd`` / ``declare -x X=v`` / ``docker run -e X=v``;
  Dockerfile ``ENV X=v``, ``ENV X v``, ``ARG X=v`` and the shell of ``RUN``/``CMD``/``ENTRYPOINT``;
  YAML ``env:``/``environment:``/``variables:`` maps and lists and the shell of ``run:``/``script:``;
  ``.env`` lines; CMake ``set(X ...)``, ``set(ENV{X} ...)``, ``list(APPEND X ...)``, target
  properties; and ``-DX=v`` defines anywhere in a command line;
* ``tool_args``: the words of every command that hands arguments to a tool (compilers, build
  tools, CMake commands) — never the words of ``echo``/``printf``/``grep``..., ``message()``, tests,
  comments or here-document bodies;
* where each of them runs: ``gate`` is ``"nvidia"`` for code that never runs on ROCm (an
  NVIDIA-only base image, job, ``if``/``case`` branch, or a file named for CUDA) and ``"rocm"``
  for code that only runs there.

The readers: ``shell.py`` (shell scripts, and the shell inside the other formats),
``dockerfile.py``, ``yamlish.py``, ``dotenv.py``, ``cmake.py``; ``unit.py`` holds what they build.
Rules (``@RULE.source_checker()`` in the family modules) read the unit; this module dispatches a
file to its reader, turns the rules' hits into findings and applies ``# rocm-lint: ignore[CODE]`` /
``# noqa: CODE``.
"""

from __future__ import annotations

from typing import Optional

from rocm_lint.config import Config
from rocm_lint.configfiles.cmake import read_cmake_unit
from rocm_lint.configfiles.dockerfile import read_dockerfile
from rocm_lint.configfiles.dotenv import read_dotenv
from rocm_lint.configfiles.shell import NVIDIA, ROCM  # noqa: F401  (the package's public face)
from rocm_lint.configfiles.unit import (
    ConfigUnit,
    Setting,
    ToolArgs,
    UnitBuilder,
    default_of,  # noqa: F401
    matching_copy,
    truthy,
)

# What the rules read, from the package's entry module.
__all__ = ["NVIDIA", "ROCM", "ConfigUnit", "Setting", "ToolArgs", "default_of", "read_unit", "truthy"]
from rocm_lint.configfiles.yamlish import read_yaml_unit
from rocm_lint.build import context as build_context
from rocm_lint.workspace import Workspace


def read_unit(
    path: str, text: str, config: Config, language: str, workspace: Optional[Workspace] = None
) -> ConfigUnit:
    code = matching_copy(text)
    b = UnitBuilder(code, bom=text.startswith("\ufeff"))
    if language == "shell":
        b.shell(0, len(code))
    elif language == "dockerfile":
        read_dockerfile(b)
    elif language == "yaml":
        read_yaml_unit(b)
    elif language == "dotenv":
        read_dotenv(b)
    elif language == "cmake":
        read_cmake_unit(b)
    b.alternatives()
    b.defines()
    # a CMake subproject the project's ROCm build never enters (build.context)
    ws = workspace if workspace is not None else Workspace()
    platform = build_context.file_platform(ws, path) if language == "cmake" else None
    return ConfigUnit(
        path,
        text,
        language,
        config,
        code,
        b.settings,
        b.args,
        build_platform=platform,
        commands=b.commands,
        workspace=ws,
    )
