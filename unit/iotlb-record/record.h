/*
 * The IOTLB flush record of patch 2 (IOMMU) as added to
 * xen/drivers/passthrough/iommu.c, verbatim (check-sync.sh compares):
 * iotlb_record_merge(), iotlb_record_add(), iommu_iotlb_record_begin(),
 * iommu_iotlb_flush_recorded() and iommu_iotlb_drop_recorded().
 */

static void iotlb_record_merge(struct iotlb_record *rec, unsigned long first,
                               unsigned long last, unsigned int flags)
{
    rec->first = min(rec->first, first);
    rec->last = max(rec->last, last);
    rec->flags |= flags;
}

static int iotlb_record_add(struct domain *d, dfn_t dfn,
                            unsigned long page_count, unsigned int flush_flags)
{
    struct iotlb_record *rec = &this_cpu(iotlb_record);
    unsigned long first = dfn_x(dfn), last = first + page_count - 1;

    /*
     * Never mix domains: flush a request for another domain right away, as
     * well as a range wrapping around, which a union can't represent.
     */
    if ( (rec->d && rec->d != d) || last < first )
        return iotlb_flush(d, dfn, page_count, flush_flags);

    if ( !rec->d )
    {
        rec->d = d;
        rec->first = first;
        rec->last = last;
        rec->flags = flush_flags;
    }
    else
        iotlb_record_merge(rec, first, last, flush_flags);

    return 0;
}

void iommu_iotlb_record_begin(void)
{
    ASSERT(!this_cpu(iommu_dont_flush_iotlb));
    ASSERT(!this_cpu(iotlb_record).d);

    this_cpu(iommu_dont_flush_iotlb) = true;
}

int iommu_iotlb_flush_recorded(void)
{
    struct iotlb_record *rec = &this_cpu(iotlb_record);
    struct domain *d = rec->d;

    this_cpu(iommu_dont_flush_iotlb) = false;

    if ( !d )
        return 0;

    rec->d = NULL;

    return iotlb_flush(d, _dfn(rec->first), rec->last - rec->first + 1,
                       rec->flags);
}

void iommu_iotlb_drop_recorded(void)
{
    this_cpu(iommu_dont_flush_iotlb) = false;
    this_cpu(iotlb_record).d = NULL;
}
