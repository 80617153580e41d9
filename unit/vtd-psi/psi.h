/* psi_aligned_range() as added to xen/drivers/passthrough/vtd/iommu.c. */

static unsigned int psi_aligned_range(unsigned long dfn,
                                      unsigned long page_count,
                                      unsigned long *base)
{
    unsigned long last = dfn + page_count - 1;
    /* Lowest order at which dfn and last fall into the same block. */
    unsigned int order = flsl(dfn ^ last);

    *base = order < BITS_PER_LONG ? dfn & ~((1UL << order) - 1) : 0;

    return order;
}
