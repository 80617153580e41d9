/*
 * iotlb_record_merge_ok() and iotlb_record_merge() as added to
 * xen/drivers/passthrough/iommu.c.
 */

static bool iotlb_record_merge_ok(unsigned long rfirst, unsigned long rlast,
                                  unsigned long first, unsigned long last)
{
    unsigned long merged = max(rlast, last) - min(rfirst, first) + 1;
    unsigned long parts = (rlast - rfirst + 1) + (last - first + 1);

    if ( first <= rlast + 1 && rfirst <= last + 1 )
        return true;

    return merged <= 2 * parts;
}

static void iotlb_record_merge(struct iotlb_record *rec, unsigned long first,
                               unsigned long last, unsigned int flags)
{
    rec->first = min(rec->first, first);
    rec->last = max(rec->last, last);
    rec->flags |= flags;
}
