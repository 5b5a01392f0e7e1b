#!/usr/bin/python3
"""Fails on a key of a tfdiag JSON document that its documentation does not list.

usage: json_keys_documented.py DOC_MD DOCUMENT...

DOC_MD is the Markdown page that documents the documents key by key (docs/json.md): a table
whose rows start with the top-level key(s) in backticks (| `findings[]` | ... |). Each key of
each document, at any depth, must be named in backticks in the row of the top-level key it sits
under (`trusted` in the row of `findings[]`); the top-level keys must each have a row. Keys of
maps, whose names are data (import.skipped's reasons, import.ignored's kinds, a scaling run's
ps_busy_pct tasks), are not names to document; they are the objects the row calls a map with
`{reason: count}`, `{kind: count}` or `{task: pct}`.
Prints one line per undocumented key (its JSON path) and exits 1 if any; 0 when every key is
documented. Independent of the code that writes the documents: it reads only the page and the
documents.
"""
import json
import re
import sys

# Objects whose keys are data, by their key: the rows document them as {name: count} maps.
MAPS = {"skipped", "ignored", "ps_busy_pct"}


def rows(md):
    """{top-level key: row text} from the page's tables."""
    out = {}
    for line in md.splitlines():
        if not line.startswith("| `"):
            continue
        cells = line.split("|")
        if len(cells) < 3:
            continue
        for key in re.findall(r"`([a-z_0-9]+)(?:\[\])?`", cells[1]):
            out[key] = out.get(key, "") + line
    return out


def named(row):
    """The names a row lists: words in backticks and the words of its key lists."""
    names = set()
    for code in re.findall(r"`([^`]*)`", row):
        names.update(re.findall(r"[a-z_][a-z_0-9]*", code))
    return names


def walk(node, path, top, names, bad):
    if isinstance(node, dict):
        for k, v in node.items():
            if path and path.split(".")[-1].rstrip("[]") in MAPS:
                walk(v, f"{path}.{k}", top, names, bad)
                continue
            if k not in names[top]:
                bad.add(f"{path}.{k}")
            walk(v, f"{path}.{k}", top, names, bad)
    elif isinstance(node, list):
        for v in node:
            walk(v, path + "[]", top, names, bad)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        table = rows(f.read())
    names = {k: named(v) for k, v in table.items()}
    bad = set()
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for k, v in doc.items():
            if k not in table:
                bad.add(f"{k} (no row)")
                continue
            walk(v, k, k, names, bad)
    for b in sorted(bad):
        print(f"{argv[1]}: key not documented: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
