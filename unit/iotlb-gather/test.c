/*
 * Checks of the IOTLB gather of patches 2 and 3 (gather.h, compiled from
 * the patches' own code) against models of what VT-d and AMD-Vi issue for
 * each flush (VT-d: patch 1's rounding from ../vtd-psi/psi.h, then a
 * page-selective invalidation if the order is at most the unit's MAMV,
 * else a domain-selective one; AMD-Vi: amd_iommu_flush_iotlb_pages()'s
 * choice of one 4K, 2M or 1G invalidation, else all pages), with
 * iommu_max_flush_order as patch 3 sets it: VT-d's MAMV, 9 or 18 (QEMU's),
 * and 18 for AMD-Vi.
 *
 * Batches of 32 single-page removals (contiguous, clustered in 8 MiB,
 * scattered over 4 GiB, and one removal in 16 freeing IOMMU page tables,
 * i.e. asking for IOMMU_FLUSHF_all), each removal's skipped flush moved
 * into the gather as replace_grant_p2m_mapping() does, and the gather
 * flushed at the batch's end.  Checked for every batch:
 * - every removal is covered, by the end, by a flush issued after it,
 *   with its range and flags (IOMMU_FLUSHF_all if it freed tables);
 * - the bound: no flush that VT-d with that MAMV would make
 *   domain-selective, nor AMD-Vi an all-pages one, unless a removal asked
 *   for IOMMU_FLUSHF_all (as base does for it);
 * - never more flushes than removals (base's count), exactly one if all
 *   removals fall into one naturally aligned 2M block;
 * - the gather is empty afterwards; a failed flush trips the ASSERT()
 *   unless the domain is the hardware domain or shutting down, and so
 *   does a record holding another domain's request.
 * Prints, per kind of batch, what base and the gather cost: invalidations
 * per batch and pages invalidated per page unmapped.
 *
 * Could wrongly pass if gather.h or psi.h differ from the patches
 * (check-sync.sh compares them), or if the models above differ from the
 * drivers' code.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define BITS_PER_LONG 64
static unsigned int iommu_max_flush_order;
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))

#define IOMMU_FLUSHF_added    (1u << 0)
#define IOMMU_FLUSHF_modified (1u << 1)
#define IOMMU_FLUSHF_all      (1u << 2)

static unsigned int flsl(unsigned long x)
{
    return x ? BITS_PER_LONG - __builtin_clzl(x) : 0;
}

typedef struct { unsigned long dfn; } dfn_t;
#define dfn_x(d) ((d).dfn)
#define _dfn(x) ((dfn_t){ (x) })

#define SHUTDOWN_CODE_INVALID ~0u
struct domain { bool hwdom; unsigned int shutdown_code; };
#define is_hardware_domain(d) ((d)->hwdom)

struct iommu_flush {
    const struct domain *d;
    unsigned long first, last;
    unsigned int flags;
};

static unsigned int assert_failed;
#define ASSERT(p) do { if ( !(p) ) ++assert_failed; } while ( 0 )

#include "../vtd-psi/psi.h"

/* The removals of the current batch not yet covered by a flush. */
#define BATCH 32
static struct removal { unsigned long page; unsigned int flags; bool done; }
    pending[BATCH];
static unsigned int npending;

/* What the flushes of the current batch cost, per model. */
static struct cost {
    unsigned long flushes, dsi, pages;
    unsigned long amd_4k, amd_2m, amd_1g, amd_all;
} batch;
static int flush_rc;

static void vtd(unsigned long first, unsigned long count, unsigned int flags)
{
    dfn_t dfn = _dfn(first);
    unsigned int order;

    if ( flags & IOMMU_FLUSHF_all )
    {
        ++batch.dsi;
        return;
    }
    order = psi_round(&dfn, count);
    if ( order > iommu_max_flush_order )    /* the unit's MAMV */
        ++batch.dsi;
    else
        batch.pages += 1UL << order;
}

/* amd_iommu_flush_iotlb_pages() and its flush_count(). */
static unsigned long flush_count(unsigned long dfn, unsigned long count,
                                 unsigned int order)
{
    return ((dfn + count - 1) >> order) - (dfn >> order) + 1;
}

static void amd(unsigned long first, unsigned long count, unsigned int flags)
{
    if ( (flags & IOMMU_FLUSHF_all) || first + count < first )
        ++batch.amd_all;
    else if ( count == 1 )
        ++batch.amd_4k;
    else if ( flush_count(first, count, 9) == 1 )
        ++batch.amd_2m;
    else if ( flush_count(first, count, 18) == 1 )
        ++batch.amd_1g;
    else
        ++batch.amd_all;
}

static int iommu_iotlb_flush(struct domain *d, dfn_t dfn,
                             unsigned long page_count, unsigned int flags)
{
    unsigned long first = dfn_x(dfn), last = first + page_count - 1;
    unsigned int i;

    (void)d;
    if ( !page_count || !flags )                /* as iommu_iotlb_flush() */
        return 0;
    ++batch.flushes;
    vtd(first, page_count, flags);
    amd(first, page_count, flags);
    for ( i = 0; i < npending; ++i )
        if ( (flags & IOMMU_FLUSHF_all) ||
             (pending[i].page >= first && pending[i].page <= last &&
              !(pending[i].flags & ~flags)) )
            pending[i].done = true;

    return flush_rc;
}

#include "gather.h"

static unsigned long passed, failed;

static void fail(const char *kind, unsigned long n, const char *what)
{
    if ( failed++ < 10 )
        printf("FAIL %s batch %lu: %s\n", kind, n, what);
}

static unsigned long rnd(unsigned long n)
{
    return ((unsigned long)random() << 31 ^ (unsigned long)random()) % n;
}

enum kind { CONTIGUOUS, CLUSTERED, SCATTERED, TABLES, NKINDS };
static const char *const names[] = {
    "contiguous", "clustered, 8 MiB", "scattered, 4 GiB",
    "ditto, 1/16 tables",
};

static void run(enum kind kind, unsigned long n, struct cost *sum)
{
    static struct domain dom0 = { true, SHUTDOWN_CODE_INVALID };
    struct iommu_flush gather = { 0 }, skipped;
    unsigned long base = rnd(1UL << 20), page = 0;
    bool all = false, one_block = true;
    unsigned int i, asserts = assert_failed;

    batch = (struct cost){ 0 };
    npending = 0;
    for ( i = 0; i < BATCH; ++i )
    {
        unsigned int flags = IOMMU_FLUSHF_modified;

        switch ( kind )
        {
        case CONTIGUOUS: page = base + i; break;
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
        skipped = (struct iommu_flush){ &dom0, page, page, flags };
        gather_removal(&dom0, &gather, &skipped);
    }
    flush_iotlb(&dom0, &gather);

    for ( i = 0; i < npending; ++i )
        if ( !pending[i].done )
        {
            fail(names[kind], n, "a removal not covered by a flush");
            break;
        }
    if ( !all && (batch.dsi ||
                  (iommu_max_flush_order == 18 && batch.amd_all)) )
        fail(names[kind], n, "a domain-wide invalidation");
    if ( batch.flushes > BATCH )
        fail(names[kind], n, "more flushes than removals");
    if ( one_block && batch.flushes != 1 )
        fail(names[kind], n, "one 2M block but not one flush");
    if ( gather.flags )
        fail(names[kind], n, "the gather is not empty afterwards");
    if ( assert_failed != asserts )
        fail(names[kind], n, "an ASSERT() tripped");
    ++passed;

    sum->flushes += batch.flushes;
    sum->dsi += batch.dsi;
    sum->pages += batch.pages;
    sum->amd_4k += batch.amd_4k;
    sum->amd_2m += batch.amd_2m;
    sum->amd_1g += batch.amd_1g;
    sum->amd_all += batch.amd_all;
}

int main(void)
{
    const unsigned long runs = 20000;
    struct domain domu = { false, SHUTDOWN_CODE_INVALID };
    struct iommu_flush f;
    unsigned int k;

    srandom(1);
    printf("per batch of %u unmaps; base: %u invalidations of one page\n",
           BATCH, BATCH);
    for ( iommu_max_flush_order = 9; iommu_max_flush_order <= 18;
          iommu_max_flush_order += 9 )
    {
        printf("iommu_max_flush_order %u (VT-d MAMV %u%s)\n",
               iommu_max_flush_order, iommu_max_flush_order,
               iommu_max_flush_order == 18 ? ", AMD-Vi" : "");
        printf("  %-18s %7s %5s %9s", "", "flushes", "DSI", "pages/pg");
        if ( iommu_max_flush_order == 18 )
            printf(" %6s %5s %5s %5s", "AMD 4K", "2M", "1G", "all");
        printf("\n");
        for ( k = 0; k < NKINDS; ++k )
        {
            struct cost sum = { 0 };
            unsigned long n;

            for ( n = 0; n < runs; ++n )
                run(k, n, &sum);
            printf("  %-18s %7.2f %5.2f %9.2f", names[k],
                   (double)sum.flushes / runs, (double)sum.dsi / runs,
                   (double)sum.pages / runs / BATCH);
            if ( iommu_max_flush_order == 18 )
                printf(" %6.2f %5.2f %5.2f %5.2f",
                       (double)sum.amd_4k / runs, (double)sum.amd_2m / runs,
                       (double)sum.amd_1g / runs, (double)sum.amd_all / runs);
            printf("\n");
        }
    }

    /* A failed flush of a domain that keeps running trips the ASSERT(). */
    flush_rc = -5;
    f = (struct iommu_flush){ &domu, 1, 1, IOMMU_FLUSHF_modified };
    assert_failed = 0;
    flush_iotlb(&domu, &f);
    if ( assert_failed != 1 || f.flags )
        fail("error", 0, "a failed flush of a domU not asserted on");
    else
        ++passed;
    domu.shutdown_code = 3;                        /* SHUTDOWN_crash */
    f.flags = IOMMU_FLUSHF_modified;
    assert_failed = 0;
    flush_iotlb(&domu, &f);
    if ( assert_failed )
        fail("error", 0, "a failed flush of a crashed domU asserted on");
    else
        ++passed;

    /*
     * A record holding another domain's request is marked as such, and
     * moving it into a gather trips the ASSERT().
     */
    {
        static struct domain dom0 = { true, SHUTDOWN_CODE_INVALID };
        struct iommu_flush r = { 0 }, g = { 0 };

        iommu_flush_merge(&r, &dom0, _dfn(5), 1, IOMMU_FLUSHF_modified);
        iommu_flush_merge(&r, &domu, _dfn(6), 1, IOMMU_FLUSHF_modified);
        assert_failed = 0;
        gather_removal(&dom0, &g, &r);
        if ( r.d || assert_failed != 1 )
            fail("domain", 0, "another domain's request not caught");
        else
            ++passed;
    }

    printf("%lu passed, %lu failed\n", passed, failed);

    return failed != 0;
}
