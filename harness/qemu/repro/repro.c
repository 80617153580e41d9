/*
 * QEMU's cpu_clear_ignne() race, without Xen.  The first vCPU enters an
 * SVM guest with nested paging and leaves it, round after round; the
 * second restores its x87 environment (FLDENV) in a loop, and each
 * restore runs cpu_clear_ignne() on the second vCPU's thread: a plain
 * load and store of the first vCPU's hflags2, which holds the nested
 * paging bit that VMRUN sets and #VMEXIT clears.
 *
 * The nested tables map guest-physical 0x400000 to host-physical
 * 0x800000; the guest runs on the host's page tables, 16 MiB mapped
 * one to one.  The guest reads 0x400000 and must see
 * 0x800000's marker; the host, right after each #VMEXIT, reads its own
 * 0x400000 and must see its own marker.  A guest reading the host's
 * marker ran with nested paging off (the VMRUN's change undone); a host
 * reading the guest's, with it on (the #VMEXIT's undone).  The first
 * such round is printed on the serial port and QEMU exits 35 through
 * isa-debug-exit; "rounds=N" rounds without one exit 33; anything else
 * (an unexpected exit code, no second vCPU) exits 37.  "delay=N" spins N
 * PAUSEs between the second vCPU's start and the first round; "warm=N"
 * holds the second vCPU's FLDENV loop back until round N + 1.
 *
 * A pass says only that the race was not met in N rounds.  It could
 * pass wrongly when both vCPUs run on one TCG thread (thread=single) or
 * one host CPU; with one vCPU it exits 37.
 */
#include <stdint.h>

#define HOST_MARK   0x74736f68u     /* "host" */
#define GUEST_MARK  0x74737567u     /* "gust" */
#define EXIT_PASS   0x10            /* QEMU exits (v << 1) | 1: 33 */
#define EXIT_RACE   0x11            /* 35 */
#define EXIT_ERROR  0x12            /* 37 */

#define MSR_EFER        0xc0000080
#define EFER_SVME       (1u << 12)
#define MSR_VM_HSAVE_PA 0xc0010117
#define SVM_EXIT_VMMCALL 0x81

extern char ap_tramp[], ap_tramp_end[], guest_entry[];
extern char gdt[];

static uint8_t vmcb[4096] __attribute__((aligned(4096)));
static uint8_t hsave[4096] __attribute__((aligned(4096)));
static uint64_t pdpt[4] __attribute__((aligned(32)));
static uint64_t pd[512] __attribute__((aligned(4096)));
static uint64_t npdpt[4] __attribute__((aligned(32)));
static uint64_t npd[512] __attribute__((aligned(4096)));
static volatile uint32_t ap_up, ap_go;

static inline void outb(uint16_t port, uint8_t v)
{
    asm volatile ("outb %0, %1" :: "a" (v), "Nd" (port));
}

static void wrmsr(uint32_t msr, uint64_t v)
{
    asm volatile ("wrmsr" :: "c" (msr), "a" ((uint32_t)v),
                  "d" ((uint32_t)(v >> 32)));
}

static uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;

    asm volatile ("rdmsr" : "=a" (lo), "=d" (hi) : "c" (msr));
    return ((uint64_t)hi << 32) | lo;
}

static void puts(const char *s)
{
    while ( *s )
        outb(0x3f8, *s++);
}

static void putu(uint32_t v)
{
    char b[11], *p = b + 10;

    *p = 0;
    do { *--p = '0' + v % 10; v /= 10; } while ( v );
    puts(p);
}

static void putx(uint32_t v)
{
    int i;

    puts("0x");
    for ( i = 28; i >= 0; i -= 4 )
        outb(0x3f8, "0123456789abcdef"[(v >> i) & 15]);
}

static void __attribute__((noreturn)) stop(uint8_t code)
{
    outb(0xf4, code);
    for ( ;; )
        asm volatile ("cli; hlt");
}

#define V8(o)  (*(volatile uint8_t *)(vmcb + (o)))
#define V16(o) (*(volatile uint16_t *)(vmcb + (o)))
#define V32(o) (*(volatile uint32_t *)(vmcb + (o)))
#define V64(o) (*(volatile uint64_t *)(vmcb + (o)))

static void seg(unsigned int off, uint16_t sel, uint16_t attr)
{
    V16(off) = sel;
    V16(off + 2) = attr;
    V32(off + 4) = 0xffffffff;
    V64(off + 8) = 0;
}

/* The second vCPU: FLDENV for ever. */
void ap_main(void)
{
    uint8_t env[28];

    asm volatile ("fninit; fnstenv %0" : "=m" (env));
    ap_up = 1;
    while ( !ap_go )
        asm volatile ("pause");
    for ( ;; )
        asm volatile ("fldenv %0" :: "m" (env));
}

/* The number after "NAME=" on the command line, or dflt. */
static uint32_t arg(const uint32_t *mbi, const char *name, uint32_t dflt)
{
    const char *c, *a, *n;
    uint32_t v = 0;

    if ( !(mbi[0] & (1u << 2)) )
        return dflt;
    for ( c = (const char *)mbi[4]; *c; c++ )
    {
        for ( a = c, n = name; *n && *a == *n; a++, n++ )
            ;
        if ( *n || (c != (const char *)mbi[4] && c[-1] != ' ') )
            continue;
        for ( ; *a >= '0' && *a <= '9'; a++ )
            v = v * 10 + *a - '0';
        return v;
    }
    return dflt;
}

void bsp_main(const uint32_t *mbi)
{
    volatile uint32_t *lapic = (volatile uint32_t *)0xfee00000;
    volatile uint32_t *mark = (volatile uint32_t *)0x400000;
    uint32_t rounds = arg(mbi, "rounds=", 1000000);
    uint32_t delay = arg(mbi, "delay=", 0), warm = arg(mbi, "warm=", 0);
    uint32_t i, spin;
    char *t;

    /* The second vCPU, through INIT and a SIPI to 0x8000. */
    for ( t = ap_tramp; t < ap_tramp_end; t++ )
        ((char *)0x8000)[t - ap_tramp] = *t;
    lapic[0x310 / 4] = 0;
    lapic[0x300 / 4] = 0xc4500;
    lapic[0x300 / 4] = 0xc4608;
    for ( spin = 0; !ap_up && spin < 100000000; spin++ )
        asm volatile ("pause");
    if ( !ap_up )
    {
        puts("repro: the second vCPU did not start\n");
        stop(EXIT_ERROR);
    }

    /*
     * PAE, 2 MiB pages: for a host without PAE, QEMU 7.2 translates
     * nothing through the nested tables (PG_MODE_PG is not in
     * nested_pg_mode).  Host: 16 MiB one to one.  Nested: the same but
     * guest-physical 0x400000 -> 0x800000, user pages as nested walks
     * need.
     */
    pdpt[0] = (uint32_t)pd | 1;
    npdpt[0] = (uint32_t)npd | 1;
    for ( i = 0; i < 8; i++ )
    {
        pd[i] = (i << 21) | 0x83;
        npd[i] = (i << 21) | 0x87;
    }
    npd[2] = 0x800000 | 0x87;
    mark[0] = HOST_MARK;
    *(volatile uint32_t *)0x800000 = GUEST_MARK;
    asm volatile ("mov %%cr4, %%eax; or $0x20, %%eax; mov %%eax, %%cr4;"
                  "mov %0, %%cr3;"
                  "mov %%cr0, %%eax; or $0x80000000, %%eax; mov %%eax, %%cr0"
                  :: "r" (pdpt) : "eax", "memory");

    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SVME);
    wrmsr(MSR_VM_HSAVE_PA, (uint32_t)hsave);

    V32(0x010) = 3;                     /* intercept VMRUN, VMMCALL */
    V32(0x058) = 1;                     /* ASID */
    V64(0x090) = 1;                     /* nested paging */
    V64(0x0b0) = (uint32_t)npdpt;       /* nCR3 */
    seg(0x400, 0x10, 0xc93);            /* ES */
    seg(0x410, 0x08, 0xc9b);            /* CS */
    seg(0x420, 0x10, 0xc93);            /* SS */
    seg(0x430, 0x10, 0xc93);            /* DS */
    V16(0x462) = 0;
    V32(0x464) = 23;                    /* GDTR */
    V64(0x468) = (uint32_t)gdt;
    V64(0x4d0) = EFER_SVME;
    V64(0x548) = 0x20;                  /* CR4: PAE */
    V64(0x550) = (uint32_t)pdpt;        /* CR3: the host's tables */
    V64(0x558) = 0x80000011;            /* CR0: PG, PE, ET */
    V64(0x560) = 0x400;                 /* DR7 */
    V64(0x568) = 0xffff0ff0;            /* DR6 */
    V64(0x570) = 2;                     /* RFLAGS */

    /*
     * Optionally let the second vCPU's loop run on its own first, or this
     * vCPU's rounds (warm=N: the second waits until round N + 1).
     */
    ap_go = !warm;
    for ( spin = 0; spin < delay; spin++ )
        asm volatile ("pause");

    puts("repro: ");
    putu(rounds);
    puts(" rounds\n");
    for ( i = 1; i <= rounds; i++ )
    {
        uint32_t code, guest_saw, host_saw;

        if ( i == warm + 1 )
            ap_go = 1;
        V64(0x578) = (uint32_t)guest_entry;
        V64(0x5d8) = 0;
        V64(0x5f8) = 0;
        asm volatile ("vmrun" :: "a" (vmcb) : "memory");
        host_saw = mark[0];
        code = V32(0x070);
        guest_saw = V32(0x5f8);
        if ( code != SVM_EXIT_VMMCALL )
        {
            puts("repro: round ");
            putu(i);
            puts(": exit code ");
            putx(code);
            puts("\n");
            stop(EXIT_ERROR);
        }
        if ( guest_saw != GUEST_MARK || host_saw != HOST_MARK )
        {
            puts("repro: round ");
            putu(i);
            puts(guest_saw != GUEST_MARK
                 ? ": the guest ran without nested paging (VMRUN's undone)\n"
                 : ": the host ran with nested paging (#VMEXIT's undone)\n");
            puts("repro: the guest read ");
            putx(guest_saw);
            puts(", the host ");
            putx(host_saw);
            puts("\n");
            stop(EXIT_RACE);
        }
    }
    puts("repro: no race in ");
    putu(rounds);
    puts(" rounds\n");
    stop(EXIT_PASS);
}
