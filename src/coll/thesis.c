/* thesis.c - placeholder table until its algorithms land. */
#include "coll/coll.h"

const cs_coll_algo_t *const cs_coll_group_thesis[] = {NULL};
