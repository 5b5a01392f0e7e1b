#!/usr/bin/python3
"""Validates JSON documents against a JSON Schema (draft 7) with Debian's python3-jsonschema.

usage: validate_json.py SCHEMA DOCUMENT...

Each schema must be complete alone, as a user's validator would read it offline: a "$ref" that
is not local ("#/...") is refused (no network, no store of sibling files; the scaling schema
bundles the analysis definitions it uses, scripts/bundle_schemas.py). Formats are checked: "uri" (an absolute URI, RFC 3986 section 4.3: a scheme, then only
URI characters and valid %-escapes; http and https need a host) and "uri-reference" here, since
jsonschema checks them only when the rfc3987 module is installed, which no Debian package
python3-jsonschema depends on; the other draft 7 formats by jsonschema. Prints one line per
violation, naming the document and the JSON path, and exits 1 if any; exits 0 when every
document is valid.
"""
import json
import os
import re
import sys

import jsonschema

# RFC 3986 appendix B: scheme, authority, path, query, fragment.
_URI_PARTS = re.compile(r"^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")
# unreserved, reserved (gen-delims, sub-delims) and %HH: every character a URI may hold.
_URI_CHARS = re.compile(r"^(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")


def _uri_reference(value):
    return isinstance(value, str) and _URI_CHARS.match(value) is not None


def _absolute_uri(value):
    if not _uri_reference(value):
        return False
    m = _URI_PARTS.match(value)
    scheme, authority = m.group(2), m.group(4)
    if scheme is None or not _SCHEME.match(scheme):
        return False
    if scheme.lower() in ("http", "https") and not authority:
        return False
    return True


def format_checker():
    """Draft 7's format checker with "uri" and "uri-reference" always checked."""
    base = getattr(jsonschema.Draft7Validator, "FORMAT_CHECKER", None)
    if base is None:
        base = jsonschema.draft7_format_checker
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = dict(base.checkers)
    checker.checkers["uri"] = (_absolute_uri, ())
    checker.checkers["uri-reference"] = (_uri_reference, ())
    return checker


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema_path = argv[1]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)

    def refuse(uri):
        raise jsonschema.exceptions.RefResolutionError(
            f"{schema_path}: $ref {uri} is not local; a validator offline cannot resolve it")

    resolver = jsonschema.RefResolver(
        base_uri=schema.get("$id", ""), referrer=schema, store={},
        handlers={"http": refuse, "https": refuse, "file": refuse, "": refuse})
    validator = jsonschema.Draft7Validator(
        schema, resolver=resolver, format_checker=format_checker())
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
