/*
 * Exhaustive check of the VT-d patch's rounding (psi.h): for every
 * dfn < 2^12 and 1 <= count <= 2^10, and some ranges up to frame 2^52
 * (the highest a dfn can be), the block must be naturally aligned, cover
 * [dfn, dfn + count - 1], and be the smallest such block; a range which
 * wraps, or whose block is 2^64 bytes or more (order above 63 - PAGE_SHIFT,
 * up to the order 64 of a range across bit 63), must get a domain-selective
 * flush.  Could wrongly pass if psi.h differs from the patch: check-sync.sh
 * compares them.
 */
#include <stdbool.h>
#include <stdio.h>

#define BITS_PER_LONG ((int)(8 * sizeof(long)))
#define PAGE_SHIFT 12

static unsigned int flsl(unsigned long x)
{
    return x ? BITS_PER_LONG - __builtin_clzl(x) : 0;
}

typedef struct { unsigned long dfn; } dfn_t;
#define dfn_x(d) ((d).dfn)
#define _dfn(x) ((dfn_t){ (x) })

#include "psi.h"

static unsigned long passed, failed;

static void check(unsigned long dfn, unsigned long count)
{
    dfn_t block = _dfn(dfn);
    unsigned long base, last = dfn + count - 1;
    unsigned int order = psi_round(&block, count);
    unsigned int ref = 0;
    bool ok = true;

    /* Reference: Linux' calculate_psi_aligned_address() loop. */
    while ( ref < BITS_PER_LONG && (dfn >> ref) != (last >> ref) )
        ++ref;
    if ( ref > 63 - PAGE_SHIFT )                   /* 2^64 bytes or more */
        ref = BITS_PER_LONG;

    base = dfn_x(block);
    if ( order != ref )
        ok = false;
    else if ( order < BITS_PER_LONG )
    {
        unsigned long size = 1UL << order;

        if ( base & (size - 1) )                   /* aligned */
            ok = false;
        if ( base > dfn || last - base > size - 1 ) /* covers */
            ok = false;
        if ( order &&                              /* smallest */
             (dfn >> (order - 1)) == (last >> (order - 1)) )
            ok = false;
    }

    if ( ok )
        ++passed;
    else if ( failed++ < 10 )
        printf("FAIL dfn %#lx count %#lx: order %u base %#lx (ref %u)\n",
               dfn, count, order, base, ref);
}

int main(void)
{
    unsigned long dfn, count;

    for ( dfn = 0; dfn < (1UL << 12); ++dfn )
        for ( count = 1; count <= (1UL << 10); ++count )
            check(dfn, count);

    /* A few large frame numbers, including the widest possible range. */
    check((1UL << 52) - 1, 1);
    check((1UL << 52) - 2, 2);
    check((1UL << 40) - 3, 5);
    check(0, 1UL << 52);
    check(1, (1UL << 52) - 1);
    check((1UL << 51) - 1, 2);

    /* Blocks of 2^64 bytes or more, up to a range across bit 63. */
    check((1UL << 51) - 1, 1UL << 51);
    check((1UL << 52) - 1, 2);
    check((1UL << 63) - 1, 2);
    check(0, ~0UL);

    /* Ranges which wrap: domain-selective, in release builds too. */
    for ( count = 1; count <= 64; ++count )
    {
        /* Ending at frame 0, and ending at frame 6 after wrapping. */
        dfn_t end0 = _dfn(~0UL - count + 1), end6 = _dfn(8 + count);

        if ( psi_round(&end0, count + 1) == BITS_PER_LONG &&
             psi_round(&end6, ~0UL - count) == BITS_PER_LONG )
            ++passed;
        else if ( failed++ < 10 )
            printf("FAIL wrapping range (%lu) not domain-selective\n", count);
    }

    printf("%lu passed, %lu failed\n", passed, failed);

    return failed != 0;
}
