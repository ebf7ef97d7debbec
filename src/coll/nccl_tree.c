/*
 * nccl_tree.c - NCCL's algorithms (issue 36; nccl.h).
 */
#include "coll/nccl.h"

const cs_coll_algo_t *const cs_coll_algos_nccl_tree[] = {NULL};
