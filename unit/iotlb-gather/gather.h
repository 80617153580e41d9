/*
 * The IOTLB gather of the IOMMU and x86/HVM patches, verbatim
 * (check-sync.sh compares): flush_add(), iommu_flush_gather(),
 * iommu_defer_flushes() and iommu_end_deferral() from
 * xen/drivers/passthrough/iommu.c, flush_iotlb() from
 * xen/arch/x86/hvm/grant_table.c, and the block of
 * replace_grant_p2m_mapping() moving a removal's skipped flush into the
 * vCPU's gather, between the markers, in a wrapper.
 */

static void flush_add(struct iommu_flush *f, unsigned long first,
                      unsigned long last, unsigned long pages,
                      unsigned int flags)
{
    ASSERT(pages && flags && last >= first);

    if ( !f->flags )
        *f = (struct iommu_flush){ .first = first, .last = last };
    else
    {
        f->first = min(f->first, first);
        f->last = max(f->last, last);
    }
    f->pages += pages;
    f->flags |= flags;
}

bool iommu_flush_gather(const struct domain *d, struct iommu_flush *g,
                        const struct iommu_flush *s)
{
    unsigned int order = flsl(min(g->first, s->first) ^
                              max(g->last, s->last));

    if ( g->flags &&
         (order > dom_iommu(d)->platform_ops->max_flush_order ||
          (1UL << order) > max(1UL << 9, 64 * (g->pages + s->pages))) )
        return false;

    flush_add(g, s->first, s->last, s->pages, s->flags);

    return true;
}

void iommu_defer_flushes(const struct domain *d)
{
    ASSERT(!this_cpu(iommu_dont_flush_iotlb));
    this_cpu(skipped_flush).flags = 0;
    this_cpu(skipped_domain) = d;
    this_cpu(iommu_dont_flush_iotlb) = true;
}

void iommu_end_deferral(struct iommu_flush *skipped)
{
    this_cpu(iommu_dont_flush_iotlb) = false;
    this_cpu(skipped_domain) = NULL;
    *skipped = this_cpu(skipped_flush);
}

static void flush_iotlb(struct domain *d, struct iommu_flush *f)
{
    /* A failure is logged, and crashes d unless it is the hardware domain. */
    if ( f->flags && iommu_iotlb_flush(d, _dfn(f->first),
                                       f->last - f->first + 1, f->flags) )
        ASSERT(is_hardware_domain(d) || domain_shutting_down(d));
    f->flags = 0;
}

static void gather_removal(struct domain *d, struct iommu_flush *gather,
                           struct iommu_flush skipped)
{
    /* from the patch: */
    while ( skipped.flags && !iommu_flush_gather(d, gather, &skipped) )
        flush_iotlb(d, gather);
    if ( gather->flags & IOMMU_FLUSHF_all )
        flush_iotlb(d, gather);
    /* :end */
}
