"""``rocm-lint``'s commands besides check: rule, rules, doctor, clean, server, completion."""

from __future__ import annotations

import argparse
import sys
from typing import Optional

from rocm_lint.cli_args import build_parser
from rocm_lint.cli_report import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, error
from rocm_lint.config import ConfigError, discover


def cmd_rule(args: argparse.Namespace) -> int:
    from rocm_lint.output.text import render_rule_list
    from rocm_lint.registry import find_rules

    rules = find_rules(args.code)
    if not rules:
        error(f"unknown rule {args.code!r}; `rocm-lint rules` lists them")
        return EXIT_ERROR
    if len(rules) == 1 and args.code.strip().upper() in (rules[0].code, rules[0].name.upper()):
        from rocm_lint.docgen import render_rule

        sys.stdout.write(render_rule(rules[0]))
    else:  # a prefix: the family's rules
        render_rule_list(rules, sys.stdout)
    return EXIT_CLEAN


def cmd_rules(args: argparse.Namespace) -> int:
    from rocm_lint.registry import all_rules

    rules = all_rules()
    if args.json:
        import json

        json.dump([r.as_dict() for r in rules], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_CLEAN
    from rocm_lint.output.text import render_rule_list

    render_rule_list(rules, sys.stdout)
    return EXIT_CLEAN


def cmd_doctor(args: argparse.Namespace) -> int:
    from rocm_lint import runtime
    from rocm_lint.registry import get_rule

    env = runtime.environment()
    findings = runtime.check()
    order = {s: i for i, s in enumerate(runtime.SEVERITY_ORDER)}
    findings.sort(key=lambda f: (order.get(f.severity or "info", 9), f.code))
    critical = any(f.severity == "critical" for f in findings)
    if env["torch"] is None:
        verdict = "torch is not installed in this environment: nothing to check"
    elif env["platform"] != "rocm":
        verdict = (
            f"not ROCm ({env['platform']}) on an AMD GPU host: torch cannot use the AMD GPU"
            if findings
            else f"not ROCm ({env['platform']}): nothing to check"
        )
    elif not findings:
        verdict = "ROCm: no problems found"
    else:
        verdict = f"ROCm: {len(findings)} finding{'s' if len(findings) != 1 else ''}"
    if args.json:
        import json

        def rule_url(code: str) -> Optional[str]:
            return get_rule(code).url if get_rule(code) else None

        json.dump(
            {
                "environment": env,
                "verdict": verdict,
                "findings": [
                    {"code": f.code, "severity": f.severity, "message": f.message, "url": rule_url(f.code)}
                    for f in findings
                ],
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
    else:
        gpu = env["gpu"] or "no GPU visible"
        arch = f" ({env['arch']}, warp {env['warp_size']})" if env["arch"] else ""
        sys.stdout.write(f"torch {env['torch'] or '-'} · platform {env['platform'] or '-'} · {gpu}{arch}\n")
        limits = []
        if env.get("lds_per_workgroup"):
            limits.append(f"LDS {env['lds_per_workgroup'] // 1024} KiB per workgroup")
        if env.get("fp8_format"):
            limits.append(f"fp8 {env['fp8_format']} (e4m3 max {240 if env['fp8_format'] == 'FNUZ' else 448})")
        if env.get("xnack"):
            on = env["xnack"]["enabled"]
            limits.append("XNACK " + ("on" if on else "off" if on is False else "unknown (HSA_XNACK unset)"))
        if limits and env["platform"] == "rocm":
            sys.stdout.write(" · ".join(limits) + "\n")
        for severity in runtime.SEVERITY_ORDER:
            group = [f for f in findings if (f.severity or "info") == severity]
            if group:
                sys.stdout.write(f"\n{severity} ({len(group)})\n")
                for f in group:
                    sys.stdout.write(f"  {f.code}  {f.message}\n")
        sys.stdout.write(f"\n{verdict}\n")
    return EXIT_FINDINGS if critical else EXIT_CLEAN


def cmd_clean(args: argparse.Namespace) -> int:
    from rocm_lint.cache import clean, default_dir

    if args.cache_dir:
        config = None
    else:
        try:
            config = discover(["."], None)
        except ConfigError as exc:
            error(str(exc))
            return EXIT_ERROR
    removed, message = clean(args.cache_dir or default_dir(config))
    sys.stderr.write(f"rocm-lint: {message}\n")
    return EXIT_ERROR if removed is None else EXIT_CLEAN


def cmd_server(args: argparse.Namespace) -> int:
    try:
        from rocm_lint.server import main as serve  # pygls is optional: imported only here
    except ImportError as exc:
        error(f"`rocm-lint server` needs pygls ({exc}): pip install 'rocm-lint[lsp]'")
        return EXIT_ERROR
    return serve()


def cmd_completion(args: argparse.Namespace) -> int:
    from rocm_lint.output.completion import completion_script
    from rocm_lint.registry import all_rules

    sys.stdout.write(completion_script(args.shell, build_parser(), all_rules()))
    return EXIT_CLEAN
