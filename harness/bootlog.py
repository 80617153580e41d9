"""Read a proving-ground boot log line by line, with Xen's console
messages set apart from the workload lines they interrupt.

dom0's console output and Xen's own messages share one serial line.
dom0's tty writes a line in pieces, so a Xen message ("(XEN) ...", or a
guest's line that Xen prefixes "(d1) ", "(d0v1) ") can land inside a
dom0 line, before its newline:

    NB-UNMAP ms=32.75 n=256 pg_iotlb_wa(XEN) grant table grows
    it=256

The rule, for each physical line:

- The first marker "(XEN)", "(dN)" or "(dNvM)" starts a Xen fragment
  that runs to the end of the physical line (Xen ends its messages with
  a newline); so does a kernel message's timestamp ("[  12.345] ")
  glued to the text before it, a kernel message dom0's printk wrote
  into a workload line, and a QEMU trace event of the IOMMU ("vtd_...",
  "amdvi_...", "123@1.5:vtd_..." at a line's start), wherever it lands:
  QEMU writes each event whole, between any two bytes of the serial
  line.  A line that holds nothing but the fragment, or only a
  timestamp in brackets before it, is a Xen line.
- Text before the marker that starts with a workload tag ("PG-..." or
  "NB-...", after an optional kernel timestamp "[  12.345] ") is the
  start of a workload line whose newline has not come yet.  Its rest is
  the next physical line that is neither a Xen line, nor a trace event,
  nor a kernel message ("[  12.345] ..."), which pass through in between,
  and is often just dom0's newline, an empty line.  A rest interrupted
  again waits for its own rest the same way.  If a new workload line
  (a tag) comes first, the interrupted one is taken as it stands; if
  the log ends first, it is cut off (below).
- Other text before a marker (a kernel message, say) is a line of its
  own; it is not joined to anything.

The workload line comes out at its first physical line, with that line's
number, before the Xen fragments it held; each Xen fragment comes out as
its own line, so scans for assertions or "pg-oracle:" still see it.

What it cannot separate: a Xen message that carries no marker (a
continuation of a Xen printk without newline, where dom0's text ends up
appended to Xen's line), a kernel message inside a userspace line after
a space, a trace event inside a Xen fragment (not counted), or a trace
event after a value's digits with QEMU's "pid@time:" before it (the
value then cannot be read).  Such a line may fail to parse; then it
costs only itself.

A log cut off inside a workload line (no newline at the end of the file,
or the rest of an interrupted line never came) cannot be trusted: that
line is left out and listed in `problems`.

Parsers iterate over a BootLog for (line number, text) and record what
they cannot parse with problem() or fields(): a bad line costs that line
only, never a traceback.
"""
import re

STAMP = r"\[ *\d+\.\d+\] "
# A QEMU trace event of the machines' IOMMUs (harness/machines/qemu-*),
# with the "pid@time:" QEMU may put before it only at a line's start.
EVENT = r"(?:^\d+@[\d.]+:)?(?:vtd|amdvi)_\w+ "
# Where another writer's message starts inside a line: Xen's marker, a
# kernel message's timestamp glued to the text before it, or a QEMU
# trace event.
MARKER = re.compile(r"\((?:XEN|d\d+(?:v\d+)?)\)|(?<=\S)%s|%s" % (STAMP, EVENT))
TAG = re.compile(r"^(?:%s)?(?:PG|NB)-[A-Z]" % STAMP)
# Lines of dom0's kernel, which may come between a workload line's start
# and its rest.
OTHER = re.compile(r"^%s" % STAMP)
XEN_ONLY = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?$")
KV = re.compile(r"(\w[\w-]*)=(\S+)")


class BootLog:
    def __init__(self, path):
        """Reads the whole log (OSError if it cannot)."""
        self.path = path
        self.problems = []
        with open(path, errors="replace") as f:
            self.physical = f.read().replace("\r", "").split("\n")
        self.lines = self._split(self.physical)

    def __iter__(self):
        return iter(self.lines)

    def _split(self, phys):
        out = []            # [lineno, text], in the order of first lines
        pending = None      # the workload line waiting for its rest
        rec = None          # the line the last physical line went to
        cut = phys[-1] != ""    # no newline at the end of the file
        for lineno, line in enumerate(phys if cut else phys[:-1], 1):
            m = MARKER.search(line)
            head, xen = (line[:m.start()], line[m.start():]) if m else (line, None)
            if xen is not None and XEN_ONLY.match(head):
                out.append([lineno, line])
                rec = None
                continue
            if pending is not None and not TAG.match(head) \
                    and not OTHER.match(head):
                rec = pending
                rec[1] += head
            else:
                rec = [lineno, head]
                out.append(rec)
            if xen is not None and TAG.match(rec[1]):
                pending = rec
            elif rec is pending or TAG.match(head):
                pending = None
            if xen is not None:
                out.append([lineno, xen])
        if cut and rec is not None and TAG.match(rec[1]):
            self.cut(rec)
        elif pending is not None:
            self.cut(pending)
        return [(n, t) for n, t in out if t is not None]

    def cut(self, rec):
        self.problem(rec[0], rec[1], "the log ends inside this line")
        rec[1] = None

    def problem(self, lineno, text, what):
        self.problems.append(f"{self.path}:{lineno}: {what}: {text.strip()[:300]}")

    def fields(self, lineno, text, conv=int, keep=(), need=()):
        """The key=value pairs of a workload line, values converted with
        conv except those of the keys in keep.  A value conv rejects is
        recorded as a problem and left out (never guessed); if a key in
        need is then missing, that is recorded too and None is returned."""
        kv = {}
        for k, v in KV.findall(text):
            try:
                kv[k] = v if k in keep else conv(v)
            except ValueError:
                self.problem(lineno, text, f"cannot read {k}={v}")
        missing = [k for k in need if k not in kv]
        if missing:
            self.problem(lineno, text, "no " + ", ".join(missing))
            return None
        return kv
