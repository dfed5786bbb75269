"""``rocm-lint check --show-settings``: every setting in effect for a path and where it came from
(the command line, the config file, or the default), then the codes enabled there."""

from __future__ import annotations

import json
import os
from typing import Optional, Set, TextIO


def show_settings(config, cli_keys: Set[str], path: str, fmt: Optional[str], out: TextIO) -> int:
    """``--show-settings``: every setting in effect for ``path``, with where it came from."""
    from rocm_lint.config import setting_values
    from rocm_lint.engine import enabled_codes

    rows = []
    for key, value in setting_values(config):
        base = key[len("extend-") :] if key.startswith("extend-") else key
        if key in cli_keys:
            origin = "command line"
        elif key in config.from_file or f"extend-{base}" in config.from_file and key == base:
            origin = str(config.source)
        else:
            origin = "default"
        if key in config.from_flake8:
            origin += f" + {config.flake8_source}"
        rows.append((key, value, origin))
    target = os.path.abspath(path)
    data = {
        "path": target,
        "config-file": str(config.source) if config.source else None,
        "settings": [{"key": k, "value": v, "from": o} for k, v, o in rows],
        "per-file-ignores-here": list(config.ignored_for(path)),
        "enabled-codes": sorted(enabled_codes(config, path)),
    }
    if fmt == "json":
        json.dump(data, out, indent=2)
        out.write("\n")
        return 0
    out.write(f"Settings for {target}\n")
    out.write(f"config file: {config.source or 'none (the defaults)'}\n\n")
    width = max(len(k) for k, _, _ in rows)
    for key, value, origin in rows:
        out.write(f"{key:<{width}} = {json.dumps(value)}  # {origin}\n")
    out.write(f"\nper-file-ignores for this path: {', '.join(data['per-file-ignores-here']) or 'none'}\n")
    codes = data["enabled-codes"]
    out.write(f"enabled codes for this path ({len(codes)}): {' '.join(codes)}\n")
    return 0
