#!/usr/bin/env python3
"""Print what a record of results/ (harness/record.py) holds beyond the
unmap tables of cover-table.py: the environment set, each stage's
verdict (and `make configs`' steps), the boots' failed checks and
problems (a stage `make` does not fail on them), the torture's verdict per build and
its problems (and those of the torture under Bochs, EPT with two CPUs),
and the EPT path's p2m flushes.
harness/README.md carries its output (doc-tables.py)."""
import json
import shlex
import sys

r = json.load(open(sys.argv[1]))
t = r.get("tree") or {}
print(f"  {r['what']}, {r['date'][:10]}, commit {r['commit']}")
print(f"  Xen {t.get('xen_version', '?')} ({t.get('base', '?')}, "
      f"{t.get('describe', '?')}); QEMU {r['emulators']['qemu']}, "
      f"Bochs {r['emulators']['bochs']}")
if r.get("env"):
    print("  environment: " + " ".join(
        f"{k}={shlex.quote(v)}" for k, v in sorted(r["env"].items())))
for name, verdict in r["stages"].items():
    print(f"  {verdict:<6} {name}" if verdict in ("ok", "failed") else
          f"  {verdict}: {name}")
if r["missing"]:
    print(f"  no output: {', '.join(r['missing'])}")
for name, verdict in (r.get("configs") or {}).items():
    print(f"  {verdict:<6}   {name}")
for key in ("boots", "ept"):
    b = r.get(key) or {}
    for f in b.get("failures") or []:
        print(f"  FAIL: {f}")
    for p in b.get("problems") or []:
        print(f"  problem: {p}")
for key, title in (("torture", "torture build"),
                   ("torture_ept", "torture, EPT, 2 CPUs")):
    if key not in r:
        continue
    print()
    print(f"  {title:<34} {'role':<7} {'cases':>5} {'pages':>6}  verdict")
    for b in r[key]["builds"]:
        role = b.get("role", "build")
        if role == "build":
            what = "pass" if b["ok"] else "FAIL"
        else:
            # caught_in: the cases with an oracle report or a failure;
            # a control caught by a Xen assertion has none: its catch.
            what = ("caught in " + (" ".join(b["caught_in"]) or
                                    " ".join(b.get("caught_by", [])) or
                                    "none")
                    if b["ok"] else "NOT CAUGHT")
            race = [c.split()[0] for c in b.get("caught_by", [])
                    if c.endswith("(race)")]
            if race:
                what += "; read stale in " + " ".join(race)
        print(f"  {b['build']:<34} {role:<7} {b['cases']:>5} "
              f"{b['pages']:>6}  {what}")
    for p in r[key].get("problems", []):
        print(f"  torture problem: {p}")
if "ept" in r:
    rows = r["ept"]["rows"].get("none", {})
    print()
    print("  EPT (Bochs), p2m flushes per unmap of N grants:")
    for v, xs in sorted(rows.items()):
        print(f"  {v:<17} " + "  ".join(
            f"{x['n']}:{x['p2m_tlb_flushes']}" for x in
            sorted(xs, key=lambda x: (x['stride'], x['n']))))
    for v, o in (r["ept"].get("oracle") or {}).get("none", {}).items():
        print(f"  {v:<17} oracle reports: {o}")
