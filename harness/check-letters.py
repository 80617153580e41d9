#!/usr/bin/env python3
"""check-letters.py [ROOT]: every record a cover letter (patches/*/0000-
cover-letter.patch) draws its tables from is of that base's mails as they
are now (record.py's mails(): what `git am` applies), and was run under
the proving ground's QEMU build as it is now (qemu_id(): the name
get-qemu.sh gives it).  check.sh runs it after writing its own record,
outside it: a run on new mails, or under a new build, writes the record
the letters are then regenerated from.  Exits 1, naming each letter and
record, if any is of other mails or another build."""
import glob
import hashlib
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


def qemu_id():
    """get-qemu.sh's name of the build: a hash of the Debian version,
    get-qemu.sh itself and the patches' diffs (not their messages)."""
    h = hashlib.sha256()
    with open(os.path.join(root, "harness", "lib.sh")) as f:
        h.update(re.search(r"^PG_QEMU_DEB_VERSION=(\S+)$", f.read(),
                           re.M).group(1).encode() + b"\n")
    with open(os.path.join(root, "harness", "get-qemu.sh"), "rb") as f:
        h.update(f.read())
    for p in sorted(glob.glob(os.path.join(root, "harness", "qemu",
                                           "*.patch"))):
        with open(p, "rb") as f:
            text = f.read()
        i = text.find(b"diff --git ")
        while i > 0 and text[i - 1:i] != b"\n":
            i = text.find(b"diff --git ", i + 1)
        if i >= 0:
            h.update(text[i:])
    return h.hexdigest()[:12]


build = "harness/qemu %s)" % qemu_id()
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
        qemu = (r.get("emulators") or {}).get("qemu") or ""
        if not qemu.endswith(build):
            print("%s: %s ran under QEMU %s, not the current build (%s"
                  % (os.path.relpath(letter, root), rec, qemu or "unknown",
                     build))
            bad += 1
print("letters: %s" % ("every record of the mails and the QEMU build as "
                       "they are" if not bad else
                       "%d records of other mails or QEMU builds" % bad))
sys.exit(1 if bad else 0)
