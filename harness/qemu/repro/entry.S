/* Multiboot entry, the AP's real-mode start, and the guest. */
#define MB_MAGIC 0x1badb002

        .section .multiboot, "a"
        .align 4
        .long MB_MAGIC, 0, -MB_MAGIC

        .text
        .code32
        .globl _start
_start:
        lgdt    gdt_desc
        ljmp    $0x08, $1f
1:      mov     $0x10, %ax
        mov     %ax, %ds
        mov     %ax, %es
        mov     %ax, %ss
        mov     $bsp_stack_top, %esp
        push    %ebx                    /* the multiboot information */
        call    bsp_main
2:      hlt
        jmp     2b

/* Copied to 0x8000; the SIPI starts it with CS 0x0800, IP 0. */
        .globl ap_tramp, ap_tramp_end
        .code16
ap_tramp:
        cli
        lgdtl   %cs:(ap_gdt_desc - ap_tramp)
        mov     %cr0, %eax
        or      $1, %eax
        mov     %eax, %cr0
        ljmpl   $0x08, $ap_pm
        .align 8
ap_gdt_desc:
        .word   gdt_end - gdt - 1
        .long   gdt
ap_tramp_end:

        .code32
ap_pm:
        mov     $0x10, %ax
        mov     %ax, %ds
        mov     %ax, %es
        mov     %ax, %ss
        mov     $ap_stack_top, %esp
        call    ap_main
3:      hlt
        jmp     3b

/*
 * The guest: paging on, with the host's page tables (its CR3), under the
 * nested tables; reads the marker at 0x400000 and reports it (VMMCALL).
 */
        .globl guest_entry
guest_entry:
        mov     0x400000, %eax
        vmmcall
        jmp     guest_entry

        .data
        .align 8
        .globl  gdt
gdt:
        .quad   0
        .quad   0x00cf9b000000ffff      /* 0x08: code, flat */
        .quad   0x00cf93000000ffff      /* 0x10: data, flat */
gdt_end:
gdt_desc:
        .word   gdt_end - gdt - 1
        .long   gdt

        .bss
        .align 16
        .space  8192
bsp_stack_top:
        .space  8192
ap_stack_top:

        .section .note.GNU-stack, "", @progbits
