/*
 * csv.h - one CSV field written as RFC 4180 quotes it: in double quotes
 * (quotes doubled) when it holds a comma, a quote or a line break, as a
 * machine spec ("alphabeta:topo=ring,p=8") or a plot's series name can.
 * Used by every CSV collsim writes (sweep, compare, a plot's data).
 */
#ifndef CS_CSV_H
#define CS_CSV_H

#include <stdio.h>

void cs_csv_field(FILE *f, const char *s);

#endif
