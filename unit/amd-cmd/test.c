/*
 * The AMD-Vi invalidation commands as Xen builds them (cmd.h: extracted
 * by extract.sh from the tree under test with the series applied),
 * decoded independently, per the AMD I/O Virtualization Technology
 * (IOMMU) Specification: INVALIDATE_IOMMU_PAGES (opcode 3) and
 * INVALIDATE_IOTLB_PAGES (opcode 4) carry Address[63:12] in their third
 * and fourth words and S in bit 0 of the third; with S clear they
 * invalidate the 4K page at Address, with S set 2^(k+1) pages, k the
 * number of consecutive ones in Address from bit 12 up, the block
 * aligned to that size (ones up to bit 62: everything).
 *
 * For every order 0 to 40 and a spread of frames (aligned, unaligned, up
 * to 2^40), the block each command invalidates must be the naturally
 * aligned block of 2^order pages holding the frame, with the right
 * opcode, domain or device ID, and PDE set on the IOMMU's command for
 * orders above 0; INV_IOMMU_ALL_PAGES_ADDRESS must invalidate everything.
 * With S set, the size bit must lie in Address[51:12] (Linux'
 * build_inv_address() treats Address[63:52] as a sign extension and
 * never sends a size bit there), so a
 * command of an order above 52 - PAGE_SHIFT trips the builders' ASSERT(),
 * and the series' AMD_MAX_FLUSH_ORDER (iommu_ops' max_flush_order) may be
 * no larger.  amd_iommu_flush_iotlb_pages() on ranges of every order up
 * to 64 must send a block covering the range within that bound, or all
 * pages, and all pages only beyond it.
 * QEMU 7.2's AMD IOMMU neither decodes INVALIDATE_IOTLB_PAGES' range nor
 * emulates a device IOTLB, so this test is what checks the device's
 * command.
 *
 * Could wrongly pass if extract.sh took the functions from another tree
 * than the one under test, or if the decoder above misreads the
 * specification the same way the builders do.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
#define PAGE_SHIFT 12

static unsigned int assert_failed;
#define ASSERT(p) do { if ( !(p) ) ++assert_failed; } while ( 0 )

struct amd_iommu { int unused; };
static u32 sent[4];

static void send_iommu_command(struct amd_iommu *iommu, u32 cmd[])
{
    (void)iommu;
    memcpy(sent, cmd, sizeof(sent));
}

struct domain { int unused; };
typedef struct { unsigned long dfn; } dfn_t;
#define dfn_x(d) ((d).dfn)
#define _dfn(x) ((dfn_t){ (x) })
#define INVALID_DFN _dfn(~0UL)
#define dfn_eq(a, b) (dfn_x(a) == dfn_x(b))
#define cf_check
#define IOMMU_FLUSHF_modified 2u
#define IOMMU_FLUSHF_all 4u
static unsigned int flsl(unsigned long x)
{
    return x ? 64 - __builtin_clzl(x) : 0;
}
static void amd_iommu_flush_pages(struct domain *d, unsigned long dfn,
                                  unsigned int order);
static void amd_iommu_flush_all_pages(struct domain *d);

#include "cmd.h"

static struct amd_iommu iommu0;

static void amd_iommu_flush_pages(struct domain *d, unsigned long dfn,
                                  unsigned int order)
{
    (void)d;
    invalidate_iommu_pages(&iommu0, (u64)dfn << PAGE_SHIFT, 1, order);
}

static void amd_iommu_flush_all_pages(struct domain *d)
{
    (void)d;
    invalidate_iommu_pages(&iommu0, INV_IOMMU_ALL_PAGES_ADDRESS, 1, 0);
}

struct block { unsigned int opcode; bool s, pde, all; uint64_t first, last; };

/* With S set, the size bit (the lowest clear one) is in Address[51:12]. */
static bool encodable(const u32 c[4])
{
    uint64_t addr = ((uint64_t)c[3] << 32) | (c[2] & 0xfffff000u);

    return !(c[2] & 1) || addr == (INV_IOMMU_ALL_PAGES_ADDRESS & ~0xfffULL) ||
           (~addr & 0x000ffffffffff000ULL);
}

static struct block decode(const u32 c[4])
{
    struct block b = { .opcode = c[1] >> 28, .s = c[2] & 1,
                       .pde = (c[2] >> 1) & 1 };
    uint64_t pfn = (((uint64_t)c[3] << 32) | (c[2] & 0xfffff000u)) >> 12;
    unsigned int k = 0;

    if ( !b.s )
    {
        b.first = b.last = pfn;
        return b;
    }
    while ( k < 51 && ((pfn >> k) & 1) )
        ++k;
    if ( k >= 51 )
    {
        b.all = true;
        return b;
    }
    b.first = pfn & ~((2ULL << k) - 1);
    b.last = b.first + (2ULL << k) - 1;
    return b;
}

static unsigned long passed, failed;

static void check(const char *what, uint64_t pfn, unsigned int order,
                  unsigned int opcode, unsigned int id, bool pde)
{
    struct block b = decode(sent);
    uint64_t first = pfn & ~((1ULL << order) - 1);
    uint64_t last = first + (1ULL << order) - 1;
    bool ok = !b.all && encodable(sent) && b.opcode == opcode &&
              b.first == first &&
              b.last == last && (sent[opcode == 3 ? 1 : 0] & 0xffff) == id &&
              (opcode != 3 || b.pde == pde);

    if ( ok )
        ++passed;
    else if ( failed++ < 10 )
        printf("FAIL %s pfn %#llx order %u: opcode %u S %d PDE %d "
               "[%#llx, %#llx]%s, want [%#llx, %#llx]\n", what,
               (unsigned long long)pfn, order, b.opcode, b.s, b.pde,
               (unsigned long long)b.first, (unsigned long long)b.last,
               b.all ? " (all)" : "", (unsigned long long)first,
               (unsigned long long)last);
}

int main(void)
{
    static const uint64_t pfns[] = {
        0, 1, 0x1ff, 0x200, 0x201, 0x3ffff, 0x40000, 0x12345,
        0xfedcba, 0x7fffffff, 0x80000001, 0xffffffffffULL,
    };
    struct amd_iommu iommu;
    unsigned int i, order;

    for ( i = 0; i < sizeof(pfns) / sizeof(pfns[0]); ++i )
        for ( order = 0; order <= 40; ++order )
        {
            invalidate_iommu_pages(&iommu, pfns[i] << PAGE_SHIFT, 0x1234,
                                   order);
            check("INVALIDATE_IOMMU_PAGES", pfns[i], order, 3, 0x1234,
                  order > 0);
            invalidate_iotlb_pages(&iommu, 32, 0, 0x0810, pfns[i] << PAGE_SHIFT,
                                   0x0810, order);
            check("INVALIDATE_IOTLB_PAGES", pfns[i], order, 4, 0x0810, false);
        }

    invalidate_iommu_pages(&iommu, INV_IOMMU_ALL_PAGES_ADDRESS, 7, 0);
    if ( decode(sent).all && decode(sent).pde )
        ++passed;
    else if ( failed++ < 10 )
        printf("FAIL INVALIDATE_IOMMU_PAGES of all pages\n");
    invalidate_iotlb_pages(&iommu, 32, 0, 0x0810, INV_IOMMU_ALL_PAGES_ADDRESS,
                           0x0810, 0);
    if ( decode(sent).all )
        ++passed;
    else if ( failed++ < 10 )
        printf("FAIL INVALIDATE_IOTLB_PAGES of all pages\n");

    /* Beyond 52 - PAGE_SHIFT the builders' ASSERT() trips. */
    assert_failed = 0;
    invalidate_iommu_pages(&iommu, 0, 7, 52 - PAGE_SHIFT + 1);
    invalidate_iotlb_pages(&iommu, 32, 0, 0x0810, 0, 0x0810,
                           52 - PAGE_SHIFT + 1);
    if ( assert_failed == 2 )
        ++passed;
    else if ( failed++ < 10 )
        printf("FAIL order %u built without an ASSERT()\n",
               52 - PAGE_SHIFT + 1);
    assert_failed = 0;

    /* iommu_ops' bound: blocks of that order must encode. */
    for ( i = 0; i < sizeof(pfns) / sizeof(pfns[0]); ++i )
    {
        invalidate_iommu_pages(&iommu, pfns[i] << PAGE_SHIFT, 7,
                               AMD_MAX_FLUSH_ORDER);
        check("max_flush_order", pfns[i], AMD_MAX_FLUSH_ORDER, 3, 7,
              AMD_MAX_FLUSH_ORDER > 0);
    }

    /* The ranges [2^k - 1, 2^k] and [0, 2^k - 1]: orders k + 1 and k. */
    for ( order = 0; order < 64; ++order )
        for ( i = 0; i < 2; ++i )
        {
            unsigned long first = i ? 0 : (1UL << order) - 1;
            unsigned long count = i ? 1UL << order : 2;
            unsigned int want = flsl(first ^ (first + count - 1));
            struct block b;

            memset(sent, 0, sizeof(sent));
            amd_iommu_flush_iotlb_pages(NULL, _dfn(first), count,
                                        IOMMU_FLUSHF_modified);
            b = decode(sent);
            if ( encodable(sent) &&
                 (want > 52 - PAGE_SHIFT ? b.all
                                         : !b.all && b.first <= first &&
                                           b.last >= first + count - 1 &&
                                           b.last - b.first ==
                                           (1UL << want) - 1) )
                ++passed;
            else if ( failed++ < 10 )
                printf("FAIL flush of [%#lx, +%#lx] (order %u): %s "
                       "[%#llx, %#llx]\n", first, count, want,
                       b.all ? "all" : "block",
                       (unsigned long long)b.first,
                       (unsigned long long)b.last);
        }

    if ( assert_failed )
    {
        printf("FAIL %u ASSERT()s tripped\n", assert_failed);
        ++failed;
    }

    printf("%lu passed, %lu failed\n", passed, failed);

    return failed != 0;
}
