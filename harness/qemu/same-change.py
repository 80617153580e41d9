#!/usr/bin/env python3
"""same-change.py MAIL BACKPORT: the backport our QEMU build applies makes
the change of the mail for QEMU master: the same commit message (up to
its '---') and the same lines added and removed, in order (paths,
context and line numbers aside).  Exits 1, saying what differs, if not.
"""
import sys


def parts(path):
    text = open(path).read()
    head, _, rest = text.partition("\n\n")
    subject = [l for l in head.split("\n") if l.startswith("Subject: ")]
    message = rest.split("\n---\n", 1)[0]
    diff = rest[rest.index("\ndiff --git "):] if "\ndiff --git " in rest else ""
    diff = diff.split("\n-- \n", 1)[0]
    lines = [l for l in diff.split("\n")
             if l[:1] in "+-" and not l.startswith(("+++ ", "--- "))]
    return subject, message, lines


def main():
    a, b = parts(sys.argv[1]), parts(sys.argv[2])
    bad = []
    if a[0] != b[0]:
        bad.append("the subjects differ")
    if a[1] != b[1]:
        bad.append("the commit messages differ")
    if not a[2] or a[2] != b[2]:
        bad.append("the lines added and removed differ")
    for why in bad:
        print("same-change: %s: %s" % (sys.argv[2], why))
    if not bad:
        print("same-change: the backport makes the mail's change")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
