/*
 * iotlb_record_merge_ok() and iotlb_record_merge() as added to
 * xen/drivers/passthrough/iommu.c.
 */

#define IOTLB_RECORD_BLOCK_ORDER 9

static bool iotlb_record_merge_ok(unsigned long rfirst, unsigned long rlast,
                                  unsigned long first, unsigned long last)
{
    if ( first <= rlast + 1 && rfirst <= last + 1 )
        return true;

    return (min(rfirst, first) >> IOTLB_RECORD_BLOCK_ORDER) ==
           (max(rlast, last) >> IOTLB_RECORD_BLOCK_ORDER);
}

static void iotlb_record_merge(struct iotlb_record *rec, unsigned long first,
                               unsigned long last, unsigned int flags)
{
    rec->first = min(rec->first, first);
    rec->last = max(rec->last, last);
    rec->flags |= flags;
}
