/*
 * Checks of the IOTLB gather of the IOMMU and x86/HVM patches (gather.h
 * and record.h, compiled from the patches' own code) against models of
 * what VT-d and AMD-Vi invalidate for each flush: the smallest naturally
 * aligned block covering the range (the rounding of the VT-d and AMD-Vi
 * patches, ../vtd-psi/psi.h), which VT-d turns into a domain-selective
 * flush beyond the unit's MAMV; max_flush_order as the vendors state it
 * (VT-d: MAMV 9 or 18, QEMU's; AMD-Vi: any order, 63 - PAGE_SHIFT).
 *
 * Batches of 32 single-page removals (contiguous, clustered in 1 or 8 MiB,
 * scattered over 4 GiB, and one removal in 16 freeing IOMMU page tables,
 * i.e. asking for IOMMU_FLUSHF_all), each made as
 * replace_grant_p2m_mapping() makes it: iommu_defer_flushes(),
 * p2m_remove_page() (a stub requesting the removal's flush through
 * iommu_iotlb_flush(), whose deferral is record.h), iommu_end_deferral()
 * into the vCPU's gather; the gather flushed at the batch's end with
 * iommu_flush_gathered(), as gnttab_flush_tlb() does.  Checked for every
 * batch:
 * - every removal is covered by a flush issued after it, with its range
 *   and flags; one asking for IOMMU_FLUSHF_all is flushed before the next
 *   removal (under the p2m lock);
 * - no domain-wide invalidation unless a removal asked for one;
 * - the density rule: each flush invalidates at most max(2^9, 64 k)
 *   pages, k the removals it is the first to cover;
 * - never more flushes than removals (base's count), and no removal
 *   costs more than one: in particular one asking for IOMMU_FLUSHF_all
 *   that meets a gather the density rule rejects joins it and is flushed
 *   with it, once (v4 flushed the gather first, then the removal); one
 *   flush if all removals fall into one naturally aligned 2M block; at
 *   most two for contiguous frames;
 * - the gather is empty afterwards;
 * - no ASSERT() trips (the deferral's: armed once, ended for its domain);
 * - a removal issues at most RUNAWAY flushes: the patches' removal makes
 *   no loop, but a mutated one (or a flush that recursed) must not hang
 *   the test, so the test stops the batch there (longjmp() out of the
 *   removal) and counts it failed.
 * Then, directed: the removal asking for IOMMU_FLUSHF_all that meets a
 * gather the density rule rejects costs one flush, covering both (and,
 * the control, without IOMMU_FLUSHF_all the same removal flushes the
 * gather first); the deferral itself: between iommu_defer_flushes(d) and
 * iommu_end_deferral(d, g) only d's requests are recorded, another
 * domain's are issued, and the record lands in g; ending it for another
 * domain trips its ASSERT(); with the flag set directly
 * (XENMEM_add_to_physmap) all are recorded; iommu_flush_gathered() with
 * the flag set trips its ASSERT() (it would record the gather and drop
 * it); and a failed flush trips the ASSERT() of iommu_flush_gathered()
 * unless the domain is the hardware domain or shutting down.
 * Prints, per kind of batch, what the gather costs: invalidations per
 * batch and pages invalidated per page unmapped (base: 32 and 1).
 *
 * Could wrongly pass if gather.h, record.h or psi.h differ from the
 * patches (check-sync.sh compares them), if the models above differ from
 * the drivers' code, or if a removal requests its flush otherwise than
 * the stub: one request of one page (a 4K removal; the record merges
 * several requests of one removal, which the deferral test checks).
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define BITS_PER_LONG 64
#define PAGE_SHIFT 12
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))

#define IOMMU_FLUSHF_added    (1u << 0)
#define IOMMU_FLUSHF_modified (1u << 1)
#define IOMMU_FLUSHF_all      (1u << 2)

#define STR_(x) #x
#define STR(x) STR_(x)

static unsigned int flsl(unsigned long x)
{
    return x ? BITS_PER_LONG - __builtin_clzl(x) : 0;
}

typedef struct { unsigned long dfn; } dfn_t;
#define dfn_x(d) ((d).dfn)
#define _dfn(x) ((dfn_t){ (x) })
typedef struct { unsigned long gfn; } gfn_t;
#define gfn_x(g) ((g).gfn)
#define _gfn(x) ((gfn_t){ (x) })
typedef struct { unsigned long mfn; } mfn_t;
#define _mfn(x) ((mfn_t){ (x) })
#define PAGE_ORDER_4K 0

struct iommu_ops { unsigned int max_flush_order; };
static struct iommu_ops ops;
static struct domain_iommu { const struct iommu_ops *platform_ops; } hd = {
    &ops };
#define dom_iommu(d) ((void)(d), &hd)

struct domain { bool hwdom, is_shutting_down; };
#define is_hardware_domain(d) ((d)->hwdom)
#define domain_shutting_down(d) ((d)->is_shutting_down)

struct iommu_flush {
    unsigned long first, last, pages;
    unsigned int flags;
};

/* The unmapping vCPU, and its gather. */
static struct vcpu {
    struct { struct { struct iommu_flush gnttab_iotlb; } hvm; } arch;
} vcpu0;
#define current (&vcpu0)

static unsigned int assert_failed;
#define ASSERT(p) do { if ( !(p) ) ++assert_failed; } while ( 0 )

#define this_cpu(v) (v)
static bool iommu_dont_flush_iotlb;
static struct iommu_flush skipped_flush;
static const struct domain *skipped_domain;

#include "../vtd-psi/psi.h"

static unsigned int mamv;               /* VT-d's MAMV; 0: AMD-Vi */

/* The removals of the current batch. */
#define BATCH 32
static struct removal { unsigned long page; unsigned int flags; bool done; }
    pending[BATCH];
static unsigned int npending;

static struct cost { unsigned long flushes, wide, pages; } batch;
static unsigned int removal_flags;      /* what p2m_remove_page() asks */
static bool dense = true;
static int flush_rc;

static unsigned long passed, failed;

/* A removal's flushes, and where the test resumes when they run away. */
#define RUNAWAY 64
static unsigned int removal_flushes;
static bool in_removal;
static jmp_buf runaway;

static void fail(const char *kind, unsigned long n, const char *what)
{
    if ( failed++ < 10 )
        printf("FAIL %s batch %lu: %s\n", kind, n, what);
}

static void flush_add(struct iommu_flush *f, unsigned long first,
                      unsigned long last, unsigned long pages,
                      unsigned int flags);

static int iommu_iotlb_flush(struct domain *d, dfn_t dfn,
                             unsigned long page_count,
                             unsigned int flush_flags)
{
    unsigned long first = dfn_x(dfn), last = first + page_count - 1, k = 0;
    unsigned int i, order;

    if ( !page_count || !flush_flags )          /* as iommu_iotlb_flush() */
        return 0;

#include "record.h"

    ++batch.flushes;
    if ( in_removal && ++removal_flushes > RUNAWAY )
        longjmp(runaway, 1);
    order = psi_round(&dfn, page_count);
    if ( (flush_flags & IOMMU_FLUSHF_all) || (mamv && order > mamv) )
        ++batch.wide;
    else
        batch.pages += 1UL << order;
    for ( i = 0; i < npending; ++i )
        if ( !pending[i].done &&
             ((flush_flags & IOMMU_FLUSHF_all) ||
              (pending[i].page >= first && pending[i].page <= last &&
               !(pending[i].flags & ~flush_flags))) )
        {
            pending[i].done = true;
            ++k;
        }
    if ( !(flush_flags & IOMMU_FLUSHF_all) &&
         (1UL << order) > max(1UL << 9, 64 * k) )
        dense = false;

    return flush_rc;
}

/* A 4K removal: its IOTLB flush, with the flags the test gives it. */
static int p2m_remove_page(struct domain *d, gfn_t gfn, mfn_t mfn,
                           unsigned int page_order)
{
    (void)mfn;

    return iommu_iotlb_flush(d, _dfn(gfn_x(gfn)), 1UL << page_order,
                             removal_flags);
}

#include "gather.h"

/*
 * One removal as replace_grant_p2m_mapping() makes it; false if its
 * flushes ran away (more than RUNAWAY).
 */
static bool remove_one(struct domain *d, unsigned long page,
                       unsigned int flags)
{
    removal_flags = flags;
    removal_flushes = 0;
    if ( setjmp(runaway) )
    {
        in_removal = false;
        iommu_dont_flush_iotlb = false;
        skipped_domain = NULL;
        return false;
    }
    in_removal = true;
    remove_grant_p2m(d, page, _mfn(page));
    in_removal = false;

    return true;
}

static unsigned long rnd(unsigned long n)
{
    return ((unsigned long)random() << 31 ^ (unsigned long)random()) % n;
}

enum kind { CONTIGUOUS, CLUSTER1, CLUSTERED, SCATTERED, TABLES, NKINDS };
static const char *const names[] = {
    "contiguous", "clustered, 1 MiB", "clustered, 8 MiB", "scattered, 4 GiB",
    "ditto, 1/16 tables",
};

static void run(enum kind kind, unsigned long n, struct cost *sum)
{
    static struct domain dom0 = { true, false };
    struct iommu_flush *gather = &current->arch.hvm.gnttab_iotlb;
    unsigned long base = rnd(1UL << 20), page = 0;
    bool all = false, one_block = true, late = false, costly = false;
    unsigned int i, asserts = assert_failed;

    batch = (struct cost){ 0 };
    dense = true;
    npending = 0;
    *gather = (struct iommu_flush){ 0 };
    for ( i = 0; i < BATCH; ++i )
    {
        unsigned int flags = IOMMU_FLUSHF_modified;

        switch ( kind )
        {
        case CONTIGUOUS: page = base + i; break;
        case CLUSTER1: page = (base & ~255UL) + rnd(256); break;
        case CLUSTERED: page = (base & ~2047UL) + rnd(2048); break;
        case SCATTERED: page = rnd(1UL << 20); break;
        case TABLES:
            page = rnd(1UL << 20);
            if ( !rnd(16) )
                flags |= IOMMU_FLUSHF_all;
            break;
        default: break;
        }
        if ( !rnd(8) )
            flags |= IOMMU_FLUSHF_added;
        all |= flags & IOMMU_FLUSHF_all;
        if ( i && (page >> 9) != (pending[0].page >> 9) )
            one_block = false;

        pending[npending++] = (struct removal){ page, flags, false };
        if ( !remove_one(&dom0, page, flags) )
        {
            fail(names[kind], n, "a removal's flushes ran away "
                 "(more than " STR(RUNAWAY) " for one removal)");
            return;
        }
        if ( (flags & IOMMU_FLUSHF_all) && !pending[npending - 1].done )
            late = true;
        if ( removal_flushes > 1 )
            costly = true;
    }
    iommu_flush_gathered(&dom0, gather);

    for ( i = 0; i < npending; ++i )
        if ( !pending[i].done )
        {
            fail(names[kind], n, "a removal not covered by a flush");
            break;
        }
    if ( late )
        fail(names[kind], n, "IOMMU_FLUSHF_all left in the gather");
    if ( !all && batch.wide )
        fail(names[kind], n, "a domain-wide invalidation");
    if ( !dense )
        fail(names[kind], n, "a flush beyond the density rule");
    if ( batch.flushes > BATCH )
        fail(names[kind], n, "more flushes than removals");
    if ( costly )
        fail(names[kind], n, "a removal cost more than one flush");
    if ( one_block && batch.flushes != 1 )
        fail(names[kind], n, "one 2M block but not one flush");
    if ( kind == CONTIGUOUS && batch.flushes > 2 )
        fail(names[kind], n, "contiguous frames but more than two flushes");
    if ( gather->flags )
        fail(names[kind], n, "the gather is not empty afterwards");
    if ( assert_failed != asserts )
        fail(names[kind], n, "an ASSERT() tripped");
    ++passed;

    sum->flushes += batch.flushes;
    sum->wide += batch.wide;
    sum->pages += batch.pages;
}

/*
 * A removal asking for IOMMU_FLUSHF_all which meets a gather the density
 * rule rejects: one flush, covering both.  The control: the same removal
 * without IOMMU_FLUSHF_all flushes the gather first (so the rule does
 * reject it).  One page at frame 0, the next at 2^19: a block of 2^20
 * pages for 2.
 */
static void all_meets_rejected(void)
{
    static struct domain dom0 = { true, false };
    struct iommu_flush *gather = &current->arch.hvm.gnttab_iotlb;
    static const unsigned int flags[] = {
        IOMMU_FLUSHF_modified | IOMMU_FLUSHF_all,   /* the case */
        IOMMU_FLUSHF_modified,                      /* the control */
    };
    unsigned int k, asserts = assert_failed;

    for ( k = 0; k < 2; ++k )
    {
        bool all = flags[k] & IOMMU_FLUSHF_all, ok;

        *gather = (struct iommu_flush){ 0 };
        batch = (struct cost){ 0 };
        npending = 0;
        pending[npending++] = (struct removal){ 0, IOMMU_FLUSHF_modified,
                                                false };
        ok = remove_one(&dom0, 0, IOMMU_FLUSHF_modified) &&
             !batch.flushes && gather->flags;
        pending[npending++] = (struct removal){ 1UL << 19, flags[k], false };
        ok = ok && remove_one(&dom0, 1UL << 19, flags[k]) &&
             removal_flushes == 1;
        if ( all )                  /* one flush: the merged gather, wide */
            ok = ok && batch.wide == 1 && pending[0].done &&
                 pending[1].done && !gather->flags;
        else                        /* the gather flushed, the removal kept */
            ok = ok && pending[0].done && !pending[1].done &&
                 gather->first == 1UL << 19 && gather->last == 1UL << 19;
        iommu_flush_gathered(&dom0, gather);
        ok = ok && assert_failed == asserts;
        if ( ok )
            ++passed;
        else
            fail("directed", k,
                 all ? "IOMMU_FLUSHF_all meeting a rejected gather: not "
                       "one flush covering both"
                     : "the control: a removal the density rule rejects "
                       "does not flush the gather first");
    }
}

/* The deferral: whose requests are recorded, whose issued. */
static void deferral(void)
{
    static struct domain dom0 = { true, false }, domu = { false, false };
    struct iommu_flush r = { 0 };
    unsigned int asserts = assert_failed;
    bool ok;

    npending = 0;
    batch = (struct cost){ 0 };
    iommu_defer_flushes(&dom0);
    ok = !iommu_iotlb_flush(&domu, _dfn(7), 1, IOMMU_FLUSHF_modified) &&
         batch.flushes == 1;                    /* another domain's: issued */
    iommu_iotlb_flush(&dom0, _dfn(5), 1, IOMMU_FLUSHF_modified);
    iommu_iotlb_flush(&dom0, _dfn(9), 2, IOMMU_FLUSHF_added);
    iommu_end_deferral(&dom0, &r);
    ok = ok && batch.flushes == 1 && r.first == 5 && r.last == 10 &&
         r.pages == 3 && r.flags == (IOMMU_FLUSHF_modified |
                                     IOMMU_FLUSHF_added) &&
         !iommu_dont_flush_iotlb && !skipped_domain &&
         assert_failed == asserts;
    if ( ok )
        ++passed;
    else
        fail("deferral", 0, "not only the armed domain's flushes recorded, "
             "into the caller's gather");

    /* Ended for another domain than the armed one: the ASSERT() trips. */
    r = (struct iommu_flush){ 0 };
    iommu_defer_flushes(&dom0);
    iommu_end_deferral(&domu, &r);
    if ( assert_failed == asserts + 1 )
        ++passed;
    else
        fail("deferral", 0, "ended for another domain, not asserted on");
    assert_failed = asserts;

    /* Set directly, as XENMEM_add_to_physmap does: everything skipped. */
    iommu_dont_flush_iotlb = true;
    iommu_iotlb_flush(&domu, _dfn(7), 1, IOMMU_FLUSHF_modified);
    iommu_dont_flush_iotlb = false;
    if ( batch.flushes == 1 )
        ++passed;
    else
        fail("deferral", 0, "a flush issued with the flag set directly");
}

int main(void)
{
    const unsigned long runs = 20000;
    static const unsigned int mamvs[] = { 9, 18, 0 };
    struct domain domu = { false, false };
    struct iommu_flush f;
    unsigned int m, k;

    srandom(1);
    printf("per batch of %u unmaps; base: %u invalidations of one page\n",
           BATCH, BATCH);
    for ( m = 0; m < sizeof(mamvs) / sizeof(mamvs[0]); ++m )
    {
        mamv = mamvs[m];
        ops.max_flush_order = mamv ?: BITS_PER_LONG - 1 - 12;
        if ( mamv )
            printf("VT-d, MAMV %u\n", mamv);
        else
            printf("AMD-Vi (any order)\n");
        printf("  %-18s %7s %5s %9s\n", "", "flushes", "wide", "pages/pg");
        for ( k = 0; k < NKINDS; ++k )
        {
            struct cost sum = { 0 };
            unsigned long n;

            for ( n = 0; n < runs; ++n )
                run(k, n, &sum);
            printf("  %-18s %7.2f %5.2f %9.2f\n", names[k],
                   (double)sum.flushes / runs, (double)sum.wide / runs,
                   (double)sum.pages / runs / BATCH);
        }
    }

    all_meets_rejected();
    deferral();

    /* A gather flushed inside a deferral trips the ASSERT(). */
    f = (struct iommu_flush){ 1, 1, 1, IOMMU_FLUSHF_modified };
    assert_failed = 0;
    iommu_dont_flush_iotlb = true;
    iommu_flush_gathered(&domu, &f);
    iommu_dont_flush_iotlb = false;
    if ( assert_failed != 1 )
        fail("deferral", 0, "a gather flushed inside a deferral not asserted on");
    else
        ++passed;

    /* A failed flush of a domain that keeps running trips the ASSERT(). */
    flush_rc = -5;
    f = (struct iommu_flush){ 1, 1, 1, IOMMU_FLUSHF_modified };
    assert_failed = 0;
    iommu_flush_gathered(&domu, &f);
    if ( assert_failed != 1 || f.flags )
        fail("error", 0, "a failed flush of a domU not asserted on");
    else
        ++passed;
    domu.is_shutting_down = true;                     /* domain_crash() */
    f.flags = IOMMU_FLUSHF_modified;
    assert_failed = 0;
    iommu_flush_gathered(&domu, &f);
    if ( assert_failed )
        fail("error", 0, "a failed flush of a crashed domU asserted on");
    else
        ++passed;

    printf("%lu passed, %lu failed\n", passed, failed);

    return failed != 0;
}
