#!/usr/bin/python3
"""Validates JSON documents against a JSON Schema (draft 7) with Debian's python3-jsonschema.

usage: validate_json.py SCHEMA DOCUMENT...

Schemas beside SCHEMA (*.schema.json) are loaded too, so a "$ref" to a sibling file resolves
offline. URI formats are checked (format_checker). Prints one line per violation, naming the
document and the JSON path, and exits 1 if any; exits 0 when every document is valid.
"""
import glob
import json
import os
import sys

import jsonschema


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema_path = argv[1]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    store = {}
    for p in glob.glob(os.path.join(os.path.dirname(os.path.abspath(schema_path)), "*.schema.json")):
        with open(p, encoding="utf-8") as f:
            s = json.load(f)
        if "$id" in s:
            store[s["$id"]] = s
    resolver = jsonschema.RefResolver(base_uri=schema.get("$id", ""), referrer=schema, store=store)
    validator = jsonschema.Draft7Validator(
        schema, resolver=resolver, format_checker=jsonschema.draft7_format_checker)
    bad = 0
    for doc_path in argv[2:]:
        with open(doc_path, encoding="utf-8") as f:
            doc = json.load(f)
        for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))[:20]:
            where = "/".join(str(p) for p in e.absolute_path)
            print(f"{doc_path}: /{where}: {e.message[:300]}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
