/*
 * csv.c - CSV fields quoted as RFC 4180 says (csv.h).
 */
#include "io/csv.h"

#include <string.h>

void cs_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
