/*
 * The rounding of patch 1 (VT-d): the two statements it adds to
 * iommu_flush_iotlb() in xen/drivers/passthrough/vtd/iommu.c, verbatim
 * between the markers (check-sync.sh compares them), in a wrapper.
 */
static unsigned int psi_round(dfn_t *pdfn, unsigned long page_count)
{
    dfn_t dfn = *pdfn;
    unsigned int order;

    /* from the patch: */
        order = flsl(dfn_x(dfn) ^ (dfn_x(dfn) + page_count - 1));
        dfn = _dfn(dfn_x(dfn) & ~((1UL << order) - 1));
    /* :end */

    *pdfn = dfn;

    return order;
}
