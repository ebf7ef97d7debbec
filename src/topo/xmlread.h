/*
 * xmlread.h - the one safe way collsim opens an XML file with libxml2: no
 * network access (XML_PARSE_NONET: no DTD is fetched), no entity expansion
 * (an entity reference is refused with its line, so no "billion laughs"
 * and no value read as empty), libxml2's own messages silenced and its
 * first error turned into "NAME:LINE: message".  Implemented with the
 * network readers (netfile_stage.c), where it was first written; declared
 * here so that readers of other layers (the MSCCL algorithms of io/msccl.c)
 * open their XML the same way instead of a second copy.
 */
#ifndef CS_TOPO_XMLREAD_H
#define CS_TOPO_XMLREAD_H

#include <libxml/tree.h>

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

#endif
