"""The ``.env`` reader: ``NAME=value`` lines (``export`` allowed), quoted or not."""

from __future__ import annotations

import re

from rocm_lint.configfiles.unit import Setting, UnitBuilder

_DOTENV = re.compile(r"^[ \t\f]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.]*)[ \t]*=[ \t]*", re.M)


def read_dotenv(b: UnitBuilder) -> None:
    code = b.code
    for m in _DOTENV.finditer(code):
        at = m.end()
        line_end = code.find("\n", at)
        line_end = len(code) if line_end < 0 else line_end
        q = code[at] if at < len(code) else ""
        if q in "\"'":
            close = at + 1
            while True:
                close = code.find(q, close)
                if close < 0 or q == "'" or code[close - 1] != "\\":
                    break
                close += 1
            close = line_end if close < 0 else close
            value, vs, ve = code[at + 1 : close], at + 1, close
            computed = q == '"' and "$" in value
        else:
            cut = re.search(r"[ \t]#", code[at:line_end])
            value = code[at : at + cut.start() if cut else line_end].rstrip()
            vs, ve = at, at + len(value)
            computed = "$" in value
        how = "export" if code[m.start() : m.start(1)].strip() else "dotenv"
        b.settings.append(Setting(m.group(1), value, m.start(1), vs, ve, how, computed))
