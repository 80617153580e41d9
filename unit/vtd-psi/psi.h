/*
 * The rounding of the VT-d patch: the statements it adds to
 * iommu_flush_iotlb() in xen/drivers/passthrough/vtd/iommu.c, verbatim
 * between the markers (check-sync.sh compares them), in a wrapper.
 * Returns the order of the block, or BITS_PER_LONG for a domain-selective
 * flush (a range which wraps, or a block of 2^64 bytes or more).  AMD-Vi's
 * amd_iommu_flush_iotlb_pages() computes the same order.
 */
static unsigned int psi_round(dfn_t *pdfn, unsigned long page_count)
{
    dfn_t dfn = *pdfn;
    unsigned long last = dfn_x(dfn) + page_count - 1;
    unsigned int order;

    /* from the patch: */
        order = flsl(dfn_x(dfn) ^ last);
        if ( last < dfn_x(dfn) || order > 63 - PAGE_SHIFT )
            page_count = 0; /* Wrapped, or 2^64 bytes or more: flush all. */
        else
            dfn = _dfn(dfn_x(dfn) & ~((1UL << order) - 1));
    /* :end */

    *pdfn = dfn;

    return page_count ? order : BITS_PER_LONG;
}
