/*
 * The deferral in iommu_iotlb_flush() (xen/drivers/passthrough/iommu.c),
 * verbatim between the markers (check-sync.sh compares them); included
 * into test.c's iommu_iotlb_flush().
 */
    /* from the patch: */
    if ( this_cpu(iommu_dont_flush_iotlb) &&
         (!this_cpu(skipped_domain) || this_cpu(skipped_domain) == d) )
    {
        flush_add(&this_cpu(skipped_flush), dfn_x(dfn),
                  dfn_x(dfn) + page_count - 1, page_count, flush_flags);
        return 0;
    }
    /* :end */
