// SPDX-License-Identifier: GPL-2.0
/*
 * gntt: a precise driver of GNTTABOP_unmap_grant_ref for a PVH dom0.
 *
 * The module grants pages of dom0 to dom0 itself, maps the grants with
 * GNTTABOP_map_grant_ref at gfns it gets from gnttab_alloc_pages(), and
 * then unmaps them in crafted arrays: a batch that runs into an unmapped
 * page of the caller (-EFAULT), bad handles among good ones, counts that
 * need continuations, concurrent unmaps on several vCPUs, and
 * GNTTABOP_unmap_and_replace.  After every unmap it checks that nothing
 * the flushes protect is still reachable:
 *
 *  - DMA:  QEMU's edu device reads every unmapped gfn through the IOMMU;
 *          the read must fault (the edu buffer keeps its poison).
 *  - CPU:  the old gfn, read through the kernel's mapping of it, must not
 *          return the granter's data (a stale translation).  4.17 reads a
 *          hole as all-ones; staging gives the hardware domain an identity
 *          mapping of the gfn on first touch ("fixup p2m mapping"), which
 *          reads 0 here (no RAM there).  Anything else is an error.
 *  - race: a granter on another vCPU ends each grant's access as soon as
 *          Xen releases it (gnttab_try_end_foreign_access()) and reads the
 *          old gfn, which it kept in its TLB by reading it before the
 *          unmap.  A release before the flushes shows up here as the
 *          granter's data.
 *
 * Self-grants of a translated domain: mapping the grant makes Xen's
 * p2m_add_page() find the frame, owned by the same domain, at its old gfn
 * and remove it from there ("aliased"), so the granter's own gfn becomes a
 * hole for good.  The granter's pages are therefore never written after
 * the map nor given back to Linux: they are leaked on purpose (4 KiB per
 * page unmapped).
 *
 * Cases (module parameter cases=, separated by '.'):
 *   cN      one GNTTABOP_unmap_grant_ref of N entries
 *   aK      K entries that end at a page boundary followed by an unmapped
 *           page: the hypercall must return -EFAULT after K entries
 *   b       32 good entries with bad ones among them (handle out of range,
 *           handle already unmapped, wrong host address)
 *   dN      every online vCPU unmaps its own N entries at the same time
 *   kN      as dN, N frames two to a 2M region, each region's IOMMU page
 *           table kept linked by a spacer grant mapped beside them; a
 *           "PG-T kept" line counts the regions placed so
 *   mN      the first vCPU unmaps 4N entries in one hypercall while every
 *           other vCPU maps N new grants, one per hypercall
 *   pN      every vCPU but the last unmaps N entries at the same time;
 *           the last vCPU is the racing granter of all of them
 *   e       GNTTABOP_unmap_and_replace (new_addr 0 and non-zero) from a
 *           translated caller
 *   tf      (only when named) a triple fault of this vCPU, on purpose
 * Results are printed as "PG-T" lines; "PG-T-END" closes the run.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <xen/grant_table.h>
#include <xen/page.h>
#include <xen/interface/vcpu.h>
#include <xen/xen-ops.h>
#include <xen/xen.h>
#include <asm/xen/hypercall.h>

static char *cases = "c32";
module_param(cases, charp, 0444);
MODULE_PARM_DESC(cases, "cases to run, separated by '.'");
static unsigned int dma = 32;
module_param(dma, uint, 0444);
MODULE_PARM_DESC(dma, "pages of every 32 checked by DMA through QEMU's edu "
                 "(0-32; each edu DMA takes 100 ms)");

#define POISON          0x5050505050505050ULL
#define HOLE            (~0ULL)
#define MAX_N           4096

/* QEMU edu device (hw/misc/edu.c). */
#define EDU_VENDOR      0x1234
#define EDU_DEVICE      0x11e8
#define EDU_REG_SRC     0x80
#define EDU_REG_DST     0x88
#define EDU_REG_CNT     0x90
#define EDU_REG_CMD     0x98
#define EDU_CMD_RUN     0x1
#define EDU_CMD_TO_RAM  0x2
#define EDU_BUF         0x40000ULL
#define EDU_BUF_SIZE    4088    /* QEMU 7.2's edu_check_range() bound */
#define EDU_SLOTS       (EDU_BUF_SIZE / 8)

static void __iomem *edu;
static struct pci_dev *edu_pdev;
static struct page *bounce, *result;
static DEFINE_MUTEX(edu_lock);

static unsigned long total_pages, total_dma_pages, total_stale_dma;
static unsigned long total_stale_cpu;
static unsigned long total_fail, leaked_granter_pages;

/* One set of self-grants mapped at unpopulated gfns. */
struct gset {
    unsigned int n, tag;
    struct page **gp;           /* the granter's pages */
    struct page **mp;           /* the gfns the grants are mapped at */
    grant_ref_t *ref;
    grant_handle_t *handle;
    bool *mapped, *ended;
    bool dma_all;               /* read every page by DMA, not dma= of 32 */
};

static inline u64 *gva(struct gset *s, unsigned int i)
{
    return page_address(s->gp[i]);
}

static inline volatile u64 *mva(struct gset *s, unsigned int i)
{
    return pfn_to_kaddr(page_to_pfn(s->mp[i]));
}

static inline u64 mapaddr(struct gset *s, unsigned int i)
{
    return (u64)(unsigned long)pfn_to_kaddr(page_to_pfn(s->mp[i]));
}

static inline u64 old_val(struct gset *s, unsigned int i)
{
    return 0xa000000000000000ULL | ((u64)s->tag << 32) | i;
}

/* Per-check counts. */
struct tally {
    unsigned long pages, dma_pages, stale_dma, stale_cpu, stale_race, bad;
};

static void gset_free(struct gset *s)
{
    unsigned int i, leaked = 0;

    for ( i = 0; i < s->n; i++ )
    {
        if ( s->mapped && s->mapped[i] )
        {
            leaked++;
            continue;
        }
        if ( s->ended && !s->ended[i] && s->ref )
        {
            if ( gnttab_try_end_foreign_access(s->ref[i]) )
                s->ended[i] = true;
            else
            {
                leaked++;
                continue;
            }
        }
        /* s->gp[i] is leaked: its gfn is a hole since the map. */
    }
    if ( leaked )
        pr_warn("PG-T leak tag=%u pages=%u (still mapped or in use)\n",
                s->tag, leaked);
    if ( s->gp && s->gp[s->n - 1] )
        leaked_granter_pages += s->n;
    else if ( s->mp )
        gnttab_free_pages(s->n, s->mp);
    kfree(s->gp);
    kfree(s->mp);
    kfree(s->ref);
    kfree(s->handle);
    kfree(s->mapped);
    kfree(s->ended);
    memset(s, 0, sizeof(*s));
}

static int cmp_pfn(const void *a, const void *b)
{
    unsigned long x = page_to_pfn(*(struct page *const *)a);
    unsigned long y = page_to_pfn(*(struct page *const *)b);

    return x < y ? -1 : x > y;
}

/*
 * The gfns of kN: r 2M regions (512 gfns), each holding two frames
 * (mp[2i], mp[2i + 1]) and a spacer (mp[2r + i]), taken from unpopulated
 * gfns in the order of their regions.  Frames of distinct regions differ
 * in a bit above the ninth, so the aligned block of two regions' frames
 * spans 1024 pages or more, beyond the density rule's 2^9 for fewer than
 * 8 pages: the batch's gather is flushed region by region, two pages at
 * a time.
 */
static int kept_gfns(struct page **mp, unsigned int r)
{
    unsigned int np = (r + 2) * 512, i, j, got = 0, nfree = 0;
    struct page **pool = kvcalloc(np, sizeof(*pool), GFP_KERNEL);

    if ( !pool || gnttab_alloc_pages(np, pool) )
    {
        kvfree(pool);
        return -ENOMEM;
    }
    sort(pool, np, sizeof(*pool), cmp_pfn, NULL);
    for ( i = 0; i < np; i = j )
    {
        unsigned long region = page_to_pfn(pool[i]) >> 9;

        for ( j = i; j < np && page_to_pfn(pool[j]) >> 9 == region; j++ )
            ;
        if ( got < r && j - i >= 3 )
        {
            mp[2 * got] = pool[i];
            mp[2 * got + 1] = pool[i + 1];
            mp[2 * r + got] = pool[i + 2];
            got++;
            i += 3;
        }
        while ( i < j )         /* nfree <= i: compacts in place */
            pool[nfree++] = pool[i++];
    }
    if ( got < r )
    {
        pr_warn("PG-T error: %u of %u 2M regions with 3 unpopulated gfns\n",
                got, r);
        for ( i = 0; i < got; i++ )
        {
            pool[nfree++] = mp[2 * i];
            pool[nfree++] = mp[2 * i + 1];
            pool[nfree++] = mp[2 * r + i];
        }
    }
    gnttab_free_pages(nfree, pool);
    kvfree(pool);
    return got < r ? -ENOSPC : 0;
}

/*
 * How many of a kN set's r regions are as kept_gfns() meant them: frames
 * 2i and 2i + 1 distinct and in the 2M region of spacer i, the regions in
 * ascending order (so distinct), and the spacer still mapped (the
 * region's IOMMU page table linked).  Called between the frames' unmap
 * and the spacers'.
 */
static unsigned int kept_placed(const struct gset *s, unsigned int r)
{
    unsigned long reg, prev = 0;
    unsigned int i, placed = 0;

    for ( i = 0; s->mp && i < r; i++ )
    {
        reg = page_to_pfn(s->mp[2 * i]) >> 9;
        if ( s->mp[2 * i] != s->mp[2 * i + 1] &&
             page_to_pfn(s->mp[2 * i + 1]) >> 9 == reg &&
             page_to_pfn(s->mp[2 * r + i]) >> 9 == reg &&
             (!i || reg > prev) && s->mapped[2 * r + i] )
            placed++;
        prev = reg;
    }

    return placed;
}

/*
 * Grant n pages of dom0 to dom0, to be mapped at unpopulated gfns; with
 * kept, n = 3r at the gfns of kept_gfns().
 */
static int gset_grant(struct gset *s, unsigned int n, unsigned int tag,
                      bool kept)
{
    unsigned int i;
    int ref;

    memset(s, 0, sizeof(*s));
    s->n = n;
    s->tag = tag;
    s->gp = kcalloc(n, sizeof(*s->gp), GFP_KERNEL);
    s->mp = kcalloc(n, sizeof(*s->mp), GFP_KERNEL);
    s->ref = kcalloc(n, sizeof(*s->ref), GFP_KERNEL);
    s->handle = kcalloc(n, sizeof(*s->handle), GFP_KERNEL);
    s->mapped = kcalloc(n, sizeof(*s->mapped), GFP_KERNEL);
    s->ended = kcalloc(n, sizeof(*s->ended), GFP_KERNEL);
    if ( !s->gp || !s->mp || !s->ref || !s->handle || !s->mapped ||
         !s->ended )
        return -ENOMEM;
    for ( i = 0; i < n; i++ )
        s->ended[i] = true;
    if ( kept ? kept_gfns(s->mp, n / 3) : gnttab_alloc_pages(n, s->mp) )
    {
        kfree(s->mp);
        s->mp = NULL;
        return -ENOMEM;
    }
    for ( i = 0; i < n; i++ )
    {
        s->gp[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
        if ( !s->gp[i] )
            return -ENOMEM;
        gva(s, i)[0] = old_val(s, i);
        ref = gnttab_grant_foreign_access(0, xen_page_to_gfn(s->gp[i]), 0);
        if ( ref < 0 )
        {
            pr_warn("PG-T error grant tag=%u i=%u rc=%d\n", tag, i, ref);
            return -ENOMEM;
        }
        s->ref[i] = ref;
        s->ended[i] = false;
    }
    return 0;
}

/* Map entries [from, from + n) in one hypercall. */
static int map_range(struct gset *s, unsigned int from, unsigned int n)
{
    struct gnttab_map_grant_ref *op = kvcalloc(n, sizeof(*op), GFP_KERNEL);
    unsigned int i;
    int rc;

    if ( !op )
        return -ENOMEM;
    for ( i = 0; i < n; i++ )
        gnttab_set_map_op(&op[i], (phys_addr_t)mapaddr(s, from + i),
                          GNTMAP_host_map, s->ref[from + i], 0);
    rc = HYPERVISOR_grant_table_op(GNTTABOP_map_grant_ref, op, n);
    for ( i = 0; i < n; i++ )
    {
        if ( op[i].status != GNTST_okay )
        {
            if ( rc >= 0 )
                pr_warn("PG-T error map tag=%u i=%u status=%d rc=%d gfn=%#lx "
                        "at=%#lx\n", s->tag, from + i, op[i].status, rc,
                        xen_page_to_gfn(s->gp[from + i]),
                        page_to_pfn(s->mp[from + i]));
            rc = -EIO;
            continue;
        }
        s->handle[from + i] = op[i].handle;
        s->mapped[from + i] = true;
    }
    kvfree(op);
    return rc;
}

static int gset_alloc(struct gset *s, unsigned int n, unsigned int tag)
{
    int rc = gset_grant(s, n, tag, false);

    return rc ?: map_range(s, 0, n);
}

/* ---- DMA through the IOMMU with QEMU's edu device ---- */

/* edu ends a DMA after 100 ms of QEMU's clock: 30 s means it is stuck. */
static int edu_wait(void)
{
    ktime_t t0 = ktime_get();

    while ( readq(edu + EDU_REG_CMD) & EDU_CMD_RUN )
    {
        if ( ktime_ms_delta(ktime_get(), t0) > 30000 )
            return -ETIMEDOUT;
        cpu_relax();
    }
    return 0;
}

static int edu_dma(u64 src, u64 dst, u64 cnt, bool to_ram)
{
    int rc = edu_wait();

    if ( rc )
        return rc;
    writeq(src, edu + EDU_REG_SRC);
    writeq(dst, edu + EDU_REG_DST);
    writeq(cnt, edu + EDU_REG_CNT);
    writeq(EDU_CMD_RUN | (to_ram ? EDU_CMD_TO_RAM : 0), edu + EDU_REG_CMD);
    return edu_wait();
}

/*
 * Whether entry i is one of the dma= entries of its group of 32 that are
 * read by DMA (spread from the group's first to its last entry).  QEMU's
 * edu completes a DMA 100 ms after it starts, so reading every page costs
 * 0.2 s per page; the CPU detector reads every page.
 */
static bool dma_sampled(const struct gset *s, unsigned int i)
{
    unsigned int j = i % 32, k;

    if ( !edu || !dma )
        return false;
    if ( dma >= 32 || s->dma_all )
        return true;
    if ( dma == 1 )
        return j == 0;
    for ( k = 0; k < dma; k++ )
        if ( (k * 31 + (dma - 1) / 2) / (dma - 1) == j )
            return true;
    return false;
}

/*
 * Read word 0 of the gfns of entries idx[0..cnt) of @s by DMA into @out
 * (at most EDU_SLOTS).  A faulting read leaves POISON.
 */
static int dma_read(struct gset *s, const unsigned int *idx,
                    unsigned int cnt, u64 *out)
{
    u64 *b = page_address(bounce), *r = page_address(result);
    unsigned int i;
    int rc;

    mutex_lock(&edu_lock);
    for ( i = 0; i < EDU_SLOTS; i++ )
        b[i] = POISON;
    rc = edu_dma(page_to_phys(bounce), EDU_BUF, EDU_BUF_SIZE, false);
    for ( i = 0; !rc && i < cnt; i++ )
        rc = edu_dma(page_to_phys(s->mp[idx[i]]), EDU_BUF + 8 * i, 8,
                     false);
    if ( !rc )
    {
        memset(r, 0, PAGE_SIZE);
        rc = edu_dma(EDU_BUF, page_to_phys(result), EDU_BUF_SIZE, true);
    }
    for ( i = 0; !rc && i < cnt; i++ )
        out[i] = r[i];
    mutex_unlock(&edu_lock);
    return rc;
}

/*
 * Read the sampled entries of [from, to) by DMA: while mapped, each must
 * return the granter's data; after the unmap, each must fault.  A faulting
 * DMA read does not leave the poison in QEMU: it is served by
 * io_mem_unassigned, which reads 0.  The granter's data is never 0.
 */
static int dma_pass(struct gset *s, unsigned int from, unsigned int to,
                    bool mapped, struct tally *t)
{
    unsigned int i, j, m = 0, *idx;
    int rc = 0;
    u64 *v;

    if ( !edu || !dma )
        return 0;
    v = kmalloc_array(EDU_SLOTS, sizeof(*v), GFP_KERNEL);
    idx = kmalloc_array(EDU_SLOTS, sizeof(*idx), GFP_KERNEL);
    if ( !v || !idx )
        rc = -ENOMEM;
    for ( i = from; !rc && i < to; i++ )
    {
        if ( dma_sampled(s, i) )
            idx[m++] = i;
        if ( m < EDU_SLOTS && i + 1 < to )
            continue;
        rc = dma_read(s, idx, m, v);
        for ( j = 0; !rc && j < m; j++ )
        {
            if ( mapped && v[j] != old_val(s, idx[j]) )
            {
                pr_warn("PG-T error tag=%u i=%u: DMA of mapped gfn reads "
                        "%#llx\n", s->tag, idx[j], v[j]);
                t->bad++;
            }
            else if ( !mapped && v[j] != POISON && v[j] != 0 )
            {
                if ( t->stale_dma < 4 )
                    pr_warn("PG-T stale-dma tag=%u i=%u reads %#llx\n",
                            s->tag, idx[j], v[j]);
                t->stale_dma++;
            }
            if ( !mapped )
                t->dma_pages++;
        }
        m = 0;
    }
    kfree(v);
    kfree(idx);
    return rc;
}

/* Warm the IOMMU's and this vCPU's translations of the mapped entries. */
static int warm(struct gset *s, struct tally *t)
{
    unsigned int i;

    for ( i = 0; i < s->n; i++ )
        if ( READ_ONCE(*mva(s, i)) != old_val(s, i) )
        {
            pr_warn("PG-T error tag=%u i=%u: mapped gfn reads %#llx\n",
                    s->tag, i, READ_ONCE(*mva(s, i)));
            t->bad++;
        }
    return dma_pass(s, 0, s->n, true, t);
}

/*
 * After the unmap of entries [from, to) returned: the granter takes its
 * grants back; neither the CPU nor the device may reach the pages through
 * the old gfns any more.
 */
static int check_unmapped(struct gset *s, unsigned int from, unsigned int to,
                          struct tally *t)
{
    unsigned int i;

    for ( i = from; i < to; i++ )
    {
        if ( !s->ended[i] )
        {
            if ( !gnttab_try_end_foreign_access(s->ref[i]) )
            {
                pr_warn("PG-T error tag=%u i=%u: grant still in use after "
                        "unmap\n", s->tag, i);
                t->bad++;
                continue;
            }
            s->ended[i] = true;
        }
    }
    for ( i = from; i < to; i++ )
    {
        u64 c = READ_ONCE(*mva(s, i));

        t->pages++;
        if ( c == old_val(s, i) )
        {
            if ( t->stale_cpu < 4 )
                pr_warn("PG-T stale-cpu tag=%u i=%u reads the granter's "
                        "data\n", s->tag, i);
            t->stale_cpu++;
        }
        else if ( c != HOLE && c != 0 && t->bad++ < 4 )
            pr_warn("PG-T error tag=%u i=%u: unmapped gfn reads %#llx\n",
                    s->tag, i, c);
    }
    return dma_pass(s, from, to, false, t);
}

static void unmap_ops(struct gset *s, struct gnttab_unmap_grant_ref *op,
                      unsigned int from, unsigned int n)
{
    unsigned int i;

    for ( i = 0; i < n; i++ )
        gnttab_set_unmap_op(&op[i], (phys_addr_t)mapaddr(s, from + i),
                            GNTMAP_host_map, s->handle[from + i]);
}

/* Unmap [from, from + n) in one hypercall; mark what Xen reports done. */
static int unmap_range(struct gset *s, unsigned int from, unsigned int n,
                       struct tally *t)
{
    struct gnttab_unmap_grant_ref *op = kvcalloc(n, sizeof(*op), GFP_KERNEL);
    unsigned int i;
    int rc;

    if ( !op )
        return -ENOMEM;
    unmap_ops(s, op, from, n);
    rc = HYPERVISOR_grant_table_op(GNTTABOP_unmap_grant_ref, op, n);
    for ( i = 0; i < n; i++ )
    {
        if ( op[i].status == GNTST_okay )
            s->mapped[from + i] = false;
        else
        {
            pr_warn("PG-T error unmap tag=%u i=%u status=%d\n", s->tag,
                    from + i, op[i].status);
            t->bad++;
        }
    }
    kvfree(op);
    return rc;
}

/*
 * The release-order oracle of the test-only patches logs its totals
 * ("pg-oracle-stats: ...") on this GNTTABOP_query_size: once before the
 * first case and once before each case's result, so that the report can
 * tell each case's share.  Xen without the oracle answers GNTST_bad_domain.
 */
#define PG_ORACLE_STATS_DOMID 0x7ffb

static void oracle_stats(void)
{
    struct gnttab_query_size q = { .dom = PG_ORACLE_STATS_DOMID };

    HYPERVISOR_grant_table_op(GNTTABOP_query_size, &q, 1);
}

static void report(const char *name, unsigned int n, int rc, int want,
                   struct tally *t)
{
    bool ok = rc == want && !t->stale_dma && !t->stale_cpu &&
              !t->stale_race && !t->bad;

    oracle_stats();

    total_pages += t->pages;
    total_dma_pages += t->dma_pages;
    total_stale_dma += t->stale_dma;
    total_stale_cpu += t->stale_cpu + t->stale_race;
    total_fail += !ok;
    pr_warn("PG-T case=%s n=%u rc=%d want=%d pages=%lu dma_pages=%lu "
            "stale_dma=%lu stale_cpu=%lu stale_race=%lu bad=%lu result=%s\n",
            name, n, rc, want, t->pages, t->dma_pages, t->stale_dma,
            t->stale_cpu, t->stale_race, t->bad, ok ? "pass" : "FAIL");
}

static unsigned int next_tag = 1;

/* cN: one hypercall of N entries (continuations from N > 32 on). */
static void case_count(const char *name, unsigned int n)
{
    struct tally t = {};
    struct gset s;
    int rc;

    rc = gset_alloc(&s, n, next_tag++);
    if ( !rc )
        rc = warm(&s, &t);
    if ( !rc )
        rc = unmap_range(&s, 0, n, &t);
    if ( !rc )
        rc = check_unmapped(&s, 0, n, &t);
    report(name, n, rc, 0, &t);
    gset_free(&s);
}

/*
 * aK: the op array's K entries end at a page boundary and the next page
 * is vmalloc's guard page.  Xen unmaps K entries, faults reading entry K
 * and returns -EFAULT; the K entries must be flushed before it returns.
 */
static void case_efault(const char *name, unsigned int k)
{
    unsigned int extra = 8, n = k + extra;
    size_t sz = PAGE_ALIGN(k * sizeof(struct gnttab_unmap_grant_ref));
    struct gnttab_unmap_grant_ref *area, *op;
    struct tally t = {};
    struct gset s;
    unsigned int i;
    int rc, rc2;

    area = vmalloc(sz);         /* followed by an unmapped guard page */
    if ( !area )
        return report(name, n, -ENOMEM, -EFAULT, &t);
    op = (void *)area + sz - k * sizeof(*op);
    rc = gset_alloc(&s, n, next_tag++);
    /*
     * Every page by DMA: the flush of a complete batch before the fault may
     * cover some of the partial batch's gfns (patch 1 rounds ranges up).
     */
    s.dma_all = true;
    if ( !rc )
        rc = warm(&s, &t);
    if ( rc )
        goto out;
    unmap_ops(&s, op, 0, k);
    rc = HYPERVISOR_grant_table_op(GNTTABOP_unmap_grant_ref, op, n);
    for ( i = 0; i < k; i++ )
        if ( op[i].status == GNTST_okay )
            s.mapped[i] = false;
        else
            t.bad++;
    rc2 = check_unmapped(&s, 0, k, &t);
    /* The entries past the fault were never read: still mapped. */
    for ( i = k; i < n; i++ )
        if ( READ_ONCE(*mva(&s, i)) != old_val(&s, i) )
            t.bad++;
    if ( !rc2 )
        rc2 = unmap_range(&s, k, extra, &t);
    if ( !rc2 )
        rc2 = check_unmapped(&s, k, n, &t);
    if ( rc2 )
        t.bad++;
 out:
    report(name, n, rc, -EFAULT, &t);
    gset_free(&s);
    vfree(area);
}

/*
 * b: bad entries among 32 good ones.  Each bad entry fails with its own
 * status; the good ones around it are unmapped and flushed; the entry
 * with the wrong host address stays mapped and is unmapped afterwards.
 */
static void case_bad(const char *name)
{
    const unsigned int n = 32, nops = n + 3;
    struct gnttab_unmap_grant_ref *op;
    struct tally t = {};
    struct gset s;
    unsigned int i, j = 0, nsub;
    int rc;
    static const s16 want_bad[] = {
        GNTST_bad_handle, GNTST_bad_handle, GNTST_general_error,
    };

    op = kvcalloc(nops, sizeof(*op), GFP_KERNEL);
    if ( !op )
        return report(name, n, -ENOMEM, 0, &t);
    rc = gset_alloc(&s, n, next_tag++);
    if ( !rc )
        rc = warm(&s, &t);
    if ( !rc )      /* entry 0 is unmapped first: its handle becomes stale */
        rc = unmap_range(&s, 0, 1, &t);
    if ( rc )
        goto out;
    for ( i = 1; i < n; i++ )
    {
        if ( i == 5 )       /* handle far beyond the maptrack table */
            gnttab_set_unmap_op(&op[j++], mapaddr(&s, 1), GNTMAP_host_map,
                                0x7fffffff);
        if ( i == 17 )      /* the handle unmapped above */
            gnttab_set_unmap_op(&op[j++], mapaddr(&s, 0), GNTMAP_host_map,
                                s.handle[0]);
        if ( i == 30 )      /* entry 31's handle, entry 30's address */
            gnttab_set_unmap_op(&op[j++], mapaddr(&s, 30), GNTMAP_host_map,
                                s.handle[31]);
        if ( i != 31 )
            unmap_ops(&s, &op[j++], i, 1);
    }
    nsub = j;   /* 30 good (entries 1-30) and 3 bad, in slots 4/17/31 */
    rc = HYPERVISOR_grant_table_op(GNTTABOP_unmap_grant_ref, op, nsub);
    for ( i = 0, j = 0; i < nsub; i++ )
    {
        bool bad_slot = i == 4 || i == 17 || i == 31;

        if ( bad_slot )
        {
            if ( op[i].status != want_bad[j] )
            {
                pr_warn("PG-T error case b slot %u status %d want %d\n", i,
                        op[i].status, want_bad[j]);
                t.bad++;
            }
            j++;
        }
        else if ( op[i].status != GNTST_okay )
            t.bad++;
    }
    for ( i = 1; i < 31; i++ )
        s.mapped[i] = false;
    if ( READ_ONCE(*mva(&s, 31)) != old_val(&s, 31) )
    {
        pr_warn("PG-T error case b: entry 31 lost its mapping\n");
        t.bad++;
    }
    if ( !rc )
        rc = check_unmapped(&s, 0, 31, &t);
    if ( !rc )
        rc = unmap_range(&s, 31, 1, &t);
    if ( !rc )
        rc = check_unmapped(&s, 31, 32, &t);
 out:
    report(name, n, rc, 0, &t);
    gset_free(&s);
    kvfree(op);
}

/*
 * e: GNTTABOP_unmap_and_replace from a translated caller.  Xen's
 * hvm_grant_table_op() does not pass it on (-ENOSYS, "needs auditing"), so
 * the batching of gnttab_unmap_and_replace() only ever runs for PV
 * callers, where the batch hooks do nothing.  Expected: -ENOSYS for the
 * whole array (new_addr 0 and non-zero alike), every grant still mapped;
 * a plain unmap afterwards, checked as usual.
 */
static void case_replace(const char *name)
{
    const unsigned int n = 33;
    struct gnttab_unmap_and_replace *op;
    struct tally t = {};
    struct gset s;
    unsigned int i;
    int rc, rc2;

    op = kvcalloc(n, sizeof(*op), GFP_KERNEL);
    if ( !op )
        return report(name, n, -ENOMEM, -ENOSYS, &t);
    rc = gset_alloc(&s, n, next_tag++);
    if ( !rc )
        rc = warm(&s, &t);
    if ( rc )
        goto out;
    for ( i = 0; i < n; i++ )
    {
        op[i].host_addr = __pa(mapaddr(&s, i));
        op[i].new_addr = i == 32 ? __pa(mapaddr(&s, 0)) : 0;
        op[i].handle = s.handle[i];
        op[i].status = 1;
    }
    rc = HYPERVISOR_grant_table_op(GNTTABOP_unmap_and_replace, op, n);
    for ( i = 0; i < n; i++ )
        if ( op[i].status != 1 || READ_ONCE(*mva(&s, i)) != old_val(&s, i) )
        {
            pr_warn("PG-T error case e: entry %u status %d, reads %#llx\n",
                    i, op[i].status, READ_ONCE(*mva(&s, i)));
            t.bad++;
        }
    rc2 = unmap_range(&s, 0, n, &t);
    if ( !rc2 )
        rc2 = check_unmapped(&s, 0, n, &t);
    if ( rc2 )
        t.bad++;
 out:
    report(name, n, rc, -ENOSYS, &t);
    gset_free(&s);
    kvfree(op);
}

/*
 * tf: a triple fault of this vCPU on purpose, to see Xen's test-only dump
 * at dom0's triple fault (pg-tf lines).  The IDT is moved onto vmalloc's
 * guard page, unmapped, and a divide error raised: its delivery, the #PF's
 * and the #DF's all fault reading the IDT.  Never in a default case list:
 * dom0 dies.
 */
static void case_triple_fault(const char *name)
{
    struct { u16 limit; u64 base; } __packed idt;
    void *p = vmalloc(PAGE_SIZE);

    if ( !p )
    {
        pr_warn("PG-T error case %s: no memory\n", name);
        return;
    }
    idt.limit = 256 * 16 - 1;
    idt.base = (unsigned long)p + PAGE_SIZE;
    local_irq_disable();
    pr_warn("PG-T note case %s: triple fault of vCPU%u, IDT at %px\n", name,
            smp_processor_id(), (void *)idt.base);
    asm volatile ( "lidt %0\n\tdivl %%ecx"
                   :: "m" (idt), "a" (1), "d" (0), "c" (0) : "memory" );
}

/* ---- concurrent cases ---- */

struct worker {
    struct gset s;
    struct tally t;
    int rc;
    struct completion done;
    atomic_t *go;
    unsigned int n;
    unsigned int step;      /* entries per hypercall */
    bool map;               /* maps its set, one entry per hypercall */
};

/*
 * dN: every vCPU unmaps its own set at the same time, in one hypercall.
 * sN: the same, but every vCPU except the first issues one hypercall per
 * entry, so that its one-entry batches begin and end while the first
 * vCPU's batches of 32 are open; the first unmaps 4N entries in one
 * hypercall, so that it is still inside its batches while the others go
 * through their N hypercalls.
 */
static int unmapper(void *arg)
{
    struct worker *w = arg;
    unsigned int i;

    w->rc = 0;
    atomic_dec(w->go);
    while ( atomic_read(w->go) > 0 )
        cpu_relax();
    for ( i = 0; i < w->n && !w->rc; i += w->step )
        w->rc = unmap_range(&w->s, i, min(w->step, w->n - i), &w->t);
    if ( !w->rc )
        w->rc = check_unmapped(&w->s, 0, w->n, &w->t);
    complete(&w->done);
    return 0;
}

/*
 * mN: a concurrent mapper.  The first vCPU unmaps 4N entries in one
 * hypercall, emptying IOMMU page tables as its batches go (its gfns are
 * contiguous: every 2M region they cover whole loses its table); every
 * other vCPU meanwhile maps N new grants, one per hypercall, reads each
 * by CPU as soon as it is mapped, reads them by DMA once all are, then
 * unmaps them.  The series flushes a removal that unlinked a table before
 * dropping the p2m lock, so no mapping is installed while the IOMMU may
 * still hold the cleared entry: the oracle reports one that is, wherever
 * it lands in the domain (it treats a table's region as the whole domain,
 * as the drivers' domain-wide flushes do).  QEMU's IOMMUs cache no
 * non-leaf entries, so the mapper's DMA passes either way: only the
 * oracle can catch a late flush here, and only when a map falls inside
 * the window it leaves, which nothing forces.
 */
static int mapper(void *arg)
{
    struct worker *w = arg;
    struct gset *s = &w->s;
    unsigned int i;

    w->rc = 0;
    atomic_dec(w->go);
    while ( atomic_read(w->go) > 0 )
        cpu_relax();
    for ( i = 0; i < w->n && !w->rc; i++ )
    {
        w->rc = map_range(s, i, 1);
        if ( !w->rc && READ_ONCE(*mva(s, i)) != old_val(s, i) )
        {
            pr_warn("PG-T error tag=%u i=%u: newly mapped gfn reads %#llx\n",
                    s->tag, i, READ_ONCE(*mva(s, i)));
            w->t.bad++;
        }
    }
    if ( !w->rc )
        w->rc = dma_pass(s, 0, w->n, true, &w->t);
    if ( !w->rc )
        w->rc = unmap_range(s, 0, w->n, &w->t);
    if ( !w->rc )
        w->rc = check_unmapped(s, 0, w->n, &w->t);
    complete(&w->done);
    return 0;
}

/*
 * kN: as dN, with the gfns of kept_gfns(): each vCPU unmaps its N frames
 * (N even) while their regions' spacers stay mapped, so no IOMMU page
 * table is unlinked and the density rule splits every batch's gather
 * into flushes of one region's two frames.  The spacers are unmapped
 * and checked once every vCPU's frames were.  A "PG-T kept" line before
 * the case's result counts the regions wanted (N / 2 per online vCPU)
 * and those placed as designed (kept_placed()).
 */
static void case_concurrent(const char *name, unsigned int n,
                            unsigned int step, bool map, bool kept)
{
    unsigned int cpu, nw = 0, i;
    struct worker *w = kcalloc(nr_cpu_ids, sizeof(*w), GFP_KERNEL);
    struct task_struct **tasks = kcalloc(nr_cpu_ids, sizeof(*tasks),
                                         GFP_KERNEL);
    struct tally t = {};
    atomic_t go;
    unsigned int total = 0, placed = 0;
    int rc = 0;

    if ( !w || !tasks )
    {
        kfree(w);
        kfree(tasks);
        return report(name, n, -ENOMEM, 0, &t);
    }
    atomic_set(&go, num_online_cpus());
    for_each_online_cpu ( cpu )
    {
        struct worker *x = &w[nw];

        x->n = (nw || step == n) ? n : 4 * n;
        x->step = nw ? step : x->n;
        x->map = nw && map;
        x->go = &go;
        init_completion(&x->done);
        if ( x->map )
            rc = gset_grant(&x->s, x->n, next_tag++, false);
        else if ( kept )    /* frames [0, n), spacers [n, 3n / 2) */
            rc = gset_grant(&x->s, n / 2 * 3, next_tag++, true) ?:
                 map_range(&x->s, 0, x->s.n);
        else
            rc = gset_alloc(&x->s, x->n, next_tag++);
        if ( !rc && !x->map )
            rc = warm(&x->s, &x->t);
        if ( rc )
            break;
        total += x->s.n;
        nw++;
    }
    if ( rc )
        goto out;
    /* Create them all before waking any: a woken one spins on go. */
    i = 0;
    for_each_online_cpu ( cpu )
    {
        tasks[i] = kthread_create(w[i].map ? mapper : unmapper, &w[i],
                                  "gntt/%u", cpu);
        if ( IS_ERR(tasks[i]) )
        {
            rc = PTR_ERR(tasks[i]);
            break;
        }
        kthread_bind(tasks[i], cpu);
        i++;
    }
    if ( rc )
    {
        while ( i-- )       /* never woken: they exit without running */
            kthread_stop(tasks[i]);
        nw = 0;
        goto out;
    }
    for ( i = 0; i < nw; i++ )
        wake_up_process(tasks[i]);
    for ( i = 0; i < nw; i++ )
    {
        wait_for_completion(&w[i].done);
        t.pages += w[i].t.pages;
        t.dma_pages += w[i].t.dma_pages;
        t.stale_dma += w[i].t.stale_dma;
        t.stale_cpu += w[i].t.stale_cpu;
        t.bad += w[i].t.bad;
        if ( w[i].rc && !rc )
            rc = w[i].rc;
    }
    for ( i = 0; kept && i < nw; i++ )
        placed += kept_placed(&w[i].s, n / 2);
    for ( i = 0; kept && !rc && i < nw; i++ )
    {
        rc = unmap_range(&w[i].s, n, w[i].s.n - n, &t);
        if ( !rc )
            rc = check_unmapped(&w[i].s, n, w[i].s.n, &t);
    }
 out:
    pr_warn("PG-T note case %s: %u vCPUs %s at once\n", name, nw,
            map ? "unmapping and mapping" : "unmapping");
    if ( kept )
        pr_warn("PG-T kept case=%s wanted=%u placed=%u\n", name,
                num_online_cpus() * (n / 2), placed);
    report(name, total, rc, 0, &t);
    for ( i = 0; i < nr_cpu_ids && (w[i].s.n || i < nw); i++ )
        gset_free(&w[i].s);
    kfree(w);
    kfree(tasks);
}

/*
 * pN: every vCPU but the last unmaps its own N entries at the same time;
 * the last vCPU is the granter of all of them.  Before the unmaps it reads
 * every old gfn (so its TLB holds the translations), then, going round the
 * sets, reads each set's next old gfn until Xen releases that grant, then
 * takes it back and reads the old gfn once more.  Xen releases a grant
 * only after both flushes, so that read must not return the granter's
 * data.
 *
 * Under QEMU, a vCPU's TLB is emptied whenever it leaves guest mode (the
 * host CR3 is loaded): only a vCPU that stays in the guest can hold a
 * stale translation, which is why the granter reads with interrupts off
 * and why the unmapping vCPUs' own reads after their hypercall (in
 * check_unmapped()) cannot see one.
 */
#define MAX_RACE 8

struct racer {
    unsigned int nsets;
    struct gset s[MAX_RACE];
    struct tally t, ut[MAX_RACE];
    unsigned long pre_hole, pre_data;   /* reads before each release */
    int urc[MAX_RACE];
    atomic_t ready;
    unsigned int late;  /* not released while interrupts were off */
    struct completion done, udone[MAX_RACE];
};

struct race_arg {
    struct racer *r;
    unsigned int k;
};

static int race_unmapper(void *arg)
{
    struct race_arg *a = arg;
    struct racer *r = a->r;

    while ( !atomic_read(&r->ready) )
        cpu_relax();
    r->urc[a->k] = unmap_range(&r->s[a->k], 0, r->s[a->k].n, &r->ut[a->k]);
    complete(&r->udone[a->k]);
    return 0;
}

/*
 * One round over the sets: end each set's next grant if Xen has released
 * it, and read it right after.  Returns how many were ended.  With pre,
 * the reads of grants not released yet are counted too.
 */
static unsigned int release_round(struct racer *r, unsigned int next[],
                                  bool pre)
{
    unsigned int k, ended = 0;

    for ( k = 0; k < r->nsets; k++ )
    {
        struct gset *s = &r->s[k];
        unsigned int i = next[k];

        if ( i == s->n )
            continue;
        if ( !gnttab_try_end_foreign_access(s->ref[i]) )
        {
            /*
             * Not released yet: keep the translation in this vCPU's TLB
             * (any exit to Xen empties it under QEMU).  Until the
             * release, reading the granter's data here is allowed.
             */
            if ( !pre )
                continue;
            if ( READ_ONCE(*mva(s, i)) == old_val(s, i) )
                r->pre_data++;
            else
                r->pre_hole++;
            continue;
        }
        s->ended[i] = true;
        if ( READ_ONCE(*mva(s, i)) == old_val(s, i) )
            r->t.stale_race++;
        next[k]++;
        ended++;
    }

    return ended;
}

static int granter(void *arg)
{
    struct racer *r = arg;
    unsigned int i, k, left = 0, next[MAX_RACE] = {};
    unsigned long flags, rounds = 0, j0;
    struct vcpu_set_singleshot_timer now = { .timeout_abs_ns = 1 };
    unsigned int vcpu = xen_vcpu_nr(smp_processor_id());
    ktime_t t0;

    for ( k = 0; k < r->nsets; k++ )
        left += r->s[k].n;
    local_irq_save(flags);
    /*
     * Under QEMU every exit to Xen empties this vCPU's TLB, so nothing
     * between the reads that fill it and the releases may exit: no timer
     * (Linux's clock event is Xen's single-shot timer, which would exit
     * to deliver its event even with interrupts off; it is re-armed to
     * fire at once after the loop), no hypercall, and no clock read
     * (RDTSC is intercepted: no invariant TSC) but every 2^22 rounds.
     * The bound reads jiffies, which the other vCPUs' ticks move.
     */
    HYPERVISOR_vcpu_op(VCPUOP_stop_singleshot_timer, vcpu, NULL);
    t0 = ktime_get();
    j0 = jiffies;
    for ( k = 0; k < r->nsets; k++ )
        for ( i = 0; i < r->s[k].n; i++ )
            (void)READ_ONCE(*mva(&r->s[k], i));
    atomic_set(&r->ready, 1);
    while ( left )
    {
        left -= release_round(r, next, true);
        if ( time_after(READ_ONCE(jiffies), j0 + 20 * HZ) ||
             (!(++rounds & 0x3fffff) &&
              ktime_ms_delta(ktime_get(), t0) > 20000) )
            break;
    }
    HYPERVISOR_vcpu_op(VCPUOP_set_singleshot_timer, vcpu, &now);
    local_irq_restore(flags);
    /*
     * Interrupts stay off for at most 20 s (Linux's RCU stall warning
     * comes at 21 s).  What is left is waited for with them on, for up
     * to 5 minutes, and read at its release like the rest; this vCPU's
     * exits empty its TLB meanwhile, so those reads can miss a stale
     * translation, never invent one.  Only a grant never released is an
     * error.
     */
    r->late = left;
    t0 = ktime_get();
    while ( left && ktime_ms_delta(ktime_get(), t0) < 300000 )
    {
        left -= release_round(r, next, false);
        cond_resched();
    }
    if ( left )
    {
        pr_warn("PG-T error race: %u grants not released within 5 min\n",
                left);
        r->t.bad++;
    }
    complete(&r->done);
    return 0;
}

static void case_race(const char *name, unsigned int n)
{
    unsigned int cpu, k, nu = 0, gcpu = nr_cpu_ids;
    struct task_struct *task[MAX_RACE + 1];
    struct race_arg args[MAX_RACE];
    struct racer *r = kzalloc(sizeof(*r), GFP_KERNEL);
    struct tally t = {};
    int rc = 0;

    if ( !r )
        return report(name, n, -ENOMEM, 0, &t);
    for_each_online_cpu ( cpu )
        gcpu = cpu;             /* the last online vCPU grants */
    if ( num_online_cpus() < 2 )
    {
        pr_warn("PG-T note case %s: needs 2 vCPUs\n", name);
        rc = -ENODEV;
        goto out;
    }
    init_completion(&r->done);
    for_each_online_cpu ( cpu )
    {
        if ( cpu == gcpu || nu == MAX_RACE )
            continue;
        init_completion(&r->udone[nu]);
        rc = gset_alloc(&r->s[nu], n, next_tag++);
        r->nsets = nu + 1;
        if ( !rc )
            rc = warm(&r->s[nu], &t);
        if ( rc )
            goto out;
        args[nu].r = r;
        args[nu].k = nu;
        task[nu] = kthread_create(race_unmapper, &args[nu], "gntt-u/%u", cpu);
        if ( IS_ERR(task[nu]) )
        {
            rc = PTR_ERR(task[nu]);
            goto stop;
        }
        kthread_bind(task[nu], cpu);
        nu++;
    }
    task[nu] = kthread_create(granter, r, "gntt-granter");
    if ( IS_ERR(task[nu]) )
    {
        rc = PTR_ERR(task[nu]);
        goto stop;
    }
    kthread_bind(task[nu], gcpu);
    for ( k = 0; k <= nu; k++ )
        wake_up_process(task[k]);
    for ( k = 0; k < nu; k++ )
    {
        wait_for_completion(&r->udone[k]);
        t.bad += r->ut[k].bad;
        if ( r->urc[k] && !rc )
            rc = r->urc[k];
    }
    wait_for_completion(&r->done);
    t.bad += r->t.bad;
    t.stale_race = r->t.stale_race;
    /* The granter took the grants back; check from this vCPU too. */
    for ( k = 0; !rc && k < nu; k++ )
        rc = check_unmapped(&r->s[k], 0, n, &t);
    pr_warn("PG-T note case %s: %u vCPUs unmapping, vCPU%u granting; reads "
            "before the releases: %lu data, %lu hole; released after 20 s: "
            "%u\n", name, nu, gcpu, r->pre_data, r->pre_hole, r->late);
    goto out;

 stop:
    while ( nu-- )              /* never woken: they exit without running */
        kthread_stop(task[nu]);
 out:
    report(name, n * (r->nsets ? r->nsets : 1), rc, 0, &t);
    for ( k = 0; k < r->nsets; k++ )
        gset_free(&r->s[k]);
    kfree(r);
}

/* ---- set-up ---- */

static int edu_setup(void)
{
    int rc;

    edu_pdev = pci_get_device(EDU_VENDOR, EDU_DEVICE, NULL);
    if ( !edu_pdev )
        return -ENODEV;
    rc = pci_enable_device(edu_pdev);
    if ( rc )
        return rc;
    pci_set_master(edu_pdev);
    edu = pci_iomap(edu_pdev, 0, 0);
    if ( !edu )
        return -ENOMEM;
    if ( (readl(edu) & 0xff) != 0xed )
        return -ENODEV;
    bounce = alloc_page(GFP_KERNEL);
    result = alloc_page(GFP_KERNEL);
    if ( !bounce || !result )
        return -ENOMEM;
    if ( (page_to_phys(bounce) | page_to_phys(result)) >> 48 )
        return -ERANGE;
    return edu_wait();
}

static void edu_teardown(void)
{
    if ( bounce )
        __free_page(bounce);
    if ( result )
        __free_page(result);
    if ( edu )
        pci_iounmap(edu_pdev, edu);
    if ( edu_pdev )
    {
        pci_clear_master(edu_pdev);
        pci_disable_device(edu_pdev);
        pci_dev_put(edu_pdev);
    }
}

static int run_case(const char *c)
{
    unsigned int n = 0;

    if ( !strcmp(c, "tf") )
    {
        case_triple_fault(c);
        return 0;
    }
    if ( c[0] && c[1] && kstrtouint(c + 1, 10, &n) )
        return -EINVAL;
    if ( (c[0] != 'b' && c[0] != 'e' && (!n || n > MAX_N)) ||
         ((c[0] == 'b' || c[0] == 'e') && c[1]) ||
         (c[0] == 'k' && (n % 2 || n > 512)) )
        return -EINVAL;
    switch ( c[0] )
    {
    case 'c': case_count(c, n); break;
    case 'a': case_efault(c, n); break;
    case 'b': case_bad(c); break;
    case 'd': case_concurrent(c, n, n, false, false); break;
    case 's': case_concurrent(c, n, 1, false, false); break;
    case 'm': case_concurrent(c, n, 1, true, false); break;
    case 'k': case_concurrent(c, n, n, false, true); break;
    case 'p': case_race(c, n); break;
    case 'e': case_replace(c); break;
    default: return -EINVAL;
    }
    return 0;
}

static int __init gntt_init(void)
{
    char *list, *p, *c;
    int rc = 0;

    if ( !xen_initial_domain() || !xen_feature(XENFEAT_auto_translated_physmap) )
    {
        pr_warn("PG-T error: not a translated (PVH) dom0\n");
        return -ENODEV;
    }
    if ( dma > 32 )
        return -EINVAL;
    if ( dma )
    {
        rc = edu_setup();
        if ( rc )
        {
            pr_warn("PG-T error: no usable edu device (%d)\n", rc);
            edu_teardown();
            return rc;
        }
    }
    list = kstrdup(cases, GFP_KERNEL);
    if ( !list )
        return -ENOMEM;
    oracle_stats();
    for ( p = list; (c = strsep(&p, ".")) != NULL; )
    {
        if ( !*c )
            continue;
        if ( run_case(c) )
        {
            pr_warn("PG-T error: bad case '%s'\n", c);
            total_fail++;
        }
    }
    kfree(list);
    pr_warn("PG-T-END pages=%lu dma_pages=%lu stale_dma=%lu stale_cpu=%lu "
            "failed=%lu dma=%u vcpus=%u leaked=%lu\n", total_pages,
            total_dma_pages, total_stale_dma,
            total_stale_cpu, total_fail, edu ? dma : 0, num_online_cpus(),
            leaked_granter_pages);
    edu_teardown();
    return 0;
}

static void __exit gntt_exit(void)
{
}

module_init(gntt_init);
module_exit(gntt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Grant unmap ordering torture for a PVH dom0");
