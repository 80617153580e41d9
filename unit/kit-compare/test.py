#!/usr/bin/env python3
"""kit/compare.py on the fixtures (a base and a patched run of a made-up
VT-d host): the counts table's exact lines, a spread and a %change
worked out by hand, the netback rows (release builds: netback alone),
--json, and every refusal (exit
status 2, a message naming the problem, no traceback), including base
and patched swapped.  COMPARE_PY=path tests another compare.py."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
COMPARE = os.environ.get("COMPARE_PY") or os.path.join(ROOT, "kit",
                                                        "compare.py")
BASE = os.path.join(HERE, "fixtures", "base.json")
PATCHED = os.path.join(HERE, "fixtures", "patched.json")
TMP = tempfile.mkdtemp()
sys.dont_write_bytecode = True      # no kit/__pycache__ from one_sample()
passed = failed = 0


def run(*args):
    p = subprocess.run([sys.executable, COMPARE, *args],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def fixture(path):
    with open(path) as f:
        return json.load(f)


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(data if isinstance(data, str) else json.dumps(data))
    return path


def lines():
    rc, out, err = run(BASE, PATCHED)
    assert rc == 0, err
    return out.splitlines()


def test(fn):
    global passed, failed
    try:
        fn()
        passed += 1
    except Exception:       # noqa: BLE001
        failed += 1
        print(f"FAIL: {fn.__name__}\n" + traceback.format_exc(limit=-2))


def counts_rows():
    out = lines()
    want = [
        "                           base                         patched",
        "  frames     N  inv dom  pg/N wait  p2m  ipi  inv dom  pg/N wait"
        "  p2m  ipi",
        "  contig.    1    1   0   1.0    1    1    1    1   0   1.0"
        "    1    1    1"]
    i = out.index(want[0])
    assert out[i:i + 3] == want, out[i:i + 3]
    row = ("  1 in 16   32   32   1   1.0   32   32   31    2   1  16.0"
           "    2    1    2")
    assert row in out, out


def counts_vary():
    out = lines()
    row = [x for x in out if x.startswith("  contig.  256  256")]
    assert len(row) == 1 and row[0].endswith(" *"), row
    assert sum(x.endswith(" *") for x in out) == 1, out
    assert "  * counts differed between repetitions" in out, out


def time_row():
    # N=32 contiguous: base 11, 12, 13, 14, 15 us: median 13, quartiles
    # (inclusive) 12 and 14, spread 2/13 = 15.4%; patched 2.0 to 2.4 us:
    # median 2.2, spread 0.2/2.2 = 9.1%; change (2.2 - 13)/13 = -83.08%.
    out = lines()
    assert "  unmap hypercall time, us: median +/- interquartile range /" \
        in out and "  median, over 5 repetitions" in out, out
    row = [x for x in out if x.startswith("  contig.   32")][1]
    assert row.split() == ["contig.", "32", "13.0", "+/-15%", "2.2",
                           "+/-9%", "-83.1%"], row


def netback_rows():
    out = lines()
    i = out.index("  domU to dom0")
    assert out[i - 1] == ("                   base          patched"
                          "       %change"), out[i - 1]
    # 0.63 0.64 0.65: mean 0.64, stdev 0.01, 1.6%; 3.05 3.11 3.17: 3.11,
    # 0.06, 1.9%; (3.11 - 0.64)/0.64 = +385.9%: whole from 100% up.
    assert out[i + 1] == ("    1 stream       0.64 +/-2%    3.11 +/-2%"
                          "      +386%"), out[i + 1]
    # 1.25 against 2.50: +100%, whole; 1.55 against 3.00: +93.5%.
    assert ("    1 stream       1.25 +/-4%    2.50 +/-4%      +100%"
            in out), out
    assert ("    2 streams      1.55 +/-3%    3.00 +/-3%     +93.5%"
            in out), out
    # 9.4 against 8.8: -6.38%.
    assert ("    1 stream       9.40 +/-2%    8.80 +/-2%      -6.4%"
            in out), out
    dirs = [x for x in out if x in ("  domU to dom0", "  domU to domU",
                                    "  dom0 to domU")]
    assert dirs == ["  domU to dom0", "  domU to domU", "  dom0 to domU"] * 2
    j = out.index("  flushes per MB")
    assert out[j + 3].split() == ["1", "stream", "564.3", "35.1"], out[j:]


def torture_lines():
    out = lines()
    assert ("  torture: base 4/6 cases passed, 3 oracle reports (run failed)"
            in out), out
    assert "  torture: patched 6/6 cases passed, 0 oracle reports" in out


def torture_problems():
    # A failed torture says why (runlog.py's problems), not only "failed".
    d = fixture(BASE)
    d["torture"]["problems"] = [
        "0 lines of the oracle's totals (pg-oracle-stats) for 6 cases, 7 "
        "expected (one before the first case, one per case): Xen's log of "
        "the run is missing or cut"]
    rc, out, err = run(write("problems.json", d), PATCHED)
    assert rc == 0, err
    out = out.splitlines()
    i = out.index("  torture: base 4/6 cases passed, 3 oracle reports "
                  "(run failed)")
    assert out[i + 1] == "    " + d["torture"]["problems"][0], out[i:]
    d["torture"]["problems"] = [3]
    refused([write("problems-bad.json", d), PATCHED],
            "torture.problems: not a list of strings")


def json_out():
    path = os.path.join(TMP, "merged.json")
    rc, out, err = run(BASE, PATCHED, "--json", path)
    assert rc == 0, err
    m = fixture(path)
    assert m["counts_shown"] and m["host"]["iommu"] == "vt-d", m
    assert [(r["n"], r["stride"]) for r in m["unmap"]] == [
        (r["n"], r["stride"]) for r in fixture(BASE)["unmap"]]
    r = m["unmap"][2]
    assert r["base"]["us"] == [11, 12, 13, 14, 15], r
    assert r["patched"]["counts"]["inv"] == 1, r
    assert r["base"]["median"] == 13, r
    assert abs(r["base"]["spread"] - 2 / 13) < 1e-9, r
    assert abs(r["change_pct"] - 100 * (2.2 - 13) / 13) < 1e-9, r
    nb = m["netback"][0]
    assert (nb["dir"], nb["streams"]) == ("domU-dom0", 1), nb
    assert abs(nb["base"]["mean"] - 0.64) < 1e-9, nb
    assert abs(nb["base"]["rsd"] - 0.01 / 0.64) < 1e-9, nb
    assert abs(nb["change_pct"] - 100 * (3.11 - 0.64) / 0.64) < 1e-9, nb
    assert nb["patched"]["flushes_per_mb"] == 35.1, nb
    assert m["torture"]["patched"]["pass"] is True, m["torture"]


def one_sample():
    spec = importlib.util.spec_from_file_location("compare", COMPARE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.spread([5.0]) == 0 and mod.rsd([3.0]) == 0
    assert abs(mod.spread([1, 2, 3, 4, 5]) - 2 / 3) < 1e-9


def release():
    # Netback left out: throughput is compared between like builds only.
    p = fixture(PATCHED)
    p["build"].update(name="patched-release", config="release")
    p["netback"] = None
    for r in p["unmap"]:
        r["counts"] = dict.fromkeys(r["counts"], -1)
    b = write("base-nonb.json", dict(fixture(BASE), netback=None))
    rc, out, err = run(b, write("release.json", p))
    assert rc == 0, err
    out = out.splitlines()
    assert "  counts: patched is a release build (no counters)" in out, out
    assert not any(x.startswith("  frames     N  inv") for x in out), out
    assert [x for x in out if x.startswith("  contig.   32")][0].split() \
        == ["contig.", "32", "13.0", "+/-15%", "2.2", "+/-9%", "-83.1%"]
    # A debug build whose counters are missing keeps the table, with "-".
    p["build"].update(name="patched", config="debug")
    rc, out, err = run(b, write("nocounts.json", p))
    assert rc == 0 and "release build" not in out, out
    assert ("  contig.    1    1   0   1.0    1    1    1    -   -     -"
            "    -    -    -") in out.splitlines(), out


def release_netback():
    # Release builds: netback alone, without counters (flushes "-").
    runs = []
    for which, path in (("base", BASE), ("patched", PATCHED)):
        d = fixture(path)
        d["build"].update(name=f"{which}-release", config="release")
        d["unmap"], d["torture"] = [], None
        for r in d["netback"]:
            r["flushes_per_mb"] = -1
        runs.append(write(f"{which}-release.json", d))
    rc, out, err = run(*runs)
    assert rc == 0, err
    out = out.splitlines()
    assert ("    1 stream       0.64 +/-2%    3.11 +/-2%      +386%"
            in out), out
    j = out.index("  flushes per MB")
    assert out[j + 3].split() == ["1", "stream", "-", "-"], out[j:]
    assert not any("unmap hypercall time" in x or "frames     N" in x
                   for x in out), out
    # A debug and a release build: their throughput is not compared.
    refused([BASE, runs[1]], "netback", "base is a debug build, patched a "
            "release build")


def no_times():
    # A round whose unmaps the workload could not time: "-", no change.
    p = fixture(PATCHED)
    p["unmap"][2]["us"] = []
    rc, out, err = run(BASE, write("notimes.json", p))
    assert rc == 0, err
    row = [x for x in out.splitlines() if x.startswith("  contig.   32")][1]
    assert row.split() == ["contig.", "32", "13.0", "+/-15%", "-", "-"], row
    assert "over 0 to 5 repetitions" in out, out


def refused(args, *words):
    rc, out, err = run(*args)
    assert rc == 2, (rc, out, err)
    assert out == "" and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)


def edited(which, edit):
    """A copy of the fixture which ("base" or "patched") after edit()."""
    d = fixture(BASE if which == "base" else PATCHED)
    edit(d)
    return write(f"{which}-edited.json", d)


def refusals():
    missing = os.path.join(TMP, "none.json")
    refused([missing, PATCHED], missing, "cannot read")
    refused([BASE, write("bad.json", "{ no")], "bad.json", "not JSON")
    refused([write("fmt.json", {"format": "pg-kit-run/2"}), PATCHED],
            "fmt.json", "pg-kit-run/1")
    refused([edited("base", lambda d: d["build"].update(name="b")),
             PATCHED], 'build "b", expected "base"')
    refused([BASE, edited("patched", lambda d: d["build"].update(
        name="base"))], 'build "base", expected "patched"')
    for k in ("name", "cpu", "iommu", "hap"):
        refused([BASE, edited("patched", lambda d: d["host"].update(
            {k: "other"}))], "not from the same host", k, "'other'")
    for k in ("series_base", "tree"):
        refused([BASE, edited("patched", lambda d: d["build"].update(
            {k: "other"}))], "not from the same build", k, "'other'")


def refuse_rounds():
    def drop(d):
        d["unmap"] = [r for r in d["unmap"] if (r["n"], r["stride"]) not in
                      ((33, 1), (32, 512))]
        d["unmap"].append(dict(d["unmap"][0], n=128))
    refused([BASE, edited("patched", drop)], "rounds differ",
            "only in base: N=33 contig., N=32 1 in 512",
            "only in patched: N=128 contig.")
    refused([edited("base", lambda d: d["unmap"].append(d["unmap"][0])),
             PATCHED], "round N=1 contig. twice")
    refused([BASE, edited("patched", lambda d: d["netback"].pop())],
            "only in base: dom0 to domU, 4 streams")


def refuse_netback():
    refused([BASE, edited("patched", lambda d: d.update(netback=None))],
            "netback: only in base")
    refused([edited("base", lambda d: d.pop("netback")), PATCHED],
            "netback: only in patched")


def refuse_malformed():
    refused([BASE, edited("patched", lambda d: d["unmap"][3].pop("us"))],
            "unmap[3]", "'us'")
    refused([BASE, edited("patched", lambda d: d["unmap"][0]["counts"]
                          .update(inv="1"))], "unmap[0].counts.inv")
    refused([BASE, edited("patched", lambda d: d["netback"][0].update(
        dir="dom0-dom0"))], "netback[0].dir")
    refused([BASE, edited("patched", lambda d: d.update(unmap=[],
                                                        netback=None))],
            "no rounds")
    refused([BASE, PATCHED, "--json", os.path.join(TMP, "no", "x.json")],
            "cannot write")


def swapped():
    # The mutant: base and patched given the wrong way round.
    refused([PATCHED, BASE], 'build "patched", expected "base"')


for fn in (counts_rows, counts_vary, time_row, netback_rows, torture_lines,
           torture_problems,
           json_out, one_sample, release, release_netback, no_times, refusals, refuse_rounds,
           refuse_netback, refuse_malformed, swapped):
    test(fn)
shutil.rmtree(TMP)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
