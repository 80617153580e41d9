/*
 * Exhaustive check of psi_aligned_range() (patch 1, VT-d): for every
 * dfn < 2^12 and 1 <= count <= 2^10 the returned block must be naturally
 * aligned, cover [dfn, dfn + count - 1], and be the smallest such block.
 */
#include <stdbool.h>
#include <stdio.h>

#define BITS_PER_LONG ((int)(8 * sizeof(long)))

static unsigned int flsl(unsigned long x)
{
    return x ? BITS_PER_LONG - __builtin_clzl(x) : 0;
}

#include "psi.h"

static unsigned long passed, failed;

static void check(unsigned long dfn, unsigned long count)
{
    unsigned long base = ~0UL, last = dfn + count - 1;
    unsigned int order = psi_aligned_range(dfn, count, &base);
    unsigned int ref = 0;
    bool ok = true;

    /* Reference: Linux' calculate_psi_aligned_address() loop. */
    while ( ref < BITS_PER_LONG && (dfn >> ref) != (last >> ref) )
        ++ref;

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
    else if ( base != 0 )
        ok = false;

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
    check((1UL << 52) - 1, 2);
    check((1UL << 40) - 3, 5);
    check(0, ~0UL);
    check(1UL << 63, 1UL << 62);
    check((1UL << 63) - 1, 2);

    printf("%lu passed, %lu failed\n", passed, failed);

    return failed != 0;
}
