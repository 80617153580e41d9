#!/usr/bin/env python3
"""check-letters.py [ROOT]: every record a cover letter (patches/*/0000-
cover-letter.patch) draws its tables from is of that base's mails as they
are now (record.py's mails(): what `git am` applies).  check.sh runs it
after writing its own record, outside it: a run on new mails writes the
record the letters are then regenerated from.  Exits 1, naming each
letter and record, if any is of other mails."""
import glob
import importlib.util
import json
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))
spec = importlib.util.spec_from_file_location(
    "record", os.path.join(root, "harness", "record.py"))
record = importlib.util.module_from_spec(spec)
spec.loader.exec_module(record)
PROSE = ("-fault-count", "-fault-ledger")
bad = 0
for letter in sorted(glob.glob(os.path.join(root, "patches", "*",
                                            "0000-cover-letter.patch"))):
    text = open(letter).read()
    for rec in sorted(set(re.findall(r"results/[\w.+-]+\.json", text))):
        if any(p in rec for p in PROSE):
            continue
        r = json.load(open(os.path.join(root, rec)))
        base = r["tree"]["base"]
        if r.get("series", {}).get(base) != record.mails(base):
            print("%s: %s is of other mails than patches/%s's"
                  % (os.path.relpath(letter, root), rec, base))
            bad += 1
print("letters: %s" % ("every record of the mails as they are" if not bad
                       else "%d records of other mails" % bad))
sys.exit(1 if bad else 0)
