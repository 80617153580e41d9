#!/usr/bin/env python3
"""Check (or with --write, regenerate) the tables that documents carry
from records: a line

    <!-- generated: harness/SCRIPT.py results/RECORD.json -->

followed by a fenced block holds exactly what the script prints for the
record.  Only scripts of harness/ and records of results/ are run.

    doc-tables.py [--write] FILE...
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = re.compile(r"^<!-- generated: (harness/[\w-]+\.py) "
                  r"(results/[\w.+-]+\.json) -->$")


def blocks(lines):
    """[(index of the marker, its command, first and end line of the
    fenced block's body)]"""
    out = []
    for i, line in enumerate(lines):
        m = MARK.match(line.rstrip("\n"))
        if not m:
            if line.startswith("<!-- generated:"):
                raise ValueError("line %d: not a script of harness/ and a "
                                 "record of results/" % (i + 1))
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            raise ValueError("line %d: no fenced block after the marker"
                             % (i + 1))
        end = next((j for j in range(i + 2, len(lines))
                    if lines[j].startswith("```")), None)
        if end is None:
            raise ValueError("line %d: fenced block not closed" % (i + 2))
        out.append((i, m.groups(), i + 2, end))
    return out


def main(argv):
    write = argv[:1] == ["--write"]
    files = argv[1:] if write else argv
    if not files:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    bad = 0
    for path in files:
        with open(path) as f:
            lines = f.readlines()
        try:
            found = blocks(lines)
        except ValueError as e:
            print("%s: %s" % (path, e), file=sys.stderr)
            bad += 1
            continue
        for i, (script, record), start, end in reversed(found):
            p = subprocess.run([sys.executable, os.path.join(ROOT, script),
                                os.path.join(ROOT, record)],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print("%s:%d: %s %s failed: %s" % (path, i + 1, script, record,
                                                   p.stderr.strip()),
                      file=sys.stderr)
                bad += 1
                continue
            want = p.stdout.splitlines(keepends=True)
            if lines[start:end] == want:
                continue
            if write:
                lines[start:end] = want
            else:
                print("%s:%d: the table differs from %s %s" % (
                    path, i + 1, script, record), file=sys.stderr)
                bad += 1
        if write:
            with open(path, "w") as f:
                f.writelines(lines)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
