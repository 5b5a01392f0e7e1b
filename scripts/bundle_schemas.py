#!/usr/bin/python3
"""Makes docs/schemas/tfdiag.scaling-1.schema.json self-contained (a schema bundle).

usage: bundle_schemas.py [--check] [SCHEMA_DIR]

The scaling document's `tool` and `findings[]` are those of tfdiag.analysis/1. A `$ref` to a
sibling file ("tfdiag.analysis-1.schema.json#/$defs/finding") resolves against the schema's
`$id`, a URL no validator can fetch offline; so every `$defs` entry of the analysis schema that
the scaling schema uses (and what those use in turn) is copied into the scaling schema's own
`$defs`, and every `$ref` of the scaling schema is local ("#/$defs/..."). Any draft 7
validator then reads each schema file alone, with no network and no store of siblings.

Run after editing a shared definition in tfdiag.analysis-1.schema.json; `--check` exits 1 (and
says what differs) when the scaling schema is not the bundle this script would write, which the
test suite runs (tests/output_schemas_test.cc).
"""
import json
import os
import sys

ANALYSIS = "tfdiag.analysis-1.schema.json"
SCALING = "tfdiag.scaling-1.schema.json"
PREFIX = ANALYSIS + "#/$defs/"


def refs(node):
    """Every $ref string under node."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield v
            else:
                yield from refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from refs(v)


def localize(node):
    """node with every "tfdiag.analysis-1.schema.json#/$defs/X" $ref made "#/$defs/X"."""
    if isinstance(node, dict):
        return {k: (("#/$defs/" + v[len(PREFIX):]) if k == "$ref" and isinstance(v, str) and
                    v.startswith(PREFIX) else localize(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [localize(v) for v in node]
    return node


def bundle(analysis, scaling):
    out = localize(scaling)
    defs = out.setdefault("$defs", {})
    adefs = analysis.get("$defs", {})
    # The analysis definitions used by the scaling schema, transitively.
    wanted = [r[len(PREFIX):] for r in refs(scaling) if r.startswith(PREFIX)]
    wanted += [r[len("#/$defs/"):] for r in refs(scaling) if r.startswith("#/$defs/")
               and r[len("#/$defs/"):] not in scaling.get("$defs", {})]
    seen = set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        if name not in adefs:
            raise SystemExit(f"{SCALING}: $defs/{name} is in neither schema")
        defs[name] = adefs[name]
        wanted += [r[len("#/$defs/"):] for r in refs(adefs[name]) if r.startswith("#/$defs/")]
    for r in refs(out):
        if not r.startswith("#"):
            raise SystemExit(f"{SCALING}: $ref {r} is not local")
    return out


def main(argv):
    check = "--check" in argv
    args = [a for a in argv[1:] if a != "--check"]
    d = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                          "docs", "schemas")
    with open(os.path.join(d, ANALYSIS), encoding="utf-8") as f:
        analysis = json.load(f)
    with open(os.path.join(d, SCALING), encoding="utf-8") as f:
        scaling = json.load(f)
    out = bundle(analysis, scaling)
    text = json.dumps(out, indent=2, ensure_ascii=False) + "\n"
    if check:
        if out != scaling:
            stale = sorted(k for k in out.get("$defs", {})
                           if out["$defs"][k] != scaling.get("$defs", {}).get(k))
            print(f"{SCALING} is not the bundle of {ANALYSIS}: $defs differ: "
                  f"{', '.join(stale) or '(refs)'}; run scripts/bundle_schemas.py")
            return 1
        return 0
    with open(os.path.join(d, SCALING), "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
