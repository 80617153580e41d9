/*
 * Checks of the IOTLB flush record helpers (patch 2, IOMMU):
 * iotlb_record_merge() must keep the union (lowest first, highest last)
 * of the ranges and the OR of the flags; iotlb_record_merge_ok() must
 * merge overlapping or adjacent ranges always, and disjoint ones exactly
 * when the merged range lies within one naturally aligned block of 512
 * pages (the pairs are placed around such a block's boundary).
 * A model of the record (as in iotlb_record_add()) is also run over
 * request sequences: every requested page must be flushed, and never
 * with more flushes than requests.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))

struct domain;

struct iotlb_record {
    struct domain *d;
    unsigned long first, last;
    unsigned int flags;
    bool split;
    int err;
};

#include "record.h"

#define N 40
/* Frames rf..l are OFF + 0..N-1: straddling the 512-page boundary at 1024. */
#define OFF (1024 - N / 2)

static unsigned long passed, failed;

static void result(bool ok, const char *what, unsigned long a,
                   unsigned long b, unsigned long c, unsigned long d)
{
    if ( ok )
        ++passed;
    else if ( failed++ < 10 )
        printf("FAIL %s: %lu %lu %lu %lu\n", what, a, b, c, d);
}

static void pairs(void)
{
    unsigned long rf, rl, f, l;

    for ( rf = 0; rf < N; ++rf )
        for ( rl = rf; rl < N; ++rl )
            for ( f = 0; f < N; ++f )
                for ( l = f; l < N; ++l )
                {
                    /* Brute force: gaps between and sizes. */
                    unsigned long p, covered = 0;
                    bool span;
                    bool touch = false, expect;
                    unsigned int fl = (rf * 7 + l) & 3, nf = (f + rl) & 3;
                    struct iotlb_record rec = {
                        .first = rf, .last = rl, .flags = fl };

                    for ( p = 0; p < N; ++p )
                    {
                        bool a = p >= rf && p <= rl, b = p >= f && p <= l;

                        covered += a + b;
                        /* Shared page, or a page of each next to another. */
                        if ( (a && b) || (a && p + 1 == f) ||
                             (b && p + 1 == rf) )
                            touch = true;
                    }
                    /* Both ends on the same side of the boundary at N / 2. */
                    span = (min(rf, f) < N / 2) == (max(rl, l) < N / 2);
                    expect = touch || span;

                    result(iotlb_record_merge_ok(OFF + rf, OFF + rl, OFF + f,
                                                 OFF + l) == expect,
                           "merge_ok", rf, rl, f, l);

                    iotlb_record_merge(&rec, f, l, nf);
                    result(rec.first == min(rf, f) && rec.last == max(rl, l) &&
                           rec.flags == (fl | nf), "merge", rf, rl, f, l);
                }
}

/* Model of iotlb_record_add() in split mode plus the final flush. */
static unsigned char flushed[1024];
static unsigned int nflush;

static void flush(unsigned long first, unsigned long last)
{
    ++nflush;
    memset(&flushed[first], 1, last - first + 1);
}

static void sequences(void)
{
    unsigned int seed = 1, s, i;

    for ( s = 0; s < 20000; ++s )
    {
        unsigned char want[1024] = {};
        unsigned int nreq = 1 + s % 32;
        struct iotlb_record rec = {};
        bool have = false, ok = true;

        memset(flushed, 0, sizeof(flushed));
        nflush = 0;

        for ( i = 0; i < nreq; ++i )
        {
            unsigned long f, l;

            seed = seed * 1103515245 + 12345;
            f = (seed >> 8) % (s & 1 ? 1000 : 64);
            l = f + (seed >> 20) % 3;
            memset(&want[f], 1, l - f + 1);

            if ( have && !iotlb_record_merge_ok(rec.first, rec.last, f, l) )
            {
                flush(rec.first, rec.last);
                have = false;
            }
            if ( !have )
            {
                rec.first = f;
                rec.last = l;
                have = true;
            }
            else
                iotlb_record_merge(&rec, f, l, 1);
        }
        if ( have )
            flush(rec.first, rec.last);

        for ( i = 0; i < sizeof(want); ++i )
            if ( want[i] && !flushed[i] )
                ok = false;
        /* Every requested page flushed, never more flushes than requests. */
        result(ok && nflush <= nreq, "sequence", s, nreq, nflush, 0);
    }
}

int main(void)
{
    pairs();
    sequences();

    printf("%lu passed, %lu failed\n", passed, failed);

    return failed != 0;
}
