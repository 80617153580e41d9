/*
 * Checks of the IOTLB flush record of patch 2 (IOMMU), compiled from the
 * patch's own code (record.h, kept in sync by check-sync.sh) with stubs for
 * the per-CPU variables, dfn_t, ASSERT() and the flush itself:
 * - iotlb_record_merge() keeps the union (lowest first, highest last) of
 *   the ranges and the OR of the flags, for all pairs of ranges in [0, 40);
 * - between iommu_iotlb_record_begin() and iommu_iotlb_flush_recorded(),
 *   over random request sequences (scattered and contiguous ranges, random
 *   flags, now and then a second domain): the recorded domain gets no flush
 *   until the end and then exactly one, covering every page it requested
 *   with every flag it requested; a request for the other domain is flushed
 *   right away, as requested; afterwards the flag is clear and the record
 *   empty; an error of the final flush is returned;
 * - iommu_iotlb_drop_recorded() flushes nothing and leaves the record empty;
 * - a range wrapping around is flushed at once, not merged;
 * - the ASSERT()s are live: beginning twice trips one.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))

struct domain { int id; };
typedef struct { unsigned long dfn; } dfn_t;
#define dfn_x(d) ((d).dfn)
#define _dfn(x) ((dfn_t){ (x) })

static unsigned int assert_failed;
#define ASSERT(p) do { if ( !(p) ) ++assert_failed; } while ( 0 )

/* As in iommu.c. */
struct iotlb_record {
    struct domain *d;
    unsigned long first, last;
    unsigned int flags;
};

/* One CPU's per-CPU variables. */
static bool per_cpu_iommu_dont_flush_iotlb;
static struct iotlb_record per_cpu_iotlb_record;
#define this_cpu(v) per_cpu_##v

/* The flushes issued, in order. */
#define MAXF 256
static struct flush {
    struct domain *d;
    unsigned long first, last;
    unsigned int flags;
} flushes[MAXF];
static unsigned int nflush;
static int flush_rc;

static int iotlb_flush(struct domain *d, dfn_t dfn, unsigned long page_count,
                       unsigned int flush_flags)
{
    if ( nflush < MAXF )
        flushes[nflush] = (struct flush){ d, dfn_x(dfn),
                                          dfn_x(dfn) + page_count - 1,
                                          flush_flags };
    ++nflush;

    return flush_rc;
}

#include "record.h"

/* The tail of iommu_iotlb_flush(), which the patch changes to this. */
static int request(struct domain *d, unsigned long dfn,
                   unsigned long page_count, unsigned int flush_flags)
{
    if ( this_cpu(iommu_dont_flush_iotlb) )
        return iotlb_record_add(d, _dfn(dfn), page_count, flush_flags);

    return iotlb_flush(d, _dfn(dfn), page_count, flush_flags);
}

static unsigned long passed, failed;

static void result(bool ok, const char *what, unsigned long a,
                   unsigned long b, unsigned long c, unsigned long d)
{
    if ( ok )
        ++passed;
    else if ( failed++ < 10 )
        printf("FAIL %s: %lu %lu %lu %lu\n", what, a, b, c, d);
}

#define N 40

static void pairs(void)
{
    unsigned long rf, rl, f, l;

    for ( rf = 0; rf < N; ++rf )
        for ( rl = rf; rl < N; ++rl )
            for ( f = 0; f < N; ++f )
                for ( l = f; l < N; ++l )
                {
                    unsigned int fl = (rf * 7 + l) & 3, nf = (f + rl) & 3;
                    struct iotlb_record rec = {
                        .first = rf, .last = rl, .flags = fl };

                    iotlb_record_merge(&rec, f, l, nf);
                    result(rec.first == min(rf, f) && rec.last == max(rl, l) &&
                           rec.flags == (fl | nf), "merge", rf, rl, f, l);
                }
}

#define SPACE 4096

static void sequences(void)
{
    static struct domain dom[2] = { { 0 }, { 1 } };
    unsigned int seed = 1, s, i;

    for ( s = 0; s < 20000; ++s )
    {
        unsigned char want[SPACE] = {};
        unsigned int nreq = 1 + s % 40, want_flags = 0, other = 0, early = 0;
        unsigned int other_ok = 0, j;
        struct domain *rd = NULL;
        unsigned long p;
        bool covered = true;
        int rc;

        nflush = 0;
        flush_rc = (s % 7 == 3) ? -5 : 0;
        assert_failed = 0;
        iommu_iotlb_record_begin();

        for ( i = 0; i < nreq; ++i )
        {
            unsigned long f, n;
            unsigned int fl;
            struct domain *d;

            seed = seed * 1103515245 + 12345;
            /* Scattered over 4096 pages, or within 64. */
            f = (seed >> 8) % (s & 1 ? SPACE - 8 : 64);
            n = 1 + (seed >> 20) % 3;
            fl = 1 + ((seed >> 24) % 3);
            d = &dom[(seed >> 28) % 8 == 0];
            if ( !rd )
                rd = d;

            j = nflush;
            rc = request(d, f, n, fl);
            if ( d == rd )
            {
                memset(&want[f], 1, n);
                want_flags |= fl;
                /* Nothing is flushed while recording. */
                if ( nflush != j || rc )
                    ++early;
            }
            else
            {
                /* The other domain: flushed right away, as requested. */
                ++other;
                if ( nflush == j + 1 && flushes[j].d == d &&
                     flushes[j].first == f && flushes[j].last == f + n - 1 &&
                     flushes[j].flags == fl && rc == flush_rc )
                    ++other_ok;
            }
        }

        j = nflush;
        rc = iommu_iotlb_flush_recorded();

        result(!early, "no flush of the recorded domain before the end",
               s, early, 0, 0);
        result(other_ok == other, "other domain flushed at once",
               s, other, other_ok, 0);
        result(nflush == j + 1 && flushes[j].d == rd &&
               flushes[j].flags == want_flags, "one final flush, all flags",
               s, nflush - j, flushes[j].flags, want_flags);
        for ( p = 0; p < SPACE; ++p )
            if ( want[p] && (p < flushes[j].first || p > flushes[j].last) )
                covered = false;
        result(covered, "every requested page covered", s,
               flushes[j].first, flushes[j].last, 0);
        result(rc == flush_rc, "final flush's error returned", s,
               (unsigned long)-rc, 0, 0);
        result(!this_cpu(iommu_dont_flush_iotlb) &&
               this_cpu(iotlb_record).d == NULL && !assert_failed,
               "flag clear, record empty", s, assert_failed, 0, 0);
    }
}

static void drop(void)
{
    static struct domain d = { 0 };

    nflush = 0;
    assert_failed = 0;
    iommu_iotlb_record_begin();
    request(&d, 10, 1, 1);
    request(&d, 900, 2, 2);
    iommu_iotlb_drop_recorded();
    result(nflush == 0 && !this_cpu(iommu_dont_flush_iotlb) &&
           this_cpu(iotlb_record).d == NULL, "drop flushes nothing",
           nflush, 0, 0, 0);

    /* Nothing recorded: nothing flushed, no error. */
    iommu_iotlb_record_begin();
    result(iommu_iotlb_flush_recorded() == 0 && nflush == 0 &&
           !assert_failed, "empty record", nflush, assert_failed, 0, 0);

    /* A range wrapping around is flushed at once, the record untouched. */
    iommu_iotlb_record_begin();
    request(&d, 100, 1, 1);
    request(&d, ~0UL - 1, 4, 2);
    result(nflush == 1 && flushes[0].first == ~0UL - 1 &&
           this_cpu(iotlb_record).first == 100 &&
           this_cpu(iotlb_record).last == 100, "wrapping range", nflush,
           0, 0, 0);
    result(iommu_iotlb_flush_recorded() == 0 && nflush == 2 &&
           flushes[1].first == 100 && flushes[1].last == 100 &&
           flushes[1].flags == 1, "wrapping range not merged", nflush,
           flushes[1].last, 0, 0);

    /* The ASSERT()s are live: a second begin without an end trips one. */
    iommu_iotlb_record_begin();
    iommu_iotlb_record_begin();
    result(assert_failed != 0, "nested begin asserts", 0, 0, 0, 0);
    iommu_iotlb_drop_recorded();
}

int main(void)
{
    pairs();
    sequences();
    drop();

    printf("%lu passed, %lu failed\n", passed, failed);

    return failed != 0;
}
