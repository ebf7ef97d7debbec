/*
 * cerebras.h - what the application needs to know about a Cerebras machine
 * beyond cs_machine_t: its grid and ramp latency (for --predict), and the
 * color statistics of a run.
 */
#ifndef CS_CEREBRAS_H
#define CS_CEREBRAS_H

#include "machines/cerebras_model.h"
#include "machines/machine.h"

typedef struct cs_cerebras {
    int rows, cols;
    int tr;        /* ramp latency T_R, cycles */
    int buf;       /* FIFO depth per (router input, color) */
    int colors;    /* colors live at one router at most; 0 = no limit */
    const cs_topo_t *topo;
} cs_cerebras_t;

extern const cs_machine_type_t cs_machine_cerebras;

/* The Cerebras parameters of m, or NULL if m is another machine. */
const cs_cerebras_t *cs_cerebras_of(const cs_machine_t *m);

#endif
