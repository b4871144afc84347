#!/usr/bin/env python3
"""Builds the Terraform oracle corpus for `strata console --json`.

For each expression in exprs.txt (one per line; blank lines and lines
starting with '#' are skipped) this runs Terraform's own console twice, in an
empty directory, once for jsonencode(EXPR) and once for type(EXPR), and
writes one JSON line per expression to corpus.jsonl:
  {"expr": E, "value": <JSON text>, "type": "<one-line type>"}  or
  {"expr": E, "error": "<first line of Terraform's error>"}
One process per expression, because a piped console stops at the first error.

Usage: python3 tests/oracle/gen.py [--terraform PATH] [--jobs N] [--config DIR]
With --config, expressions come from DIR/exprs.txt, are evaluated with DIR
as the working directory (so var., local. and path. resolve there) and the
corpus goes to DIR/corpus.jsonl.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def unquote_hcl(s):
    """Terraform console prints strings as HCL quoted literals."""
    s = s.strip()
    if s.startswith("<<"):
        lines = s.split("\n")
        return "\n".join(lines[1:-1]) + "\n"
    if not (s.startswith('"') and s.endswith('"')):
        raise ValueError("not a quoted string: %r" % s)
    body = s[1:-1]
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            n = body[i + 1]
            if n == "u":
                out.append(chr(int(body[i + 2:i + 6], 16)))
                i += 6
                continue
            if n == "U":
                out.append(chr(int(body[i + 2:i + 10], 16)))
                i += 10
                continue
            out.append({"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}[n])
            i += 2
            continue
        if body.startswith("$${", i) or body.startswith("%%{", i):
            out.append(body[i + 1:i + 3])
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def one_line_type(t):
    """Terraform prints nested types over several lines; strata uses one."""
    lines = [l.strip() for l in t.strip().split("\n")]
    s = " ".join(lines)
    s = re.sub(r",\s*([\]\)}])", r"\1", s)
    s = re.sub(r"([\[\({])\s+", r"\1", s)
    s = re.sub(r"\s+([\]\)}])", r"\1", s)
    s = re.sub(r"\s*,\s*", ", ", s)
    return s


CONFIG = None  # a configuration directory to evaluate in, or None for an empty one


def console(terraform, workdir, line):
    # Parallel consoles contend for the state's lock: each call gets a state
    # path of its own (and, without a configuration, a directory of its own).
    with tempfile.TemporaryDirectory(dir=workdir) as d:
        cwd = CONFIG or d
        p = subprocess.run([terraform, "console", "-state=" + os.path.join(d, "s.tfstate")],
                           input=line + "\n", capture_output=True, text=True, cwd=cwd, timeout=60)
    out = ANSI.sub("", p.stdout)
    err = ANSI.sub("", p.stderr)
    return out, err + ("" if "Error" not in out else out)


def first_error(text):
    for line in text.split("\n"):
        line = line.strip("│╷╵ \t")
        if line.startswith("Error: "):
            return line[len("Error: "):]
    return "error"


def oracle(terraform, workdir, expr):
    out, err = console(terraform, workdir, "jsonencode(%s)" % expr)
    if "Error" in err or not out.strip():
        return {"expr": expr, "error": first_error(err or out)}
    text = out.strip()
    special = {"(sensitive value)": "sensitive", "(known after apply)": "unknown"}
    value = None if text in special else unquote_hcl(text)
    tout, terr = console(terraform, workdir, "type(%s)" % expr)
    if "Error" in terr:
        return {"expr": expr, "error": first_error(terr)}
    rec = {"expr": expr, "value": value, "type": one_line_type(tout)}
    if text in special:
        rec[special[text]] = True
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--terraform", default="terraform")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--exprs", default=os.path.join(HERE, "exprs.txt"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--config", default=None,
                    help="evaluate in this configuration directory (default: an empty one)")
    args = ap.parse_args()
    global CONFIG
    if args.config:
        CONFIG = os.path.abspath(args.config)
        if args.exprs == os.path.join(HERE, "exprs.txt"):
            args.exprs = os.path.join(CONFIG, "exprs.txt")
    if args.out is None:
        args.out = os.path.join(CONFIG or HERE, "corpus.jsonl")
    exprs = [l.rstrip("\n") for l in open(args.exprs, encoding="utf-8")]
    exprs = [e for e in exprs if e.strip() and not e.startswith("#")]
    workdir = tempfile.mkdtemp(prefix="strata-oracle-")
    rc = os.path.join(workdir, ".terraformrc")
    open(rc, "w").write("disable_checkpoint = true\n")
    os.environ["TF_CLI_CONFIG_FILE"] = rc
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda e: oracle(args.terraform, workdir, e), exprs))
    with open(args.out, "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    errors = sum(1 for r in results if "error" in r)
    print("%d expressions, %d errors -> %s" % (len(results), errors, args.out), file=sys.stderr)


if __name__ == "__main__":
    main()
