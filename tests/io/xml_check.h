/*
 * xml_check.h - a well-formedness check of XML as cairo writes it (SVG),
 * shared by the figure tests (the build has no XML library).  Header-only:
 * include it in one test file each.
 */
#ifndef CS_TEST_XML_CHECK_H
#define CS_TEST_XML_CHECK_H

#include <stdio.h>
#include <string.h>

/* A well-formedness check of XML as cairo writes it: the declaration
 * first, then elements that nest and close properly, one root.  Returns
 * NULL when well formed, else a static description. */
static inline const char *xml_check(const char *doc)
{
    static char why[256];
    char stack[64][64];
    int depth = 0, roots = 0;
    const char *p = doc;
    if (strncmp(p, "<?xml", 5) != 0)
        return "no <?xml declaration at the start";
    while ((p = strchr(p, '<')) != NULL) {
        if (p[1] == '?' || p[1] == '!') { /* declaration, comment */
            const char *end = strstr(p, p[1] == '?' ? "?>" : ">");
            if (!end)
                return "unterminated declaration";
            p = end + 1;
            continue;
        }
        const char *end = strchr(p, '>');
        if (!end)
            return "unterminated tag";
        if (p[1] == '/') {
            size_t n = strcspn(p + 2, " \t\n>");
            if (depth == 0)
                return "closing tag without an open element";
            depth--;
            if (strlen(stack[depth]) != n || strncmp(stack[depth], p + 2, n) != 0) {
                snprintf(why, sizeof why, "</%.*s> closes <%.63s>", (int)(n < 64 ? n : 64),
                         p + 2, stack[depth]);
                return why;
            }
        } else if (end[-1] != '/') {
            size_t n = strcspn(p + 1, " \t\n/>");
            if (depth == 64 || n >= 64)
                return "too deep or too long a name";
            if (depth == 0)
                roots++;
            snprintf(stack[depth++], 64, "%.*s", (int)n, p + 1);
        } else if (depth == 0) {
            roots++;
        }
        p = end + 1;
    }
    if (depth != 0) {
        snprintf(why, sizeof why, "<%.63s> never closed", stack[depth - 1]);
        return why;
    }
    return roots == 1 ? NULL : "not exactly one root element";
}

#endif
