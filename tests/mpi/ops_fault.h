/*
 * ops_fault.h — a fault planted in a loaded program, for the negative
 * control of mpi_ops.c (which itself uses meshrt.h only).
 */
#ifndef MRT_TESTS_OPS_FAULT_H
#define MRT_TESTS_OPS_FAULT_H

#include "meshrt.h"

/* Replaces the first backward relu (a relu_grad map) of spec by a copy,
 * so the program's gradient is wrong.  Returns 0, or -1 when spec has no
 * backward relu. */
int ops_fault_break_relu_grad(mrt_spec *spec);

#endif
