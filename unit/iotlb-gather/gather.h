/*
 * The IOTLB gather of the IOMMU and x86/HVM patches, verbatim
 * (check-sync.sh compares them with the series' post-image):
 * flush_add(), iommu_flush_gathered(), iommu_defer_flushes() and
 * iommu_end_deferral() from xen/drivers/passthrough/iommu.c, and the
 * lines of replace_grant_p2m_mapping() (xen/arch/x86/hvm/grant_table.c)
 * which defer a removal's flushes into the vCPU's gather, between the
 * markers, in a wrapper.
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

void iommu_flush_gathered(struct domain *d, struct iommu_flush *g)
{
    ASSERT(!this_cpu(iommu_dont_flush_iotlb));
    /* A failure is logged, and crashes d unless it is the hardware domain. */
    if ( g->flags && iommu_iotlb_flush(d, _dfn(g->first),
                                       g->last - g->first + 1, g->flags) )
        ASSERT(is_hardware_domain(d) || domain_shutting_down(d));
    g->flags = 0;
}

void iommu_defer_flushes(const struct domain *d)
{
    ASSERT(!this_cpu(iommu_dont_flush_iotlb));
    this_cpu(skipped_flush).flags = 0;
    this_cpu(skipped_domain) = d;
    this_cpu(iommu_dont_flush_iotlb) = true;
}

void iommu_end_deferral(struct domain *d, struct iommu_flush *g)
{
    const struct iommu_flush *s = &this_cpu(skipped_flush);

    ASSERT(this_cpu(skipped_domain) == d);
    this_cpu(iommu_dont_flush_iotlb) = false;
    this_cpu(skipped_domain) = NULL;
    if ( !s->flags )
        return;

    /*
     * Flush *g first where the aligned block to invalidate would outgrow
     * max_flush_order, beyond which the domain is flushed, or 64 pages per
     * page gathered (2^9 at least).  A flush covers one request or more.
     */
    if ( g->flags && !(s->flags & IOMMU_FLUSHF_all) )
    {
        unsigned int order = flsl(min(g->first, s->first) ^
                                  max(g->last, s->last));

        if ( order > dom_iommu(d)->platform_ops->max_flush_order ||
             (1UL << order) > max(1UL << 9, 64 * (g->pages + s->pages)) )
            iommu_flush_gathered(d, g);
    }
    flush_add(g, s->first, s->last, s->pages, s->flags);
    /* Unlinked page tables (IOMMU_FLUSHF_all): cached entries may use them. */
    if ( g->flags & IOMMU_FLUSHF_all )
        iommu_flush_gathered(d, g);
}

/* A grant's p2m removal, as replace_grant_p2m_mapping() makes it. */
static int remove_grant_p2m(struct domain *d, unsigned long gfn, mfn_t frame)
{
    struct vcpu *curr = current;
    int rc;

    /* from the patch: */
    iommu_defer_flushes(d);
    rc = p2m_remove_page(d, _gfn(gfn), frame, PAGE_ORDER_4K);
    iommu_end_deferral(d, &curr->arch.hvm.gnttab_iotlb);
    /* :end */

    return rc;
}
