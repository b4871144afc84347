#!/usr/bin/env python3
"""Runs `strata console --json` over the oracle corpus and lists differences.
Usage: python3 tests/oracle/compare.py path/to/strata [corpus.jsonl]"""
import json
import os
import subprocess
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))


def norm(text):
    return json.loads(text, parse_float=Decimal, parse_int=Decimal) if text is not None else None


def main():
    strata = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "corpus.jsonl")
    recs = [json.loads(l) for l in open(corpus, encoding="utf-8")]
    inp = "".join(r["expr"] + "\n" for r in recs)
    p = subprocess.run([strata, "console", "--json"], input=inp, capture_output=True, text=True)
    outs = p.stdout.splitlines()
    bad = 0
    for r, o in zip(recs, outs):
        got = json.loads(o, parse_float=Decimal, parse_int=Decimal)
        want_err = "error" in r
        ok = True
        if want_err or "error" in got:
            ok = want_err == ("error" in got)
        elif r.get("unknown") or r.get("sensitive"):
            ok = bool(got.get("unknown")) == bool(r.get("unknown")) and bool(got.get("sensitive")) == bool(r.get("sensitive")) and got.get("type") == r["type"]
        else:
            ok = json.dumps(norm(r["value"]), default=str) == json.dumps(got["value"], default=str) and got.get("type") == r["type"]
        if not ok:
            bad += 1
            print("EXPR  %s\n want %s\n got  %s" % (r["expr"], {k: v for k, v in r.items() if k != "expr"}, o))
    print("%d/%d match (%.1f%%)" % (len(recs) - bad, len(recs), 100.0 * (len(recs) - bad) / len(recs)))
    if len(outs) != len(recs):
        print("line count mismatch: %d outputs for %d inputs" % (len(outs), len(recs)))


if __name__ == "__main__":
    main()
