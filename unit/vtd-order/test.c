/*
 * VT-d's max_flush_order (order.h, the VT-d patch's vtd_setup() lines):
 * the lowest MAMV over the units that have page-selective invalidation
 * (PSI), capped at 63 - PAGE_SHIFT; a unit without PSI flushes the
 * domain whatever the order, so it does not lower it (v4 made it 0).
 * Each case is a set of units, each with or without PSI and with a MAMV
 * field (read only with PSI), and the order expected:
 * - a unit without PSI beside one with MAMV 18 (either order): 18;
 * - units with MAMV 9 and 18: 9; one with MAMV 0: 0;
 * - a unit without PSI alone: 63 - PAGE_SHIFT = 51; one with MAMV 18
 *   alone: 18; one with MAMV 63 (the field's largest): 51;
 * - a unit without PSI whose MAMV field reads 5 beside one with MAMV 18:
 *   18 (the field of a unit without PSI is not read).
 * The capability register is built with Xen's field positions (bit 39:
 * PSI, bits 48-53: MAMV), and read by Xen's cap_pgsel_inv() and
 * cap_max_amask_val().  Could wrongly pass if order.h differs from the
 * patch (check-sync.sh compares it) or these macros from Xen's.
 */
#include <stdint.h>
#include <stdio.h>

#define PAGE_SHIFT 12
#define min(a, b) ((a) < (b) ? (a) : (b))
#define min_t(t, a, b) min((t)(a), (t)(b))

/* xen/drivers/passthrough/vtd/iommu.h */
#define cap_max_amask_val(c)	(((c) >> 48) & 0x3f)
#define cap_pgsel_inv(c)	(((c) >> 39) & 1)

struct iommu_ops { unsigned int max_flush_order; };
struct vtd_iommu { uint64_t cap; };

#include "order.h"

#define PSI(mamv) { (1ULL << 39) | ((uint64_t)(mamv) << 48) }
#define NO_PSI(mamv) { (uint64_t)(mamv) << 48 }

static const struct {
    const char *what;
    unsigned int n, want;
    struct vtd_iommu units[2];
} cases[] = {
    { "PSI MAMV 18, no PSI", 2, 18, { PSI(18), NO_PSI(0) } },
    { "no PSI, PSI MAMV 18", 2, 18, { NO_PSI(0), PSI(18) } },
    { "PSI MAMV 9, PSI MAMV 18", 2, 9, { PSI(9), PSI(18) } },
    { "PSI MAMV 18, PSI MAMV 0", 2, 0, { PSI(18), PSI(0) } },
    { "no PSI alone", 1, 63 - PAGE_SHIFT, { NO_PSI(0) } },
    { "PSI MAMV 18 alone", 1, 18, { PSI(18) } },
    { "PSI MAMV 63 alone", 1, 63 - PAGE_SHIFT, { PSI(63) } },
    { "PSI MAMV 18, no PSI (MAMV field 5)", 2, 18, { PSI(18), NO_PSI(5) } },
};

int main(void)
{
    unsigned long passed = 0, failed = 0;
    unsigned int i;

    for ( i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i )
    {
        unsigned int got = vtd_max_flush_order(cases[i].units, cases[i].n);

        if ( got == cases[i].want )
            ++passed;
        else if ( failed++ < 10 )
            printf("FAIL %s: max_flush_order %u, not %u\n", cases[i].what,
                   got, cases[i].want);
    }

    printf("%lu passed, %lu failed\n", passed, failed);

    return failed != 0;
}
