/* ab_table.h - alpha/beta pairs for formula sweeps in tests/coll (test
 * helper, header-only). */
#ifndef CS_TEST_COLL_AB_TABLE_H
#define CS_TEST_COLL_AB_TABLE_H

#include "engine/net.h"

/* alpha/beta pairs in whole ticks of the alpha-beta machine's 1 ps clock,
 * for formula sweeps */
typedef struct ab {
    const char *alpha, *beta;
    int64_t a, b; /* ticks, ticks per byte */
} ab_t;
static const ab_t ABS[] = {
    {"1us", "1ns", 1000000, 1000},
    {"3us", "2ns", 3000000, 2000},
    {"500ns", "4ns", 500000, 4000},
};
#define NABS ((int)(sizeof ABS / sizeof *ABS))
static const cs_net_mode_t MODES[] = {CS_NET_PACKET, CS_NET_FLUID};

#endif
