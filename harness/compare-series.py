#!/usr/bin/env python3
"""For each patch, the staging and stable-4.17 versions must change the
same functions.  Lists, per patch, the functions (hunk headers and new
definitions) only one of them touches, and fails unless README (the
project's patches/README.md) explains each of them: names it in its
"Staging and 4.17" section.

With --same, the two series must make the same changes: per patch, the
same lines added and removed in each file, in order, whatever their
context and line numbers (the stable-4.19 series is the stable-4.17
one on another base).  Lists each patch that differs, and fails if any.

usage: compare-series.py PATCHDIR_A PATCHDIR_B README
       compare-series.py --same PATCHDIR_A PATCHDIR_B
"""
import glob
import os
import re
import sys

FUNC = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined"}


def functions(path):
    """Names of the functions a patch changes, per file."""
    names = set()
    fname = None
    cur_def = None
    for line in open(path, errors="replace"):
        if line.startswith("+++ "):
            fname = line[6:].strip()
            continue
        if line == "-- \n":        # the mail's signature: the diff ended
            fname = None
            continue
        m = re.match(r"^@@ [^@]+ @@ ?(.*)$", line)
        if m:
            h = FUNC.search(m.group(1))
            cur_def = h.group(1) if h and h.group(1) not in KEYWORDS else None
            continue
        if fname is None:
            continue
        # A definition line in context or added: the hunk is now inside it.
        m = re.match(r"^[ +](?:static\s+)?(?:inline\s+)?[\w\s\*]+?\b([A-Za-z_]\w*)\($",
                     line.rstrip("\n")) or \
            re.match(r"^[ +](?:static\s+)?(?:inline\s+)?(?:[\w]+\s+\**)+([A-Za-z_]\w*)\(.*[^;]$",
                     line.rstrip("\n"))
        if m and m.group(1) not in KEYWORDS and not line[1:2].isspace():
            cur_def = m.group(1)
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            if cur_def:
                names.add(f"{os.path.basename(fname)}:{cur_def}")
    return names


def changes(path):
    """The lines a mail's diff adds and removes, per file, in order."""
    out, fname = {}, None
    for line in open(path, errors="replace"):
        if line.startswith("diff --git "):
            fname = line.split()[-1][2:]
            out.setdefault(fname, [])
        elif line == "-- \n":
            fname = None
        elif fname and line.startswith(("+", "-")) and \
                not line.startswith(("+++ ", "--- ")):
            out[fname].append(line.rstrip("\n"))
    return out


def same(a, b):
    bad = 0
    pas = sorted(glob.glob(os.path.join(a, "000[1-9]-*.patch")))
    pbs = sorted(glob.glob(os.path.join(b, "000[1-9]-*.patch")))
    if [os.path.basename(p)[:4] for p in pas] != \
            [os.path.basename(p)[:4] for p in pbs] or not pas:
        print(f"compare-series: {a} and {b} hold other patches")
        return 1
    for pa, pb in zip(pas, pbs):
        num = os.path.basename(pa)[:4]
        ca, cb = changes(pa), changes(pb)
        if ca == cb:
            print(f"{num}: the same changes to {len(ca)} files")
            continue
        bad += 1
        for f in sorted(set(ca) | set(cb)):
            if ca.get(f) != cb.get(f):
                print(f"{num}: {f} changed otherwise")
    print(f"compare-series: {'ok' if not bad else f'{bad} patches differ'}")
    return 1 if bad else 0


def main():
    if sys.argv[1:2] == ["--same"]:
        return same(*sys.argv[2:4])
    a, b, readme = sys.argv[1:4]
    text = open(readme).read()
    sec = text[text.find("## Staging and 4.17"):]
    sec = sec[:sec.find("\n## ", 3)] if "\n## " in sec[3:] else sec
    bad = 0
    for pa in sorted(glob.glob(os.path.join(a, "000[1-9]-*.patch"))):
        num = os.path.basename(pa)[:4]
        pb = glob.glob(os.path.join(b, num + "-*.patch"))
        if not pb:
            print(f"{num}: missing in {b}")
            bad += 1
            continue
        fa, fb = functions(pa), functions(pb[0])
        for side, only in ((os.path.basename(a), fa - fb), (os.path.basename(b), fb - fa)):
            for f in sorted(only):
                fn = f.split(":")[1]
                ok = fn in sec
                print(f"{num}: only {side} changes {f}"
                      + ("" if ok else "  <- not explained in README"))
                bad += not ok
        if fa == fb:
            print(f"{num}: same {len(fa)} functions")
    print(f"compare-series: {'ok' if not bad else f'{bad} unexplained'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
