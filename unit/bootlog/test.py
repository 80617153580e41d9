#!/usr/bin/env python3
"""The boot-log parsers (harness/report.py, harness/torture-report.py,
bench/netback/report.py) on interleaved and cut-off console lines: each
must read the counts of a line a Xen message interrupted, see the Xen
message as its own line, and list a line it cannot read as a problem
(log path and physical line number) instead of crashing or inventing a
count.  BOOTLOG_PY=path makes the parsers use that reader instead of
harness/bootlog.py (for unit.sh's negative controls)."""
import importlib.util
import io
import json
import os
import sys
import tempfile
import traceback
from contextlib import redirect_stdout

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "harness"))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


BOOTLOG = os.environ.get("BOOTLOG_PY") or os.path.join(ROOT, "harness", "bootlog.py")
load("bootlog", BOOTLOG)
report = load("report", os.path.join(ROOT, "harness", "report.py"))
torture = load("torture_report", os.path.join(ROOT, "harness", "torture-report.py"))
netback = load("nb_report", os.path.join(ROOT, "bench", "netback", "report.py"))

TMP = tempfile.mkdtemp()
passed = failed = 0


def log(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def test(what, fn):
    global passed, failed
    try:
        with redirect_stdout(io.StringIO()):
            fn()
        passed += 1
    except Exception:       # noqa: BLE001
        failed += 1
        print(f"FAIL: {what}\n" + traceback.format_exc(limit=-2))


def at(problems, path, lineno):
    """The problems naming line lineno of path."""
    return [p for p in problems if p.startswith(f"{path}:{lineno}:")]


XEN = "(XEN) common/grant_table.c:1890:d0v0 Expanding d0 grant table from 1 to 2 frames"
ASSERT = "(XEN) Assertion 'x' failed at common/grant_table.c:1"
COUNTERS = ("pg_p2m_tlb_flush=256 pg_flush_ipi=0 pg_iotlb_global=0 "
            "pg_iotlb_domain=0 pg_iotlb_page=256 pg_iotlb_wait=256")
# The line of the issue, verbatim.
ISSUE = ("NB-UNMAP ms=32.75 n=256 phase=unmap hypercalls=6 " + COUNTERS + XEN)

# --- harness/report.py: PG-END has the same key=value shape.
PG_HEAD = "PG-START version=1 perfc=1\nPG-BEGIN n=256 phase=unmap\n"
PG_END = "PG-END n=256 phase=unmap hypercalls=6 " + COUNTERS
PG_TAIL = "PG-DONE\n"


def pg_counts(text, problems_ok=()):
    path = log("pg.log", text)
    runs, dma, problems, oracle = report.parse(path)
    xen = runs[(256, "unmap", 1)]["xen"]
    want = {"hypercalls": 6, "pg_p2m_tlb_flush": 256, "pg_flush_ipi": 0,
            "pg_iotlb_global": 0, "pg_iotlb_domain": 0, "pg_iotlb_page": 256,
            "pg_iotlb_wait": 256}
    assert xen == want, xen
    assert len(problems) == len(problems_ok) and all(
        at(problems, path, n) for n in problems_ok), problems
    return path, problems


def pg_issue():
    pg_counts(PG_HEAD + PG_END + XEN + "\n\n" + PG_TAIL)


def pg_issue_assert():
    # The Xen fragment is a line of its own: its assertion is found, at
    # its physical line (3).
    _, p = pg_counts(PG_HEAD + PG_END + ASSERT + "\n\n" + PG_TAIL, (3,))
    assert "Xen assertion" in p[0], p


def pg_mid_value():
    cut = PG_END.index("wait=") + 2
    pg_counts(PG_HEAD + PG_END[:cut] + XEN + "\n" + PG_END[cut:] + "\n" + PG_TAIL)


def pg_split():
    # Split between two pairs, with several Xen and guest lines, a QEMU
    # trace event and a kernel message in between.  PG-END counts from
    # its first line: the trace event before it counts, the one after
    # does not.  The assertion in between is found at its line (6).
    cut = PG_END.index(" pg_iotlb_page")
    path, p = pg_counts(
        PG_HEAD + "vtd_inv_desc_iotlb_pages dom 0x1 addr 0x0 mask 0 ih 0\n"
        + PG_END[:cut] + XEN + "\n(XEN) more\n" + ASSERT + "\n(d1) guest says hi\n"
        + "vtd_inv_desc_wait status write\n[   12.345] xen: a kernel message\n"
        + PG_END[cut:] + "\n" + PG_TAIL, (6,))
    runs = report.parse(path)[0]
    c = runs[(256, "unmap", 1)]
    assert c["iotlb_inv_pages"] == 1 and c["iotlb_waits"] == 0, c


def pg_kernel_mid_line():
    # dom0's kernel wrote a message into the workload line, glued to a
    # value; the line's newline came after it.  The counts are read, the
    # kernel message is a line of its own (a warning: no problem).
    cut = PG_END.index(" pg_iotlb_wait")
    path, p = pg_counts(PG_HEAD + PG_END[:cut]
                        + "[   10.095038] hrtimer: interrupt took 107821128 ns\n"
                        + PG_END[cut:] + "\n" + PG_TAIL)
    lines = [t for _, t in sys.modules["bootlog"].BootLog(path)]
    assert "[   10.095038] hrtimer: interrupt took 107821128 ns" in lines, lines


def pg_split_amd():
    # AMD-Vi's trace events between a line's start and its rest pass
    # through like VT-d's; the one before PG-END counts.
    cut = PG_END.index(" pg_iotlb_page")
    ev = "amdvi_completion_wait completion wait requested with store " \
         "address 0x1000 and store data 0x1\n"
    path, p = pg_counts(PG_HEAD + ev + PG_END[:cut]
                        + "[   11.000001] xen: a kernel message\n" + ev
                        + "amdvi_pages_inval AMD-Vi pages for domain 0x0000 "
                        "invalidated\n" + PG_END[cut:] + "\n" + PG_TAIL)
    c = report.parse(path)[0][(256, "unmap", 1)]
    assert c["iotlb_waits"] == 1 and c["amd_inv_pages"] == 0, c


def pg_event_mid_line():
    # A trace event QEMU wrote between two bytes of a workload line:
    # glued to a value, or after a space.  The line's counts are read,
    # the event is a line of its own and counts (before PG-END, so in
    # the phase).
    ev = "vtd_inv_desc_wait_sw wait invalidate status write addr 0x1000 " \
         "data 0x1\n"
    cut = PG_END.index("=256 pg_iotlb_wait") + 3
    begin = PG_HEAD.index("phase=") + 6
    path, p = pg_counts(PG_HEAD[:begin] + ev + PG_HEAD[begin:]
                        + PG_END[:cut] + ev + PG_END[cut:] + " \n" + PG_TAIL)
    c = report.parse(path)[0][(256, "unmap", 1)]
    assert c["iotlb_waits"] == 1, c
    lines = [t for _, t in sys.modules["bootlog"].BootLog(path)]
    assert lines.count(ev[:-1]) == 2, lines
    cut = PG_END.index("pg_iotlb_page")
    pg_counts(PG_HEAD + PG_END[:cut] + "amdvi_pages_inval AMD-Vi pages for "
              "domain 0x0000 invalidated\n" + PG_END[cut:] + "\n" + PG_TAIL)


def pg_end_empty():
    # A PG-END with no counter at all is named, with its line.
    path = log("pg.log", PG_HEAD + "PG-END n=256 phase=unmap\n" + PG_TAIL)
    runs, dma, problems, oracle = report.parse(path)
    assert runs[(256, "unmap", 1)]["xen"] == {}, runs
    assert at(problems, path, 3) and "without a counter" in problems[0], problems


def pg_cut():
    # Cut off mid value: "pg_iotlb_wait=2" of 256 must not be taken.
    path = log("pg.log", PG_HEAD + PG_END[:-2])
    runs, dma, problems, oracle = report.parse(path)
    assert runs[(256, "unmap", 1)]["xen"] == {}, runs
    assert at(problems, path, 3), problems


def main(mod, *args):
    """mod.main() as if run with args: (exit status, its output)."""
    argv, sys.argv = sys.argv, ["report.py"] + list(args)
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            rc = mod.main()
    except SystemExit as e:
        rc = e.code
    finally:
        sys.argv = argv
    return rc, out.getvalue()


def pg_cut_check():
    # With --check: the missing count named, and a failure.
    base = log("base.log", PG_HEAD + PG_END[:-2])
    rc, out = main(report, "--tree-base", "t", "--describe", "t",
                   "--xen-version", "t", "--json", os.path.join(TMP, "r.json"),
                   "--check", f"base={base}", f"patched={base}")
    assert rc == 1, rc
    assert "base n=256 stride=1 unmap: no p2m flush counter" in out, out
    assert f"{base}:3: the log ends inside this line" in out, out


def pg_bad_value():
    # A value that still cannot be read costs that value, not the run.
    path = log("pg.log", PG_HEAD + PG_END.replace("pg_flush_ipi=0", "pg_flush_ipi=0x")
               + "\n" + PG_TAIL)
    runs, dma, problems, oracle = report.parse(path)
    assert "pg_flush_ipi" not in runs[(256, "unmap", 1)]["xen"]
    assert runs[(256, "unmap", 1)]["xen"]["pg_iotlb_wait"] == 256
    assert at(problems, path, 3) and "pg_flush_ipi=0x" in problems[0], problems


def pg_amd():
    # AMD-Vi: QEMU's trace counts INVALIDATE_IOMMU_PAGES commands (whatever
    # their size) and COMPLETION_WAITs; Xen's counters split the commands
    # into 4K/2M/1G blocks and all-pages.  The observers agree on 2 commands
    # and 2 waits; one more trace event than Xen counted is a problem, as is
    # an IOMMU fault outside the DMA detector's window.
    amd = ("pg_p2m_tlb_flush=1 pg_flush_ipi=0 pg_iotlb_global=0 "
           "pg_iotlb_domain=1 pg_iotlb_page=1 pg_iotlb_wait=2 "
           "pg_iotlb_pages=512 pg_iotlb_2m=1 pg_iotlb_1g=0")
    ev = ("amdvi_pages_inval AMD-Vi pages for domain 0x0000 invalidated\n"
          "123@1700000000.000001:amdvi_completion_wait completion wait "
          "requested with store address 0x1000 and store data 0x1\n")
    end = "PG-END n=256 phase=unmap hypercalls=6 " + amd + "\n"

    def run(text):
        path = log("amd.log", text)
        rc, out = main(report, "--tree-base", "t", "--describe", "t",
                       "--xen-version", "t", "--tables", "--json",
                       os.path.join(TMP, "r.json"), f"amd-vi:base={path}")
        return json.load(open(os.path.join(TMP, "r.json"))), out
    r, out = run(PG_HEAD + ev + ev + end + PG_TAIL)
    x = r["runs"][0]
    assert x["iommu"] == "amd-vi" and x["qemu_inv_pages_cmds"] == 2, x
    assert x["iotlb_inv_pages"] == 1 and x["iotlb_inv_domain"] == 1, x
    assert x["iotlb_waits"] == 2 and x["iotlb_pages_covered"] == 512, x
    assert x["iotlb_inv_by_size"] == {"4k": 0, "<=2m": 1, "<=1g": 0}, x
    assert r["problems"] == [], r["problems"]
    assert "4K/2M/1G" in out and "0/1/0" in out, out
    r, out = run(PG_HEAD + ev + ev + ev.split("\n")[0] + "\n" + end + PG_TAIL)
    assert any("QEMU saw qemu_inv_pages_cmds 3, Xen counted 2" in p
               for p in r["problems"]), r["problems"]
    r, out = run(PG_HEAD + ev + ev + "amdvi_page_fault error: page fault "
                 "accessing guest physical address 0x1000\n" + end + PG_TAIL)
    assert any("unexpected IOMMU fault" in p for p in r["problems"]), r
    r, out = run(PG_HEAD + ev + ev + end.replace(" pg_iotlb_2m=1", "")
                 + PG_TAIL)
    assert x and r["runs"][0]["iotlb_inv_by_size"] is None and any(
        "no Xen counters of the invalidations' sizes" in p
        for p in r["problems"]), r["problems"]


# --- harness/torture-report.py
T_CASE = ("PG-T case=c32 n=32 rc=0 want=0 pages=32 dma_pages=2 stale_dma=0 "
          "stale_cpu=0 stale_race=0 bad=0 result=pass")
T_END = ("PG-T-END pages=32 dma_pages=2 stale_dma=0 stale_cpu=0 failed=0 dma=2 "
         "vcpus=2 leaked=32")


def t_run(text, problems_ok=()):
    path = log("t.log", text)
    run = torture.parse("patched", path)
    assert run["end"] == {"pages": 32, "dma_pages": 2, "stale_dma": 0,
                          "stale_cpu": 0, "failed": 0, "dma_per_32": 2,
                          "vcpus": 2, "leaked_granter_pages": 32}, run
    assert [(c["case"], c["pages"], c["stale_dma"], c["pass"]) for c in run["cases"]] \
        == [("c32", 32, 0, True)], run["cases"]
    assert len(run["problems"]) == len(problems_ok), run["problems"]
    return path, run


def t_issue():
    t_run(T_CASE + XEN + "\n\n" + T_END + XEN + "\n\n")


def t_issue_assert():
    # A kernel timestamp before the tag, an assertion in the line.
    path, run = t_run("[   10.123] " + T_CASE + ASSERT + "\n\n" + T_END + "\n", (1,))
    assert torture.verdict(run) is False and \
        run["problems"][0].startswith("Xen assertion"), run["problems"]


def t_mid_value():
    cut = T_CASE.index("stale_dma=") + 7
    t_run(T_CASE[:cut] + XEN + "\n" + T_CASE[cut:] + "\n"
          + T_END[:12] + "(d0v1) x\n" + T_END[12:] + "\n")


def t_split():
    cut = T_CASE.index(" stale_cpu")
    t_run(T_CASE[:cut] + XEN + "\n(XEN) more\n(d1) guest line\n"
          + T_CASE[cut:] + "\n" + T_END + "\n")


def t_cut():
    path = log("t.log", T_CASE + "\n" + T_END[:-1])
    run = torture.parse("patched", path)
    assert run["end"] is None and len(run["cases"]) == 1, run
    assert at(run["problems"], path, 2), run["problems"]
    assert torture.verdict(run) is False


# --- bench/netback/report.py
NB_RUN = ("NB-RUN rep=0 dir=domU-dom0 streams=1 wall=5.1 bytes=1000000 secs=5.0 "
          "bps=1600000 hc_grant_table_op=40 " + COUNTERS)


def nb_parse(text):
    path = log("nb.log", text)
    runs, info, problems = netback.parse(path)
    return path, runs, info, problems


def nb_main(*logs):
    out = os.path.join(TMP, "nb.json")
    rc, _ = main(netback, "--json", out, *logs)
    return rc, json.load(open(out))


def nb_issue():
    path, runs, info, problems = nb_parse(ISSUE + "\n\nNB-DONE\n")
    assert info["unmap"] == [{"ms": 32.75, "n": 256, "hypercalls": 6,
                              "pg_p2m_tlb_flush": 256, "pg_flush_ipi": 0,
                              "pg_iotlb_global": 0, "pg_iotlb_domain": 0,
                              "pg_iotlb_page": 256, "pg_iotlb_wait": 256}], info
    assert problems == [], problems


def nb_issue_assert():
    path, runs, info, problems = nb_parse(
        ISSUE.replace(XEN, ASSERT) + "\n\nNB-DONE\n")
    assert info["unmap"][0]["pg_iotlb_wait"] == 256, info
    assert len(problems) == 1 and at(problems, path, 1) \
        and "Xen assertion" in problems[0], problems


def nb_mid_value():
    cut = NB_RUN.index("wait=") + 3
    path, runs, info, problems = nb_parse(NB_RUN[:cut] + XEN + "\n" + NB_RUN[cut:]
                                          + "\nNB-DONE\n")
    assert len(runs) == 1 and runs[0]["pg_iotlb_wait"] == 256 \
        and runs[0]["bps"] == 1600000, runs
    assert problems == [], problems


def nb_split():
    cut = NB_RUN.index(" pg_p2m")
    path, runs, info, problems = nb_parse(
        NB_RUN[:cut] + XEN + "\n(XEN) more\n(d2) guest line\n"
        + "[  100.1] xen-blkback: a kernel message\n" + NB_RUN[cut:] + "\nNB-DONE\n")
    assert len(runs) == 1 and netback.flushes(runs[0]) == 512, runs
    assert problems == [], problems


def nb_cut():
    # Cut off mid value: the run is left out, listed, and the bound is
    # not judged from made-up numbers.
    text = NB_RUN + "\n" + NB_RUN.replace("pg_iotlb_wait=256", "pg_iot")
    base = log("nb-base.log", NB_RUN + "\nNB-DONE\n")
    patched = log("nb-patched.log", text[:-4])
    path, runs, info, problems = nb_parse(text[:-4])
    assert len(runs) == 1 and at(problems, path, 2), (runs, problems)
    rc, out = nb_main(f"base={base}", f"patched={patched}")
    assert rc == 1 and at(out["problems"], patched, 2), out["problems"]


def nb_missing_counter():
    # A counter that cannot be read is never 0 in the flush bound.
    bad = NB_RUN.replace("pg_iotlb_page=256", "pg_iotlb_page=25x").replace(
        COUNTERS.split()[0], "pg_p2m_tlb_flush=1")
    good = NB_RUN.replace("pg_p2m_tlb_flush=256", "pg_p2m_tlb_flush=1").replace(
        "pg_iotlb_page=256", "pg_iotlb_page=1")
    base = log("nb-base.log", NB_RUN + "\nNB-DONE\n")
    patched = log("nb-patched.log", good + "\n" + bad + "\nNB-DONE\n")
    rc, out = nb_main(f"base={base}", f"patched={patched}")
    assert rc == 1 and out["domU_dom0_flush_bound"]["held"] is False, out
    assert any("pg_iotlb_page" in p and "bound cannot be judged" in p
               for p in at(out["problems"], patched, 2)), out["problems"]
    assert out["rows"][0]["patched_flushes_per_mb"] is None, out["rows"]
    # ... while the same runs with the value readable hold the bound.
    patched = log("nb-patched.log", good + "\n" + good + "\nNB-DONE\n")
    rc, out = nb_main(f"base={base}", f"patched={patched}")
    assert rc == 0 and out["domU_dom0_flush_bound"]["held"] is True, out
    assert out["domU_dom0_flush_bound"]["per"] == "MB", out


def nb_unmap_shape():
    # Invalidations per unmap batch, pages covered per page unmapped and
    # the domain-wide count, from the counters of the runs; a run without
    # the grant counters leaves them unknown (null), never 0.
    shape = " pg_iotlb_pages=512 pg_gnt_unmap=256 pg_gnt_flush=8"
    base = log("nb-base.log", NB_RUN + shape + "\nNB-DONE\n")
    one = NB_RUN.replace("pg_iotlb_page=256", "pg_iotlb_page=7").replace(
        "pg_iotlb_domain=0", "pg_iotlb_domain=1")
    patched = log("nb-patched.log", one + shape.replace("=512", "=300")
                  + "\n" + one + shape.replace("=512", "=300") + "\nNB-DONE\n")
    rc, out = nb_main(f"base={base}", f"patched={patched}")
    r = out["rows"][0]
    # rc 1: patched's 32 p2m flushes per batch break the series' rule.
    assert rc == 1 and r["base_iotlb_inv_per_batch"] == 32 \
        and r["base_iotlb_pages_per_page"] == 2 \
        and r["base_iotlb_domain_wide"] == 0, r
    assert r["patched_iotlb_inv_per_batch"] == 1 \
        and r["patched_iotlb_pages_per_page"] == 300 / 256 \
        and r["patched_iotlb_domain_wide"] == 2, r
    # The rule is judged per grant unmapped when the counters are there:
    # 32 p2m flushes per unmap batch break it, one per batch keeps it,
    # and more IOTLB invalidations per grant than base break it again.
    assert out["domU_dom0_flush_bound"]["per"] == "grant", out
    assert out["domU_dom0_flush_bound"]["p2m_per_batch"] == 32, out
    assert out["domU_dom0_flush_bound"]["held"] is False, out
    one = one.replace("pg_p2m_tlb_flush=256", "pg_p2m_tlb_flush=8")
    patched = log("nb-patched.log", one + shape + "\nNB-DONE\n")
    rc, out = nb_main(f"base={base}", f"patched={patched}")
    assert out["domU_dom0_flush_bound"]["held"] is True, out
    more = one.replace("pg_iotlb_page=7", "pg_iotlb_page=256")
    patched = log("nb-patched.log", more + shape + "\nNB-DONE\n")
    rc, out = nb_main(f"base={base}", f"patched={patched}")
    assert out["domU_dom0_flush_bound"]["iotlb_ratio"] > 1, out
    assert out["domU_dom0_flush_bound"]["held"] is False, out
    base = log("nb-base.log", NB_RUN + "\nNB-DONE\n")
    rc, out = nb_main(f"base={base}", f"patched={patched}")
    assert out["rows"][0]["base_iotlb_inv_per_batch"] is None, out["rows"]


for fn in (pg_issue, pg_issue_assert, pg_mid_value, pg_split, pg_kernel_mid_line,
           pg_split_amd, pg_event_mid_line, pg_end_empty, pg_cut,
           pg_cut_check, pg_bad_value, pg_amd, t_issue, t_issue_assert, t_mid_value,
           t_split, t_cut, nb_issue, nb_issue_assert, nb_mid_value, nb_split,
           nb_cut, nb_missing_counter, nb_unmap_shape):
    test(fn.__name__, fn)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
