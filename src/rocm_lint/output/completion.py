"""``rocm-lint completion bash|zsh|fish``: a shell completion script, generated from the command
line parser itself (its commands, options, choices) and the registry (rule codes and names for
``rule``, ``--select``, ``--ignore``, ``--extend-select``), so it never lists an option that is not
there.  zsh uses the bash function through ``bashcompinit``; fish gets native ``complete`` lines."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

SHELLS = ("bash", "zsh", "fish")
# metavars whose value is a file or a directory; CODES: rule codes or prefixes
_FILE_METAVARS = {"FILE", "PATH"}
_DIR_METAVARS = {"DIR"}


@dataclass
class _Option:
    names: Tuple[str, ...]
    help: str
    takes_value: bool
    choices: Tuple[str, ...] = ()
    kind: str = ""  # "file", "dir", "codes" or "" (free text)


@dataclass
class _Command:
    name: str
    help: str
    options: List[_Option] = field(default_factory=list)
    positional: str = ""  # "file", "rule", "choices" or ""
    choices: Tuple[str, ...] = ()  # the positional's choices


def _commands(parser: argparse.ArgumentParser) -> List[_Command]:
    out = []
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    for name, command in sub.choices.items():
        cmd = _Command(name, helps.get(name, ""))
        for action in command._actions:
            if not action.option_strings:
                metavar = str(action.metavar or "")
                cmd.positional = (
                    "file"
                    if metavar in _FILE_METAVARS
                    else "choices"
                    if action.choices
                    else "rule"
                    if name == "rule"
                    else ""
                )
                cmd.choices = tuple(action.choices or ())
                continue
            metavar = str(action.metavar or "")
            kind = (
                "file"
                if metavar in _FILE_METAVARS
                else "dir"
                if metavar in _DIR_METAVARS
                else "codes"
                if metavar == "CODES"
                else ""
            )
            cmd.options.append(
                _Option(
                    tuple(action.option_strings),
                    (action.help or "").replace("%%", "%"),
                    action.nargs != 0,
                    tuple(action.choices or ()),
                    kind,
                )
            )
        out.append(cmd)
    return out


def _words(rules) -> Tuple[List[str], List[str]]:
    """(codes and their family prefixes, rule names)."""
    codes = sorted({r.code for r in rules} | {r.code[:4] for r in rules} | {"ROC"})
    return codes, [r.name for r in rules]


def completion_script(shell: str, parser: argparse.ArgumentParser, rules) -> str:
    commands = _commands(parser)
    codes, names = _words(rules)
    if shell == "fish":
        return _fish(commands, codes, names)
    script = _bash(commands, codes, names)
    if shell == "zsh":
        return (
            "#compdef rocm-lint\n# zsh: the bash completion through bashcompinit\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + script
        )
    return script


def _bash(commands: List[_Command], codes: List[str], names: List[str]) -> str:
    top = " ".join([c.name for c in commands] + ["--help", "--version"])
    cases = []
    for cmd in commands:
        by_kind: Dict[str, List[str]] = {}
        choice_cases = []
        for opt in cmd.options:
            if not opt.takes_value:
                continue
            if opt.choices:
                choice_cases.append(
                    f'            {"|".join(opt.names)}) COMPREPLY=($(compgen -W "{" ".join(opt.choices)}" '
                    '-- "$cur")); return;;'
                )
            else:
                by_kind.setdefault(opt.kind, []).extend(opt.names)
        lines = list(choice_cases)
        action = {
            "file": 'COMPREPLY=($(compgen -f -- "$cur"))',
            "dir": 'COMPREPLY=($(compgen -d -- "$cur"))',
            "codes": 'COMPREPLY=($(compgen -W "$codes" -- "$cur"))',
            "": "",
        }
        for kind, opts in by_kind.items():
            lines.append(
                f"            {'|'.join(opts)}) {action[kind]}{'; ' if action[kind] else ''}return;;"
            )
        flags = " ".join(n for opt in cmd.options for n in opt.names)
        positional = {
            "file": 'COMPREPLY=($(compgen -f -- "$cur"))',
            "rule": 'COMPREPLY=($(compgen -W "$codes $names" -- "$cur"))',
            "choices": f'COMPREPLY=($(compgen -W "{" ".join(cmd.choices)}" -- "$cur"))',
        }.get(cmd.positional, "")
        body = "\n".join(lines)
        cases.append(f"""        {cmd.name})
            case "$prev" in
{body}
            esac
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "{flags}" -- "$cur"))
            else
                {positional or ":"}
            fi
            ;;""")
    case_text = "\n".join(cases)
    return f"""# bash completion for rocm-lint (rocm-lint completion bash)
_rocm_lint() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local codes="{" ".join(codes)}"
    local names="{" ".join(names)}"
    local cmd="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            -*) ;;
            *) cmd="${{COMP_WORDS[i]}}"; break ;;
        esac
    done
    COMPREPLY=()
    case "$cmd" in
        "") COMPREPLY=($(compgen -W "{top}" -- "$cur")) ;;
{case_text}
    esac
}}
complete -o default -o bashdefault -F _rocm_lint rocm-lint
"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish(commands: List[_Command], codes: List[str], names: List[str]) -> str:
    out = ["# fish completion for rocm-lint (rocm-lint completion fish)", "complete -c rocm-lint -f"]
    subs = " ".join(c.name for c in commands)
    for cmd in commands:
        out.append(
            f"complete -c rocm-lint -n 'not __fish_seen_subcommand_from {subs}' -a {cmd.name} "
            f"-d {_fish_quote(cmd.help)}"
        )
    for cmd in commands:
        cond = f"-n '__fish_seen_subcommand_from {cmd.name}'"
        if cmd.positional == "file":  # not where an option's value goes (its own line says what)
            valued = " ".join(
                n
                for opt in cmd.options
                if opt.takes_value and opt.kind not in ("file", "dir")
                for n in opt.names
            )
            out.append(
                f"complete -c rocm-lint -n '__fish_seen_subcommand_from {cmd.name}; "
                f"and not __fish_prev_arg_in {valued}' -F"
            )
        elif cmd.positional == "rule":
            out.append(f"complete -c rocm-lint {cond} -a {_fish_quote(' '.join(codes + names))}")
        elif cmd.positional == "choices":
            out.append(f"complete -c rocm-lint {cond} -a {_fish_quote(' '.join(cmd.choices))}")
        for opt in cmd.options:
            parts = []
            for name in opt.names:
                parts.append(f"-l {name[2:]}" if name.startswith("--") else f"-s {name[1:]}")
            value = ""
            if opt.takes_value:
                value = (
                    f" -x -a {_fish_quote(' '.join(opt.choices))}"
                    if opt.choices
                    else f" -x -a {_fish_quote(' '.join(codes))}"
                    if opt.kind == "codes"
                    else " -r -F"
                    if opt.kind in ("file", "dir")
                    else " -x"
                )
            out.append(
                f"complete -c rocm-lint {cond} {' '.join(parts)}{value} -d {_fish_quote(opt.help[:80])}"
            )
    return "\n".join(out) + "\n"
