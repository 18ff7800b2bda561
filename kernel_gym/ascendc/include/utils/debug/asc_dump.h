// kgsim: the kernel-side dump header of the newer Ascend C layout. Dumps are debugging output
// with no effect on a kernel's data; the simulator accepts the calls and records nothing.
#pragma once
#include "kernel_operator.h"

template <class T>
inline void asc_dump_gm(T*, uint32_t /*desc*/, uint32_t /*dump_size*/) {}
template <class T>
inline void asc_dump_ubuf(T*, uint32_t, uint32_t) {}
template <class T>
inline void asc_dump_cbuf(T*, uint32_t, uint32_t) {}
template <class T>
inline void asc_dump_l1buf(T*, uint32_t, uint32_t) {}
template <class T>
inline void asc_dump(T*, uint32_t, uint32_t) {}
