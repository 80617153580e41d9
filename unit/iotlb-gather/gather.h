/*
 * The IOTLB gather of patches 2 and 3, verbatim (check-sync.sh compares):
 * iommu_flush_merge() from xen/drivers/passthrough/iommu.c, flush_iotlb()
 * from xen/arch/x86/hvm/grant_table.c, and the block of
 * replace_grant_p2m_mapping() moving a removal's skipped flush into the
 * vCPU's gather, between the markers, in a wrapper.
 */

void iommu_flush_merge(struct iommu_flush *f, const struct domain *d,
                       dfn_t dfn, unsigned long page_count,
                       unsigned int flush_flags)
{
    unsigned long last = dfn_x(dfn) + page_count - 1;

    if ( !f->flags )
    {
        f->d = d;
        f->first = dfn_x(dfn);
        f->last = last;
    }
    else
    {
        if ( f->d != d )
            f->d = NULL;
        f->first = min(f->first, dfn_x(dfn));
        f->last = max(f->last, last);
    }
    f->flags |= flush_flags;
}

static void flush_iotlb(struct domain *d, struct iommu_flush *f)
{
    int rc;

    ASSERT(!f->flags || f->d == d);
    rc = iommu_iotlb_flush(d, _dfn(f->first), f->last - f->first + 1,
                           f->flags);
    /* A failure is logged, and crashes d unless it is the hardware domain. */
    ASSERT(!rc || is_hardware_domain(d) ||
           d->shutdown_code != SHUTDOWN_CODE_INVALID);
    f->flags = 0;
}

static void gather_removal(struct domain *d, struct iommu_flush *gather,
                           const struct iommu_flush *skipped)
{
    /* from the patch: */
    if ( skipped->flags )
    {
        ASSERT(skipped->d == d);
        if ( gather->flags &&
             ((min(gather->first, skipped->first) ^
               max(gather->last, skipped->last)) >> iommu_max_flush_order) )
            flush_iotlb(d, gather);
        iommu_flush_merge(gather, d, _dfn(skipped->first),
                          skipped->last - skipped->first + 1, skipped->flags);
    }
    /* :end */
}
