/*
 * xmlread.h - the one safe way collsim opens an XML file with libxml2: no
 * network access (XML_PARSE_NONET: no DTD is fetched), no entity expansion
 * (an entity reference is refused with its line, so no "billion laughs"
 * and no value read as empty), libxml2's own messages silenced and its
 * first error turned into "NAME:LINE: message".  Implemented with the
 * network readers (netfile_stage.c), where it was first written; declared
 * here so that readers of other layers open their XML the same way instead
 * of a second copy.  Two ways: a tree (cs_netfile_xml_read: the SimGrid
 * platforms), or a libxml2 SAX push parser of the reader's own (the
 * GraphML scan, netfile_gmlscan.c; the MSCCL algorithms, io/msccl.c: no
 * tree, exact lines at any size) inside the quiet_begin/quiet_end pair
 * below.  The writers of XML (GraphML, io/msccl_write.c) escape their
 * values with cs_netfile_xml_escaped, so that what they write reads back.
 */
#ifndef CS_TOPO_XMLREAD_H
#define CS_TOPO_XMLREAD_H

#include <stdio.h>

#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlversion.h>

#include "core/error.h"
#include "core/source.h"

/* Parses src (a path, or bytes in memory: core/source.h) with libxml2 (no
 * network access, no entity expansion, its errors not printed): CS_ERR_IO
 * when it cannot be read, CS_ERR_PARSE "NAME:LINE: libxml2's message" when
 * it is not well-formed XML or holds an entity reference (which would read
 * as an empty value), CS_ERR_OOM when libxml2 runs out of memory.  On
 * success the caller frees *out with xmlFreeDoc; on error *out is NULL.
 * The whole tree is in memory: meant for descriptions (platforms,
 * algorithms), whose size is that of the file. */
int cs_netfile_xml_read(const cs_source_t *src, xmlDocPtr *out, cs_error_t *err);

/* libxml2 prints some errors (out of memory outside a parser, I/O) with
 * its generic error function, on stderr: silenced around the readers'
 * parses (the function is per thread), which report through cs_error_t.
 * quiet_begin also clears libxml2's last error of the thread, which
 * cs_netfile_xml_oom then reads: whether libxml2 ran out of memory since
 * (in collsim's parse or igraph's), whatever the message that followed. */
typedef struct cs_netfile_xml_quiet {
    xmlGenericErrorFunc func;
    void *ctx;
} cs_netfile_xml_quiet_t;
void cs_netfile_xml_quiet_begin(cs_netfile_xml_quiet_t *q);
void cs_netfile_xml_quiet_end(const cs_netfile_xml_quiet_t *q);
int cs_netfile_xml_oom(void);

/* libxml2's first error of a parse (the last is often a consequence:
 * "premature end of data" after an unclosed tag), as each reader's
 * structured error handler (xmlSAXHandler.serror) keeps it through
 * cs_netfile_xml_first_keep: `set` once an error of level XML_ERR_ERROR or
 * worse came, its code, line and message (first line only). */
typedef struct cs_netfile_xml_first {
    int set, code, line;
    char msg[512];
} cs_netfile_xml_first_t;

/* The error a structured handler is given: const since libxml2 2.12, so
 * that the readers' handlers declare one signature for both. */
#if LIBXML_VERSION >= 21200
typedef const xmlError cs_netfile_xml_error_t;
#else
typedef xmlError cs_netfile_xml_error_t;
#endif

/* Keeps e in *first when it is the parse's first error (level
 * XML_ERR_ERROR or worse); nothing for first NULL (a handler called while
 * the parser is made, before its _private is set: the parser's errNo says
 * that error) or e NULL. */
void cs_netfile_xml_first_keep(cs_netfile_xml_first_t *first, const xmlError *e);

/* Whether the parse ran out of memory: its first error says so, the
 * parser's errNo (ctx_errno) does, or cs_netfile_xml_oom.  Out of memory
 * comes first in the readers' reports: what followed it (a value cut
 * short, "not well-formed") is its consequence. */
int cs_netfile_xml_first_oom(const cs_netfile_xml_first_t *first, int ctx_errno);

/* Writes s to f as XML text or an attribute's value in double quotes:
 * &, <, > and " as their entities, every other byte as it is. */
void cs_netfile_xml_escaped(FILE *f, const char *s);

#endif
