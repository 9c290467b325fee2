/*
 * huge_pages.h — asking the kernel for 2 MiB pages under a large buffer.
 *
 * Each 4 KiB page costs a page fault the first time it is written, and
 * on a virtual machine a fault is dear: filling 2 GiB took about 10 s of
 * CPU here in 4 KiB pages and 3 s in 2 MiB pages; the tables of a plan
 * of 100,000 training ops (600 MB) took a third less time to fill.  With
 * transparent_hugepage set to "madvise" (the default of Debian) the
 * kernel gives huge pages only where they are asked for.
 */
#ifndef MRT_HUGE_PAGES_H
#define MRT_HUGE_PAGES_H

#include <stddef.h>

/* Buffers smaller than this are left alone (huge pages would waste more
 * than they save). */
#define MRT_HUGE_PAGES_MIN ((size_t)8 << 20)

/* Asks for huge pages under the whole 4 KiB pages of [p, p + bytes) when
 * bytes >= MRT_HUGE_PAGES_MIN; best done before they are touched.  Only a
 * hint: a failure (or a system without it) costs speed, nothing else. */
void mrt_huge_pages_hint(void *p, size_t bytes);

#endif
