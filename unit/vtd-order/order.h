/*
 * VT-d's max_flush_order: the lines of the VT-d patch's vtd_setup()
 * (xen/drivers/passthrough/vtd/iommu.c) computing it, verbatim between
 * the markers (check-sync.sh compares each block), in a wrapper taking
 * the units' capability registers in place of the DRHD list.
 */
static unsigned int vtd_max_flush_order(const struct vtd_iommu *units,
                                        unsigned int n)
{
    struct iommu_ops iommu_ops = { 0 };
    const struct vtd_iommu *iommu;
    /* from the patch: */
    unsigned int flush_order = ~0U;
    /* :end */

    for ( iommu = units; iommu < units + n; ++iommu )
    {
        /* from the patch: */
        /* Without PSI, or beyond MAMV, a PSI request flushes the domain. */
        if ( cap_pgsel_inv(iommu->cap) )
            flush_order = min_t(unsigned int, flush_order,
                                cap_max_amask_val(iommu->cap));
        /* :end */
    }

    /* from the patch: */
    iommu_ops.max_flush_order = min(flush_order, 63U - PAGE_SHIFT);
    /* :end */

    return iommu_ops.max_flush_order;
}
