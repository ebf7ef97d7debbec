/*
 * order.c - ring orders: the best cyclic order of a topology's nodes for
 * algorithms that want a ring (ring allgather, pipelined chains), given to
 * them as a hint.  Every consecutive pair (and the wrap) is one link when
 * the shape allows it:
 *
 *   line, ring, complete   node order (the line's wrap runs against the
 *                          others, rule 2 of the lecture);
 *   hypercube              the binary reflected Gray code, a Hamiltonian
 *                          cycle (consecutive codes differ in one bit);
 *   cylinder               the CNS-1 snake: columns alternating direction,
 *                          closed over the ring's wrap link (C even);
 *   mesh, torus            a Hamiltonian cycle when R or C is even: row 0
 *                          left to right, a snake over columns 1..C-1 of the
 *                          other rows, and back up column 0; with R and C
 *                          both odd no Hamiltonian cycle exists (the grid is
 *                          bipartite with an odd node count) and the snake
 *                          path is the best: one closing pair is not a link.
 */
#include "topo/topo.h"

#include <stdlib.h>

/* Hamiltonian cycle of an R x C grid with R even (row-major ids, with a
 * transposition when only C is even). */
static void grid_cycle(int R, int C, int transpose, int32_t *order)
{
    int k = 0;
#define ID(r, c) (transpose ? (c) * R + (r) : (r) * C + (c))
    for (int c = 0; c < C; c++)
        order[k++] = ID(0, c);
    for (int r = 1; r < R; r++) {
        if (r % 2) /* odd rows go right to left, down to column 1 */
            for (int c = C - 1; c >= 1; c--)
                order[k++] = ID(r, c);
        else
            for (int c = 1; c < C; c++)
                order[k++] = ID(r, c);
    }
    for (int r = R - 1; r >= 1; r--)
        order[k++] = ID(r, 0);
#undef ID
}

int cs_topo_ring_hint(const cs_topo_t *t, int32_t *order)
{
    int n = cs_topo_nodes(t), R, C;
    switch (cs_topo_kind(t)) {
    case CS_TOPO_HYPERCUBE:
        for (int i = 0; i < n; i++)
            order[i] = i ^ (i >> 1);
        return 1;
    case CS_TOPO_MESH:
    case CS_TOPO_TORUS:
        cs_topo_grid(t, &R, &C);
        if (R >= 2 && C >= 2 && (R % 2 == 0 || C % 2 == 0)) {
            if (R % 2 == 0)
                grid_cycle(R, C, 0, order);
            else /* walk the transposed grid: C even */
                grid_cycle(C, R, 1, order);
            return 1;
        }
        /* both odd (or a single row/column): the snake path */
        for (int r = 0, k = 0; r < R; r++)
            for (int c = 0; c < C; c++)
                order[k++] = r * C + (r % 2 ? C - 1 - c : c);
        return 1;
    case CS_TOPO_CYLINDER:
        /* the CNS-1 paper's ring (§4.1): down the columns, alternating
         * direction, joined by ring links at the top and bottom; the last
         * column closes over the wrap link when C is even, so every ring
         * edge is a distinct physical link */
        cs_topo_grid(t, &R, &C);
        for (int c = 0, k = 0; c < C; c++)
            for (int r = 0; r < R; r++)
                order[k++] = (c % 2 ? R - 1 - r : r) * C + c;
        return 1;
    default:
        return 0;
    }
}
