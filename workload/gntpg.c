/*
 * gntpg - grant map/unmap proving-ground workload for a Linux PVH dom0.
 * dom0 grants pages to itself (gntalloc), maps/unmaps them via gntdev and
 * reports Xen perf counter deltas per phase; optionally a QEMU "edu" device
 * behind the emulated VT-d DMA-reads the frames while mapped and right after
 * the unmap to detect stale IOTLB entries.  Contract: README.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <public/xen.h>
#include <public/grant_table.h>
#include <public/sysctl.h>

#include <xen/gntalloc.h>
#include <xen/gntdev.h>

/*
 * <xen/privcmd.h> from linux-libc-dev includes <xen/interface/xen.h>, which
 * is not exported to userspace, so define the (stable) hypercall ABI here.
 */
struct pg_privcmd_hypercall {
    uint64_t op;
    uint64_t arg[5];
};
#define PG_IOCTL_PRIVCMD_HYPERCALL \
    _IOC(_IOC_NONE, 'P', 0, sizeof(struct pg_privcmd_hypercall))

#define PG_PAGE_SIZE    4096UL
#define PG_PAGE_WORDS   (PG_PAGE_SIZE / 8)
#define PG_MAX_N        (1U << 20)
#define PG_MAGIC        0x5047000000000000ULL   /* "PG" in the top bytes */
#define PG_SCRATCH_WORD (PG_PAGE_WORDS - 1)     /* written via gntdev view */
#define PG_DMA_WORD     0                       /* read by DMA, holds pattern */
#define PG_REGION_SHIFT 9                       /* 2M: one IOMMU leaf table */
#define PG_KEEP_TRIES   4                       /* spacers tried, per side */

/* QEMU edu device (hw/misc/edu.c). */
#define EDU_VENDOR      0x1234
#define EDU_DEVICE      0x11e8
#define EDU_BAR_SIZE    (1UL << 20)
#define EDU_REG_SRC     0x80
#define EDU_REG_DST     0x88
#define EDU_REG_CNT     0x90
#define EDU_REG_CMD     0x98
#define EDU_CMD_RUN     0x1
#define EDU_CMD_TO_RAM  0x2     /* direction: 0 = RAM->EDU, 1 = EDU->RAM */
#define EDU_BUF         0x40000UL
/*
 * The buffer is 4096 bytes, but QEMU 7.2's edu_check_range() rejects a
 * transfer that ends exactly at the buffer's end ("out of bounds"), so
 * only the first 4088 bytes (511 slots of 8) are used.
 */
#define EDU_BUF_SIZE    4088UL
#define EDU_DMA_PAGES   (EDU_BUF_SIZE / 8)  /* 8 bytes per grant page */
#define EDU_DMA_MASK    ((1ULL << 48) - 1)  /* -device edu,dma_mask=... */
#define EDU_TIMEOUT_NS  5000000000LL

#define POISON_BYTE     0xaa
#define POISON          0xaaaaaaaaaaaaaaaaULL
#define NOTDONE_BYTE    0x55

#define mb() __asm__ __volatile__ ( "mfence" ::: "memory" )
#define barrier() __asm__ __volatile__ ( "" ::: "memory" )

struct round {
    unsigned int idx;           /* 1-based position on the command line */
    unsigned int n;             /* number of pages */
    unsigned int stride;        /* frames every 'stride' pages (1: contiguous) */
    int kept;                   /* "NkS": spacers mapped beside the frames */
    uint64_t *spacers;          /* gntdev map indexes held to scatter frames */
    unsigned int nr_spacers;
    void **spacer_va;           /* kept rounds: spacers' mappings, or NULL */
    unsigned int nr_kept;       /* how many spacers are mapped */
    uint32_t *spacer_grefs;     /* kept rounds: grants the spacers map */
    uint64_t *pfns;             /* the round's frames, in map order */
    uint32_t *grefs;
    void *leak_va;              /* gntalloc view: never touched again */
    void *map_va;               /* gntdev view */
    uint64_t map_index;
    uint64_t *bus;              /* DMA round only: bus address per page */
    int64_t unmap_ns;           /* ioctl + munmap, if the hypercall ran in it */
};

struct snap {
    uint32_t gnt_hc;            /* hypercalls[__HYPERVISOR_grant_table_op] */
    uint32_t *sum;              /* per counter, summed over all values */
};

static int privcmd_fd = -1, gntalloc_fd = -1, gntdev_fd = -1;
static int pagemap_fd = -1;
static int holder_needed;

static struct xen_sysctl *sysctl_buf;
static xen_sysctl_perfc_desc_t *pc_desc;
static xen_sysctl_perfc_val_t *pc_val;
static uint32_t pc_nr_ctr, pc_cap_vals;
static char *end_line;
static size_t end_line_cap;
static struct snap snap_a, snap_b;

static const char *dma_bdf;
static unsigned int dma_n = 33;
static volatile uint64_t *edu;
static uint8_t *bounce;

/* ---------------------------------------------------------------- output */

static void out_raw(const char *s, size_t len)
{
    while ( len )
    {
        ssize_t r = write(STDOUT_FILENO, s, len);

        if ( r < 0 )
        {
            if ( errno == EINTR )
                continue;
            return;
        }
        s += r;
        len -= r;
    }
}

/* One write(2) per line, so lines never interleave or split. */
static void __attribute__((format(printf, 1, 2))) out(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if ( n < 0 )
        return;
    if ( (size_t)n >= sizeof(buf) )
    {
        n = sizeof(buf) - 1;
        buf[n - 1] = '\n';
    }
    out_raw(buf, n);
}

/*
 * The gntalloc pages must outlive this process.  When dom0 maps a grant of
 * its own page, Xen removes that page's original gfn from dom0's p2m; if
 * Linux later frees such a page (IOCTL_GNTALLOC_DEALLOC_GREF, munmap of the
 * last mapping, or simply process exit closing the gntalloc fd), the
 * allocator hands out a page whose gfn is gone and later users fault.  So
 * the gntalloc allocations are leaked on purpose, and before exiting we
 * fork a detached child that inherits the gntalloc fd and mappings and
 * sleeps until power-off, keeping the file (and thus the pages) alive.
 */
static int spawn_holder(void)
{
    pid_t pid;
    int fd;

    if ( !holder_needed )
        return 0;
    holder_needed = 0;

    pid = fork();
    if ( pid < 0 )
        return -1;
    if ( pid > 0 )
        return 0;

    /* Child: detach from the harness (session, stdio pipes) and sleep. */
    setsid();
    signal(SIGHUP, SIG_IGN);
    fd = open("/dev/null", O_RDWR);
    if ( fd >= 0 )
    {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if ( fd > STDERR_FILENO )
            close(fd);
    }
    for ( ;; )
        pause();
}

static void __attribute__((noreturn, format(printf, 2, 3)))
failf(int err, const char *fmt, ...)
{
    char what[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    out("PG-ERROR %s: %s\n", what, strerror(err));
    spawn_holder();
    exit(1);
}

static void *alloc_locked(size_t size, const char *what)
{
    void *p;
    int rc;

    size = (size + PG_PAGE_SIZE - 1) & ~(PG_PAGE_SIZE - 1);
    rc = posix_memalign(&p, PG_PAGE_SIZE, size);
    if ( rc )
        failf(rc, "alloc %s", what);
    memset(p, 0, size);
    if ( mlock(p, size) )
        failf(errno, "mlock %s", what);
    return p;
}

static void *xcalloc(size_t nmemb, size_t size, const char *what)
{
    void *p = calloc(nmemb, size);

    return p ? p : (failf(ENOMEM, "alloc %s", what), NULL);
}

static void sleep_ns(long ns)
{
    struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };

    while ( nanosleep(&ts, &ts) && errno == EINTR )
        ;
}

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t pattern(unsigned int round, unsigned int page)
{
    return PG_MAGIC | ((uint64_t)(round & 0xffff) << 32) | page;
}

/* ---------------------------------------------------- perf counters */

static void perfc_query(xen_sysctl_perfc_desc_t *d, xen_sysctl_perfc_val_t *v,
                        uint32_t *nr_ctr, uint32_t *nr_vals)
{
    struct xen_sysctl *sc = sysctl_buf;
    struct pg_privcmd_hypercall hc;

    memset(sc, 0, sizeof(*sc));
    sc->cmd = XEN_SYSCTL_perfc_op;
    sc->interface_version = XEN_SYSCTL_INTERFACE_VERSION;
    sc->u.perfc_op.cmd = XEN_SYSCTL_PERFCOP_query;
    set_xen_guest_handle(sc->u.perfc_op.desc, d);
    set_xen_guest_handle(sc->u.perfc_op.val, v);

    memset(&hc, 0, sizeof(hc));
    hc.op = __HYPERVISOR_sysctl;
    hc.arg[0] = (uintptr_t)sc;
    if ( ioctl(privcmd_fd, PG_IOCTL_PRIVCMD_HYPERCALL, &hc) < 0 )
        failf(errno, "perfc query (sysctl interface 0x%x; ENOSYS: Xen "
              "without CONFIG_PERF_COUNTERS, EACCES: interface mismatch)",
              XEN_SYSCTL_INTERFACE_VERSION);

    *nr_ctr = sc->u.perfc_op.nr_counters;
    *nr_vals = sc->u.perfc_op.nr_vals;
}

/*
 * Layout (xen/common/perfc.c:perfc_copy_info, same in 4.17 and staging):
 * desc[] has one entry per counter; val[] is the concatenation, in desc
 * order, of desc[i].nr_vals values each.  PERFCOUNTER/PERFSTATUS: nr_vals =
 * number of online pCPUs, one value per CPU.  *_ARRAY: nr_vals = array size,
 * one value per element, already summed over CPUs by Xen.  Values are
 * uint32_t and wrap, so sums and deltas are done modulo 2^32.
 */
static void perfc_snap(struct snap *s)
{
    uint32_t nr_ctr, nr_vals, i, j, off = 0;
    int found = 0;

    perfc_query(pc_desc, pc_val, &nr_ctr, &nr_vals);
    if ( nr_ctr != pc_nr_ctr || nr_vals > pc_cap_vals )
        failf(EOVERFLOW, "perfc layout changed (counters %u->%u, vals %u "
              "cap %u)", pc_nr_ctr, nr_ctr, nr_vals, pc_cap_vals);

    for ( i = 0; i < nr_ctr; i++ )
    {
        uint32_t n = pc_desc[i].nr_vals, sum = 0;

        pc_desc[i].name[sizeof(pc_desc[i].name) - 1] = '\0';
        if ( n > nr_vals - off )
            failf(EPROTO, "perfc desc %u (%s) overruns values", i,
                  pc_desc[i].name);
        for ( j = 0; j < n; j++ )
            sum += pc_val[off + j];
        s->sum[i] = sum;

        if ( !strcmp(pc_desc[i].name, "hypercalls") )
        {
            if ( n <= __HYPERVISOR_grant_table_op )
                failf(EPROTO, "perfc 'hypercalls' has only %u elements", n);
            s->gnt_hc = pc_val[off + __HYPERVISOR_grant_table_op];
            found = 1;
        }
        off += n;
    }
    if ( off != nr_vals )
        failf(EPROTO, "perfc descs cover %u of %u values", off, nr_vals);
    if ( !found )
        failf(ENOENT, "perfc counter 'hypercalls' not found");
}

static void perfc_init(void)
{
    uint32_t nr_ctr, nr_vals;

    privcmd_fd = open("/dev/xen/privcmd", O_RDWR | O_CLOEXEC);
    if ( privcmd_fd < 0 )
        failf(errno, "open /dev/xen/privcmd");

    /* Xen reads/writes these from hypercall context: keep them resident. */
    sysctl_buf = alloc_locked(sizeof(*sysctl_buf), "sysctl");
    perfc_query(NULL, NULL, &nr_ctr, &nr_vals);
    if ( !nr_ctr || !nr_vals )
        failf(ENOENT, "perfc: no counters (%u/%u)", nr_ctr, nr_vals);

    pc_nr_ctr = nr_ctr;
    /*
     * Slack: nr_vals grows if Xen onlines pCPUs between calls and Xen copies
     * perfc_nbr_vals values without knowing our buffer size.
     */
    pc_cap_vals = nr_vals * 2 + 4096;
    pc_desc = alloc_locked((size_t)nr_ctr * sizeof(*pc_desc), "perfc desc");
    pc_val = alloc_locked((size_t)pc_cap_vals * sizeof(*pc_val), "perfc val");
    snap_a.sum = xcalloc(nr_ctr, sizeof(uint32_t), "snap");
    snap_b.sum = xcalloc(nr_ctr, sizeof(uint32_t), "snap");
    end_line_cap = 256 + (size_t)nr_ctr * (sizeof(pc_desc->name) + 16);
    end_line = xcalloc(1, end_line_cap, "line");

    perfc_snap(&snap_a);    /* validate layout and 'hypercalls' early */
}

/* " stride=S" of scattered rounds, " stride=S kept=1" of kept ones, or "". */
static const char *round_tag(const struct round *r)
{
    static char tag[48];

    if ( r->stride > 1 )
        snprintf(tag, sizeof(tag), " stride=%u%s", r->stride,
                 r->kept ? " kept=1" : "");
    else
        tag[0] = '\0';
    return tag;
}

static void phase_begin(const struct round *r, const char *phase)
{
    out("PG-BEGIN n=%u phase=%s%s\n", r->n, phase, round_tag(r));
    perfc_snap(&snap_a);
}

static void phase_end(const struct round *r, const char *phase)
{
    size_t off;
    uint32_t i;

    off = snprintf(end_line, end_line_cap, "PG-END n=%u phase=%s%s hypercalls=%"
                   PRIu32, r->n, phase, round_tag(r),
                   (uint32_t)(snap_b.gnt_hc - snap_a.gnt_hc));
    if ( !strcmp(phase, "unmap") && r->unmap_ns >= 0 )
        off += snprintf(end_line + off, end_line_cap - off,
                        " unmap_ns=%" PRId64, r->unmap_ns);
    for ( i = 0; i < pc_nr_ctr && off < end_line_cap; i++ )
    {
        char name[sizeof(pc_desc->name)];
        size_t k;

        if ( strncmp(pc_desc[i].name, "pg_", 3) )
            continue;
        /* Keep the line parseable whatever the counter is called. */
        for ( k = 0; pc_desc[i].name[k] && k < sizeof(name) - 1; k++ )
            name[k] = (pc_desc[i].name[k] > ' ' && pc_desc[i].name[k] != '=' &&
                       pc_desc[i].name[k] < 0x7f) ? pc_desc[i].name[k] : '_';
        name[k] = '\0';
        off += snprintf(end_line + off, end_line_cap - off, " %s=%" PRIu32,
                        name, (uint32_t)(snap_b.sum[i] - snap_a.sum[i]));
    }
    if ( off + 2 > end_line_cap )
        failf(EOVERFLOW, "PG-END line too long");
    end_line[off++] = '\n';
    out_raw(end_line, off);
}

/* ------------------------------------------------------ DMA detector */

static uint64_t va_to_bus(const void *va, const char *what, unsigned int page)
{
    uint64_t ent, pfn;
    ssize_t rc;

    errno = 0;
    rc = pread(pagemap_fd, &ent, sizeof(ent),
               (off_t)((uintptr_t)va / PG_PAGE_SIZE) * sizeof(ent));
    if ( rc != sizeof(ent) )
        failf(errno ? errno : EIO, "pagemap %s page %u", what, page);
    if ( !(ent >> 63) )
        failf(EFAULT, "pagemap %s page %u: not present", what, page);
    pfn = ent & ((1ULL << 55) - 1);
    if ( !pfn )
        failf(EPERM, "pagemap %s page %u: PFN hidden (need root)", what, page);
    if ( ((pfn << 12) & ~EDU_DMA_MASK) || (pfn >> 52) )
        failf(ERANGE, "%s page %u: bus address %#" PRIx64 " beyond edu "
              "dma_mask", what, page, pfn << 12);
    return pfn << 12;
}

static void edu_wait(const char *what)
{
    int64_t t0 = now_ns();

    while ( edu[EDU_REG_CMD / 8] & EDU_CMD_RUN )
    {
        if ( now_ns() - t0 > EDU_TIMEOUT_NS )
            failf(ETIMEDOUT, "edu dma %s", what);
        sleep_ns(1000000);
    }
    mb();
}

static void edu_dma(uint64_t src, uint64_t dst, uint64_t cnt, int to_ram,
                    const char *what)
{
    edu_wait(what);
    mb();
    /* edu takes a 4-byte write as the whole value: 64-bit stores only. */
    edu[EDU_REG_SRC / 8] = src;
    edu[EDU_REG_DST / 8] = dst;
    edu[EDU_REG_CNT / 8] = cnt;
    if ( edu[EDU_REG_SRC / 8] != src || edu[EDU_REG_DST / 8] != dst ||
         edu[EDU_REG_CNT / 8] != cnt )
        failf(EIO, "edu dma %s: register readback mismatch", what);
    edu[EDU_REG_CMD / 8] = EDU_CMD_RUN | (to_ram ? EDU_CMD_TO_RAM : 0);
    edu_wait(what);
}

static void dma_setup(void)
{
    char path[256];
    uint8_t b[4];
    uint16_t cmd;
    int fd;

    if ( strchr(dma_bdf, '/') || strlen(dma_bdf) > 32 )
        failf(EINVAL, "bad --dma BDF '%s'", dma_bdf);

    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", dma_bdf);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if ( fd < 0 )
        failf(errno, "open %s", path);
    if ( pread(fd, b, 4, 0) != 4 )
        failf(errno ? errno : EIO, "read %s", path);
    if ( (b[0] | (b[1] << 8)) != EDU_VENDOR || (b[2] | (b[3] << 8)) != EDU_DEVICE )
        failf(ENODEV, "%s is %02x%02x:%02x%02x, not edu %04x:%04x", dma_bdf,
              b[1], b[0], b[3], b[2], EDU_VENDOR, EDU_DEVICE);
    /* Command register: bit 1 memory decode, bit 2 bus master. */
    if ( pread(fd, b, 2, 4) != 2 )
        failf(errno ? errno : EIO, "read command %s", path);
    cmd = (b[0] | (b[1] << 8)) | 0x6;
    b[0] = cmd & 0xff;
    b[1] = cmd >> 8;
    if ( pwrite(fd, b, 2, 4) != 2 )
        failf(errno ? errno : EIO, "write command %s", path);
    if ( pread(fd, b, 2, 4) != 2 || (b[0] & 0x6) != 0x6 )
        failf(EIO, "enable mem+master on %s (command %02x%02x)", dma_bdf,
              b[1], b[0]);
    close(fd);

    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", dma_bdf);
    fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
    if ( fd < 0 )
        failf(errno, "open %s", path);
    edu = mmap(NULL, EDU_BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if ( edu == MAP_FAILED )
        failf(errno, "mmap %s", path);
    close(fd);
    /* Register 0x00 (32-bit access only): 0xRRrr00ed identification. */
    if ( (*(volatile uint32_t *)edu & 0xff) != 0xed )
        failf(ENODEV, "edu BAR0 ident %#x", *(volatile uint32_t *)edu);
    edu_wait("idle");

    pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if ( pagemap_fd < 0 )
        failf(errno, "open /proc/self/pagemap");
    bounce = alloc_locked(PG_PAGE_SIZE, "bounce");
    va_to_bus(bounce, "bounce", 0);
}

/*
 * Gather the bus (= dom0 guest frame) address of the DMA-checked pages while
 * the gntdev mapping exists; reused for the after-unmap check.
 */
static void dma_collect(struct round *r)
{
    unsigned int i, m = r->n < EDU_DMA_PAGES ? r->n : EDU_DMA_PAGES;

    r->bus = xcalloc(m, sizeof(*r->bus), "bus");
    for ( i = 0; i < m; i++ )
        r->bus[i] = va_to_bus((char *)r->map_va + i * PG_PAGE_SIZE,
                              "gntdev", i);
}

static void dma_check(const struct round *r, const char *when)
{
    unsigned int i, m = r->n < EDU_DMA_PAGES ? r->n : EDU_DMA_PAGES;
    unsigned int data = 0, fault = 0, other = 0;
    volatile uint64_t *bw = (volatile uint64_t *)bounce;
    uint64_t bb;

    /* Re-read: mlock()ed pages may still be migrated by compaction. */
    bb = va_to_bus(bounce, "bounce", 0);

    /* (a) poison the whole edu buffer from the bounce page. */
    memset(bounce, POISON_BYTE, PG_PAGE_SIZE);
    barrier();
    edu_dma(bb, EDU_BUF, EDU_BUF_SIZE, 0, "poison");

    /* (b) 8 bytes of each grant page into its own edu buffer slot. */
    for ( i = 0; i < m; i++ )
        edu_dma(r->bus[i] + PG_DMA_WORD * 8, EDU_BUF + 8 * i, 8, 0, "grant");

    /* (c) edu buffer back to the bounce page. */
    memset(bounce, NOTDONE_BYTE, PG_PAGE_SIZE);
    barrier();
    edu_dma(EDU_BUF, bb, 8 * m, 1, "readback");

    /*
     * (d) classify.  A DMA read through a faulting IOMMU translation does not
     * leave the poison in place in QEMU: the failed access is served by
     * io_mem_unassigned, which reads as 0, and that 0 is stored into the edu
     * buffer.  So both poison and 0 count as "fault" (0 is never a pattern).
     */
    for ( i = 0; i < m; i++ )
    {
        uint64_t v = bw[i];

        if ( v == pattern(r->idx, i) )
            data++;
        else if ( v == POISON || v == 0 )
            fault++;
        else
            other++;
    }
    out("PG-DMA n=%u when=%s data=%u fault=%u other=%u\n",
        r->n, when, data, fault, other);
}

/* ------------------------------------------------------------ rounds */

/*
 * Grant COUNT new pages of dom0 to dom0 itself: their references into
 * GREFS; returns the gntalloc offset that maps them.
 */
static uint64_t gntalloc_grants(unsigned int count, uint32_t *grefs)
{
    struct ioctl_gntalloc_alloc_gref *op;
    uint64_t index;

    op = xcalloc(1, sizeof(*op) + (count - 1) * sizeof(op->gref_ids[0]),
                 "gntalloc op");
    op->domid = 0;
    op->flags = GNTALLOC_FLAG_WRITABLE;
    op->count = count;
    if ( ioctl(gntalloc_fd, IOCTL_GNTALLOC_ALLOC_GREF, op) < 0 )
        failf(errno, "gntalloc alloc n=%u (ENOSPC: raise "
              "/sys/module/xen_gntalloc/parameters/limit)", count);
    holder_needed = 1;
    memcpy(grefs, op->gref_ids, count * sizeof(*grefs));
    index = op->index;
    /* Deliberately never deallocated: see spawn_holder(). */
    free(op);
    return index;
}

static void round_alloc(struct round *r)
{
    size_t len = (size_t)r->n * PG_PAGE_SIZE;
    uint64_t index;
    unsigned int i, j;

    r->grefs = xcalloc(r->n, sizeof(*r->grefs), "grefs");
    index = gntalloc_grants(r->n, r->grefs);

    r->leak_va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
                      gntalloc_fd, (off_t)index);
    if ( r->leak_va == MAP_FAILED )
        failf(errno, "mmap gntalloc n=%u", r->n);

    /* Write the pattern now: after the gntdev map this view is unusable. */
    for ( i = 0; i < r->n; i++ )
    {
        uint64_t *w = (uint64_t *)((char *)r->leak_va + i * PG_PAGE_SIZE);
        uint64_t val = pattern(r->idx, i);

        for ( j = 0; j < PG_PAGE_WORDS; j++ )
            w[j] = val;
    }
    barrier();
    /* Deliberately never munmap()ed: see spawn_holder(). */
}

/*
 * Scattered frames.  gntdev takes the pages it maps grants into from
 * Linux' pool of unpopulated pages, a LIFO list: allocate n * stride
 * single-page gntdev maps (the ioctl alone allocates, no hypercall),
 * then free every stride-th one, so that the round's own map receives
 * frames 'stride' pages apart.  The others are held until the round's
 * unmap is done, then freed.
 *
 * Those spacers are never mapped, so the round's unmap leaves each
 * frame's 2M region empty, and Xen frees its IOMMU page table.  A kept
 * round ("NkS") also maps spacers, between its map and unmap phases,
 * until every 2M region holding one of its frames holds a spacer's
 * mapping: each frame's IOMMU leaf table then stays linked through the
 * round's unmap, which frees no page table, and only the flush rules
 * split the batch's gathered flush.  Its spacers map grants of their own
 * (one per frame), so that the round's unmap releases its grants as
 * other rounds' unmaps do.
 */
static unsigned int gntdev_alloc1(uint32_t ref)
{
    struct ioctl_gntdev_map_grant_ref op = { .count = 1 };

    op.refs[0].domid = 0;
    op.refs[0].ref = ref;
    if ( ioctl(gntdev_fd, IOCTL_GNTDEV_MAP_GRANT_REF, &op) < 0 )
        failf(errno, "gntdev spacer map");
    return op.index;
}

static void gntdev_free1(uint64_t index)
{
    struct ioctl_gntdev_unmap_grant_ref op = { .index = index, .count = 1 };

    if ( ioctl(gntdev_fd, IOCTL_GNTDEV_UNMAP_GRANT_REF, &op) < 0 )
        failf(errno, "gntdev spacer unmap");
}

static void round_scatter(struct round *r)
{
    unsigned int i, k = 0, total = r->n * r->stride;
    uint64_t *idx;

    if ( r->stride <= 1 )
        return;
    if ( r->kept )
    {
        r->spacer_grefs = xcalloc(r->n, sizeof(*r->spacer_grefs), "grefs");
        gntalloc_grants(r->n, r->spacer_grefs);
    }
    idx = xcalloc(total, sizeof(*idx), "spacers");
    for ( i = 0; i < total; i++ )
        idx[i] = gntdev_alloc1(r->kept ? r->spacer_grefs[i / r->stride]
                                       : r->grefs[0]);
    r->spacers = xcalloc(total, sizeof(*r->spacers), "spacers");
    for ( i = 0; i < total; i++ )
    {
        if ( i % r->stride == 0 )
            gntdev_free1(idx[i]);
        else
            r->spacers[k++] = idx[i];
    }
    r->nr_spacers = k;
    free(idx);
}

/*
 * Map spacers of a kept round until each frame's 2M region holds one: those
 * next to each freed map in allocation order first, the pool handing out
 * neighbouring frames in runs, then further ones, PG_KEEP_TRIES on each side
 * of each frame at most.  The spacer at allocation position p (p % stride
 * != 0) is spacers[p - p / stride - 1].  Outside the counted phases.
 */
static void round_keep(struct round *r)
{
    unsigned int total = r->n * r->stride, open = r->n, d, side, g, i;
    unsigned char *linked = xcalloc(r->n, 1, "linked");

    r->spacer_va = xcalloc(r->nr_spacers, sizeof(*r->spacer_va), "spacer va");
    for ( d = 1; d < r->stride && d <= PG_KEEP_TRIES && open; d++ )
        for ( side = 0; side < 2 && open; side++ )
            for ( g = 0; g < r->n && open; g++ )
            {
                int64_t p = (int64_t)g * r->stride + (side ? -(int64_t)d : d);
                unsigned int k;
                uint64_t pfn;
                void *va;

                if ( p <= 0 || p >= total )
                    continue;
                k = p - p / r->stride - 1;
                if ( r->spacer_va[k] )
                    continue;
                /* Auto-translated dom0: the map hypercall is issued here. */
                va = mmap(NULL, PG_PAGE_SIZE, PROT_READ | PROT_WRITE,
                          MAP_SHARED, gntdev_fd, (off_t)r->spacers[k]);
                if ( va == MAP_FAILED )
                    failf(errno, "mmap spacer %u of n=%u", k, r->n);
                r->spacer_va[k] = va;
                r->nr_kept++;
                pfn = va_to_bus(va, "spacer", k) >> 12;
                for ( i = 0; i < r->n; i++ )
                    if ( !linked[i] && (r->pfns[i] >> PG_REGION_SHIFT) ==
                                       (pfn >> PG_REGION_SHIFT) )
                    {
                        linked[i] = 1;
                        open--;
                    }
            }
    if ( open )
        failf(ENOENT, "kept round n=%u: the 2M regions of %u frames hold no "
              "spacer (%u mapped)", r->n, open, r->nr_kept);
    free(linked);
}

/*
 * Free the spacers, once the round's unmap is done.  A mapped spacer's grant
 * is unmapped by the last put of its map, the munmap() after the ioctl: wait
 * for those hypercalls, so that none lands in the next round's phases.
 */
static void round_unscatter(struct round *r)
{
    unsigned int i;
    int64_t t0;

    if ( r->nr_kept )
        perfc_snap(&snap_a);
    for ( i = 0; i < r->nr_spacers; i++ )
    {
        gntdev_free1(r->spacers[i]);
        if ( r->spacer_va && r->spacer_va[i] &&
             munmap(r->spacer_va[i], PG_PAGE_SIZE) )
            failf(errno, "munmap spacer %u of n=%u", i, r->n);
    }
    t0 = now_ns();
    while ( r->nr_kept )
    {
        perfc_snap(&snap_b);
        if ( snap_b.gnt_hc - snap_a.gnt_hc >= r->nr_kept )
            break;
        if ( now_ns() - t0 > 2000000000LL )
            failf(ETIMEDOUT, "n=%u: %u of %u spacer unmaps observed", r->n,
                  snap_b.gnt_hc - snap_a.gnt_hc, r->nr_kept);
        sleep_ns(1000000);
    }
    free(r->spacers);
    free(r->spacer_va);
    r->spacers = NULL;
    r->spacer_va = NULL;
    r->nr_spacers = r->nr_kept = 0;
}

/* The frames the round's pages were mapped at, in the map's page order. */
static void round_pfns(struct round *r)
{
    unsigned int i;

    if ( pagemap_fd < 0 )
        pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if ( pagemap_fd < 0 )
        failf(errno, "open /proc/self/pagemap");
    r->pfns = xcalloc(r->n, sizeof(*r->pfns), "pfns");
    for ( i = 0; i < r->n; i++ )
        r->pfns[i] = va_to_bus((char *)r->map_va + i * PG_PAGE_SIZE,
                               "frames", i) >> 12;
}

/*
 * The frames (the order of the unmap hypercall's operations), for the
 * harness' replay of flush merge policies, and a kept round's count of
 * spacers mapped.  Printed outside the counted phases.
 */
static void round_frames(const struct round *r)
{
    char *line = xcalloc((size_t)r->n * 17 + 96, 1, "frames line");
    size_t off;
    unsigned int i;

    off = sprintf(line, "PG-FRAMES n=%u stride=%u", r->n, r->stride);
    if ( r->kept )
        off += sprintf(line + off, " kept=1 maps=%u", r->nr_kept);
    off += sprintf(line + off, " pfns=");
    for ( i = 0; i < r->n; i++ )
        off += sprintf(line + off, "%s%" PRIx64, i ? "," : "", r->pfns[i]);
    out("%s\n", line);
    free(line);
}

static void round_map(struct round *r)
{
    struct ioctl_gntdev_map_grant_ref *op;
    size_t len = (size_t)r->n * PG_PAGE_SIZE;
    unsigned int i, j;

    op = xcalloc(1, sizeof(*op) + (r->n - 1) * sizeof(op->refs[0]),
                 "gntdev op");
    op->count = r->n;
    for ( i = 0; i < r->n; i++ )
    {
        op->refs[i].domid = 0;
        op->refs[i].ref = r->grefs[i];
    }

    phase_begin(r, "map");

    if ( ioctl(gntdev_fd, IOCTL_GNTDEV_MAP_GRANT_REF, op) < 0 )
        failf(errno, "gntdev map ioctl n=%u", r->n);
    r->map_index = op->index;

    /* Auto-translated dom0: the map hypercall is issued here. */
    r->map_va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
                     gntdev_fd, (off_t)op->index);
    if ( r->map_va == MAP_FAILED )
        failf(errno, "mmap gntdev n=%u", r->n);

    for ( i = 0; i < r->n; i++ )
    {
        volatile uint64_t *w =
            (volatile uint64_t *)((char *)r->map_va + i * PG_PAGE_SIZE);
        uint64_t want = pattern(r->idx, i);

        for ( j = 0; j < PG_PAGE_WORDS; j++ )
        {
            uint64_t got = w[j];

            if ( got != want )
                failf(EIO, "verify n=%u page %u word %u: got %#" PRIx64
                      " want %#" PRIx64, r->n, i, j, got, want);
        }
        w[PG_SCRATCH_WORD] = ~want;
    }

    perfc_snap(&snap_b);
    phase_end(r, "map");
    free(op);
}

static void round_unmap(struct round *r)
{
    struct ioctl_gntdev_unmap_grant_ref op = {
        .index = r->map_index,
        .count = r->n,
    };
    size_t len = (size_t)r->n * PG_PAGE_SIZE;
    int64_t t0;

    phase_begin(r, "unmap");
    t0 = now_ns();

    /*
     * On an auto-translated (PVH) dom0 the grants are unmapped when the
     * last reference to the gntdev map is dropped.  The ioctl and the VMA
     * each hold one; munmap() first would leave the hypercall to the ioctl.
     * Dropping the ioctl's reference first makes munmap() issue the unmap
     * hypercall (on PV dom0 munmap() does it regardless).
     */
    if ( ioctl(gntdev_fd, IOCTL_GNTDEV_UNMAP_GRANT_REF, &op) < 0 )
        failf(errno, "gntdev unmap ioctl n=%u", r->n);
    if ( munmap(r->map_va, len) )
        failf(errno, "munmap gntdev n=%u", r->n);
    r->unmap_ns = now_ns() - t0;
    r->map_va = NULL;

    perfc_snap(&snap_b);
    if ( snap_b.gnt_hc == snap_a.gnt_hc )
    {
        r->unmap_ns = -1;       /* the hypercall ran later, untimed */
        /*
         * Linux defers the unmap (gnttab_unmap_refs_async) while a page is
         * still referenced.  Wait for it, or the after-unmap DMA check would
         * run against still-mapped grants.
         */
        t0 = now_ns();
        do {
            if ( now_ns() - t0 > 2000000000LL )
                failf(ETIMEDOUT, "unmap n=%u: no grant_table_op hypercall "
                      "observed", r->n);
            sleep_ns(1000000);
            perfc_snap(&snap_b);
        } while ( snap_b.gnt_hc == snap_a.gnt_hc );
        sleep_ns(50000000);     /* let the deferred hypercall complete */
        perfc_snap(&snap_b);
    }
    phase_end(r, "unmap");
}

static unsigned int parse_n(const char *s, const char *what)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(s, &end, 0);
    if ( errno || end == s || *end || v < 1 || v > PG_MAX_N || s[0] == '-' )
        failf(EINVAL, "usage: bad %s '%s' (1..%u)", what, s, PG_MAX_N);
    return v;
}

#define usage() \
    failf(EINVAL, "usage: gntpg [--dma BDF] [--dma-n N] N[sS|kS] ...")

int main(int argc, char **argv)
{
    struct round *rounds;
    unsigned int nr = 0, i;
    int have_dma_round = 0;

    setvbuf(stdout, NULL, _IONBF, 0);

    rounds = xcalloc(argc, sizeof(*rounds), "rounds");
    for ( i = 1; i < (unsigned int)argc; i++ )
    {
        if ( !strcmp(argv[i], "--dma") && i + 1 < (unsigned int)argc )
            dma_bdf = argv[++i];
        else if ( !strcmp(argv[i], "--dma-n") && i + 1 < (unsigned int)argc )
            dma_n = parse_n(argv[++i], "--dma-n");
        else if ( argv[i][0] == '-' )
            usage();
        else
        {
            char *st = strpbrk(argv[i], "sk");

            rounds[nr].idx = nr + 1;
            rounds[nr].stride = 1;
            if ( st )
            {
                /*
                 * "NsS": N pages whose frames are S pages apart; "NkS": the
                 * same, with each frame's IOMMU leaf table kept linked.
                 */
                rounds[nr].kept = *st == 'k';
                *st = '\0';
                rounds[nr].stride = parse_n(st + 1, "stride");
                if ( rounds[nr].kept && rounds[nr].stride < 2 )
                    failf(EINVAL, "usage: bad kept stride '%s' (2..%u)",
                          st + 1, PG_MAX_N);
            }
            rounds[nr].n = parse_n(argv[i], "N");
            nr++;
        }
    }
    if ( !nr )
        usage();
    if ( dma_bdf )
    {
        for ( i = 0; i < nr; i++ )
            have_dma_round |= rounds[i].n == dma_n && rounds[i].stride == 1;
        if ( !have_dma_round )
            failf(EINVAL, "usage: --dma given but no round has n=%u", dma_n);
    }

    perfc_init();
    out("PG-START version=1 perfc=%u\n", pc_nr_ctr);

    gntalloc_fd = open("/dev/xen/gntalloc", O_RDWR | O_CLOEXEC);
    if ( gntalloc_fd < 0 )
        failf(errno, "open /dev/xen/gntalloc");
    gntdev_fd = open("/dev/xen/gntdev", O_RDWR | O_CLOEXEC);
    if ( gntdev_fd < 0 )
        failf(errno, "open /dev/xen/gntdev");

    if ( dma_bdf )
        dma_setup();

    for ( i = 0; i < nr; i++ )
    {
        struct round *r = &rounds[i];
        int dma = dma_bdf && r->n == dma_n && r->stride == 1;

        round_alloc(r);
        round_scatter(r);
        round_map(r);
        round_pfns(r);
        if ( r->kept )
            round_keep(r);
        round_frames(r);
        if ( dma )
        {
            dma_collect(r);
            dma_check(r, "mapped");
        }
        round_unmap(r);
        if ( dma )
            dma_check(r, "after-unmap");
        round_unscatter(r);
    }

    if ( spawn_holder() )
        failf(errno, "fork gntalloc holder");
    out("PG-DONE\n");
    return 0;
}
