#!/usr/bin/env python3
"""Lint a series of git format-patch mails: Xen's CODING_STYLE on the
added lines of C files, and docs/process/sending-patches on the mails.

usage: lint-patches.py DIR|PATCH...   (exit 1 on any finding)
"""
import os
import re
import sys

CONTROL = re.compile(r"\b(if|while|for|switch)\s*\((.*)\)")
SUBJECT = re.compile(r"^Subject: \[PATCH[^\]]*\] (.*)")


def lint_code(name, lineno, line, out):
    where = f"{name}:{lineno}"
    if "\t" in line:
        out.append(f"{where}: tab")
    if len(line) > 80:
        out.append(f"{where}: {len(line)} columns > 80")
    if line != line.rstrip():
        out.append(f"{where}: trailing whitespace")
    s = line.strip()
    if "//" in re.sub(r'"[^"]*"', '""', s) and not s.startswith("*"):
        out.append(f"{where}: // comment, use /* */")
    m = CONTROL.search(re.sub(r'"[^"]*"', '""', s))
    if m and not s.startswith(("*", "/*")):
        inner = s[s.index("(", m.start()):]
        if not inner.startswith("( ") and inner != "()":
            out.append(f"{where}: '{m.group(1)} (' needs spaces inside the parentheses")
    if re.search(r"\b(if|while|for|switch|else)\b.*\{\s*$", s) and not s.startswith(("*", "/*")):
        if not re.match(r"^(do|\}?\s*while)\b", s) and "=" not in s.split("(")[0]:
            out.append(f"{where}: brace on the control statement's line")
    if re.match(r"^\s*(static\s+)?[\w\s\*]+\([^;]*\)\s*\{\s*$", line) and not CONTROL.search(s):
        out.append(f"{where}: function brace must be on its own line")
    indent = len(line) - len(line.lstrip(" "))
    if line.strip() and indent % 4 and not s.startswith("*") \
            and not re.search(r"[,(&|+\-?:=<>*/%^]\s*$", prev_code.get(name, "")) \
            and not s.startswith(("&&", "||", "?", ":", "+", "-", ")", '"')):
        out.append(f"{where}: indent {indent} is not a multiple of 4")
    prev_code[name] = line


prev_code = {}


def lint_mail(path):
    out = []
    name = os.path.basename(path)
    text = open(path, errors="replace").read()
    head, _, rest = text.partition("\n\n")
    subj = ""
    hl = head.split("\n")
    for i, l in enumerate(hl):
        if l.startswith("Subject:"):
            subj = l
            j = i + 1
            while j < len(hl) and hl[j].startswith(" "):
                subj += hl[j]
                j += 1
    m = SUBJECT.match(subj)
    if not m:
        out.append(f"{name}: no [PATCH] subject")
        return out
    summary = m.group(1)
    if "*** SUBJECT HERE ***" in summary or "*** BLURB HERE ***" in text:
        out.append(f"{name}: cover letter placeholders left")
    cover = "/0000-" in "/" + name
    if not cover:
        if not re.match(r"^[\w/.-]+(, [\w/.-]+)*: \S", summary):
            out.append(f"{name}: subject is not '<prefix>: <summary>': {summary}")
        if len(summary) > 80:
            out.append(f"{name}: subject longer than 80: {summary}")
    body, sep, diff = rest.partition("\n---\n")
    for k, l in enumerate(body.split("\n"), 1):
        if len(l) > 75 and not l.startswith(("Link:", "http")):
            out.append(f"{name}: body line {k} longer than 75 columns")
    if re.search(r"^Signed-off-by:", body, re.M):
        out.append(f"{name}: Signed-off-by present: the sender adds their own")
    fname, lineno = None, 0
    for l in diff.split("\n"):
        if l.startswith("+++ "):
            fname = l[6:] if l.startswith("+++ b/") else None
            continue
        h = re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)", l)
        if h:
            lineno = int(h.group(1))
            continue
        if fname is None or not fname.endswith((".c", ".h")):
            continue
        if l.startswith("+"):
            lint_code(f"{name}:{fname}", lineno, l[1:], out)
            lineno += 1
        elif l.startswith(" "):
            prev_code[f"{name}:{fname}"] = l[1:]
            lineno += 1
    return out


def main():
    files = []
    for arg in sys.argv[1:]:
        if os.path.isdir(arg):
            files += sorted(os.path.join(arg, f) for f in os.listdir(arg)
                            if f.endswith(".patch"))
        else:
            files.append(arg)
    if not files:
        print("lint: no patches given")
        return 1
    findings = []
    for f in files:
        findings += lint_mail(f)
    for x in findings:
        print("lint:", x)
    print(f"lint: {len(files)} mails, {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
