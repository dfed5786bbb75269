"""The meet over a header's inclusions (``rocm_lint.cpp.tu_entry``): what holds at its entry in
every translation unit that compiles it, per platform.

``Macro`` is a macro as one platform has it at one inclusion, ``Declared`` what the ROCm build has
declared there (integer type aliases, constants, ballot and shuffle wrappers), ``Record`` one
inclusion; ``meet(records)`` keeps what every inclusion agrees on (``Entry``): a macro defined
with the same body and parameters, or undefined, everywhere; an alias of one width; a constant of
one value; a wrapper every inclusion has.  Anything else gives no fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple, TypeVar

from rocm_lint.cpp.conditions import Node, Tri, parse_condition
from rocm_lint.cpp.facts import Facts, Value

__all__ = ["UNKNOWN", "Declared", "Entry", "Macro", "Record", "mask_free", "meet"]

# a macro as one platform has it: (defined?, body, parameters or None, where, defined in a branch
# only ROCm compiles); a fact when ``defined`` is True or False; the first three are compared
Macro = Tuple[Tri, Optional[str], Optional[str], Tuple[str, int], bool]
UNKNOWN: Macro = (None, None, None, ("", 0), False)


@dataclass
class Declared:
    """What the ROCm build has declared so far (the C++ facts' view of a translation unit)."""

    aliases: Dict[str, int] = field(default_factory=dict)  # integer type aliases: name -> bits
    links: Dict[str, str] = field(default_factory=dict)  # aliases of names not known as integers
    consts: Dict[str, Value] = field(default_factory=dict)
    ballots: Dict[str, Tuple[str, int]] = field(default_factory=dict)
    shuffles: Dict[str, Tuple[str, int]] = field(default_factory=dict)

    def view(self, words: FrozenSet[str]) -> "Declared":
        """What of it a file whose code holds ``words`` can read (the aliases an alias of a
        name leads to as well)."""
        links = {n: self.links[n] for n in words & self.links.keys()}
        names = words | frozenset(links.values())
        return Declared(
            {n: self.aliases[n] for n in names & self.aliases.keys()},
            links,
            {n: self.consts[n] for n in words & self.consts.keys()},
            {n: self.ballots[n] for n in words & self.ballots.keys()},
            {n: self.shuffles[n] for n in words & self.shuffles.keys()},
        )


# one inclusion of a header: (includer, line, NVIDIA's macros or None, (ROCm's macros, declared)
# or None), None where that platform does not compile the header's content there
Record = Tuple[str, int, Optional[Dict[str, Macro]], Optional[Tuple[Dict[str, Macro], Declared]]]


Fact = Tuple[str, Tuple[Tri, Optional[Node]], Tuple[Tri, Optional[Node]]]  # as ``cpp.includes``


@dataclass(frozen=True)
class Entry:
    """What holds at a header's entry in every translation unit that compiles its content."""

    # per platform (NVIDIA, ROCm): name -> Macro of the macros the header names (and those their
    # bodies name) that every inclusion agrees on (defined with the same body and parameters, or
    # undefined); None where no inclusion compiles it there
    macros: Tuple[Optional[Dict[str, Macro]], Optional[Dict[str, Macro]]]
    facts: Facts  # as the ROCm build sees them: values, integer aliases, wrappers, mask-free *_sync

    def seed(self, leave_out: FrozenSet[str] = frozenset()) -> Tuple[Fact, ...]:
        """The macros as the ``#if`` model's seed (``preproc.analyse``), ``leave_out`` left out (the
        header's own include guard).  A platform on which no inclusion compiles the header takes
        the other's facts (nothing compiled there: any value holds), so no macro reads as a
        platform switch only for that."""
        cuda, rocm = self.macros
        cuda = rocm if cuda is None else cuda
        rocm = cuda if rocm is None else rocm
        out: List[Fact] = []
        for name in sorted(set(cuda or ()) | set(rocm or ())):
            if name not in leave_out:
                out.append((name, _seed_side((cuda or {}).get(name)), _seed_side((rocm or {}).get(name))))
        return tuple(out)


def _seed_side(macro: Optional[Macro]) -> Tuple[Tri, Optional[Node]]:
    if macro is None or macro[0] is None:
        return None, None
    if macro[0] is False or macro[2] is not None:
        return macro[0], None
    return True, parse_condition(macro[1]) if macro[1] else Node("num", 1)


def _agreed_macros(envs: List[Dict[str, Macro]]) -> Dict[str, Macro]:
    out: Dict[str, Macro] = {}
    for name, macro in envs[0].items():
        if macro[0] is None:
            continue
        key, rocm_only = macro[:3], macro[4]
        for other in envs[1:]:
            seen = other.get(name)
            if seen is None or seen[:3] != key:
                break
            rocm_only = rocm_only and seen[4]
        else:
            out[name] = macro if rocm_only == macro[4] else macro[:4] + (rocm_only,)
    return out


_V = TypeVar("_V")


def _agreed(tables: List[Dict[str, _V]], key: Callable[[_V], Any] = lambda v: v) -> Dict[str, _V]:
    first = tables[0]
    return {n: v for n, v in first.items() if all(n in t and key(t[n]) == key(v) for t in tables[1:])}


def _sync_name(name: str) -> bool:
    """``facts.SYNC_NAME`` (``__\\w+_sync|__syncwarp``) as a full match, without a regex."""
    return name == "__syncwarp" or (name.startswith("__") and name.endswith("_sync") and len(name) > 7)


def mask_free(macros: Dict[str, Macro]) -> Dict[str, Tuple[str, int]]:
    """The ``*_sync`` warp functions redefined as function-like macros whose body never uses the
    first parameter (the mask): a mask passed to them never reaches the intrinsic."""
    out: Dict[str, Tuple[str, int]] = {}
    for name, (defined, body, params, where, _) in macros.items():
        if defined is not True or params is None or not _sync_name(name):
            continue
        first = params.strip("() \t").split(",")[0].strip()
        if first and not re.search(r"(?<![\w#])" + re.escape(first) + r"\b", body or ""):
            out[name] = where
    return out


def meet(records: List[Record]) -> Entry:
    cuda_envs = [r[2] for r in records if r[2] is not None]
    rocm_envs = [r[3] for r in records if r[3] is not None]
    cuda = _agreed_macros(cuda_envs) if cuda_envs else None
    facts = Facts()
    rocm = None
    if rocm_envs:
        rocm = _agreed_macros([env for env, _ in rocm_envs])
        declared = [d for _, d in rocm_envs]
        facts.int_aliases = _agreed([d.aliases for d in declared])
        facts.alias_links = _agreed([d.links for d in declared])
        facts.ballot_wrappers = _agreed([d.ballots for d in declared], key=lambda v: True)
        facts.shuffle_wrappers = _agreed([d.shuffles for d in declared], key=lambda v: True)
        consts = _agreed([d.consts for d in declared], key=lambda v: (v.text, v.type))
        facts.values = {
            **consts,
            **{
                name: Value(body, where, rocm_only=rocm_only)
                for name, (defined, body, params, where, rocm_only) in rocm.items()
                if defined is True and params is None and body
            },
        }
        facts.mask_free_sync = mask_free(rocm)
        facts.resolve_aliases()
    return Entry((cuda, rocm), facts)
