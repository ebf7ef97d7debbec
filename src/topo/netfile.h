/*
 * netfile.h - network files (issue 18): reading a user's network into a
 * cs_netdesc_t, and writing one as GraphML that reads back the same.
 *
 * Formats (docs/networks.md shows each with a worked example):
 *   edgelist  one link per line "a b [bandwidth] [latency]", '#' comments;
 *             nodes are names (hosts unless declared "switch NAME" on a line
 *             of its own, or "host NAME [rank R]"); bandwidth and latency
 *             with units (100Gbps, 25GB/s, 500ns), else the defaults;
 *   graphml   read with igraph: node attribute "kind" (host | switch,
 *             default host) and optional "rank", "group", "level"; edge
 *             attributes "bandwidth" (bytes/s, or text with units),
 *             "latency" (s, or text with units), "multiplicity";
 *   simgrid   the common subset of SimGrid platform XML (libxml2):
 *             <cluster> with topology FLAT, TORUS, FAT_TREE, DRAGONFLY and
 *             its topo_parameters, bw, lat, sharing_policy; <zone>s of
 *             hosts, routers and links with explicit <route>s.  Every
 *             attribute read is documented; others are refused, naming
 *             file:line;
 *   astra     ASTRA-sim's analytical network .yml (libyaml): per dimension
 *             topology Ring | FullyConnected | Switch, npus_count,
 *             bandwidth in GB/s (2^30 bytes/s), latency in ns; the file's
 *             bandwidth and latency, never the defaults.
 * Errors name the file and line (or the GraphML element) and exit 2 at the
 * command line: malformed input, an unknown attribute, a bandwidth that is
 * not positive, a self-loop, a host that reaches no other, a rank given
 * twice.
 */
#ifndef CS_NETFILE_H
#define CS_NETFILE_H

#include <stdio.h>
#include "core/error.h"
#include "core/source.h"
#include "topo/netdesc.h"

typedef enum cs_netfile_format {
    CS_NETFILE_AUTO = 0, /* from the extension: .graphml, .xml (SimGrid), .yml, else edge list */
    CS_NETFILE_EDGELIST, CS_NETFILE_GRAPHML, CS_NETFILE_SIMGRID,
    CS_NETFILE_ASTRA /* ASTRA-sim's analytical .yml (.yml, .yaml) */
} cs_netfile_format_t;

/* A format's name, and the simulator whose files it reads (SimGrid's
 * platforms, ASTRA-sim's networks): a run on such a file keeps that
 * simulator's defaults for what the file does not say (machines/net.c). */
typedef struct cs_netfile_format_info {
    const char *name;      /* "edgelist", "graphml", "simgrid", "astra" */
    const char *simulator; /* "SimGrid", "ASTRA-sim"; NULL: no other simulator's */
    const char *defaults;  /* the name of its defaults in results ("simgrid-default") */
    int cm02;              /* 1: the simulator's fluid model is SimGrid's CM02 (latency
                            * paid first, shares weighted by 1/latency) */
} cs_netfile_format_info_t;

/* The row of a format other than AUTO (NULL for AUTO). */
const cs_netfile_format_info_t *cs_netfile_format_info(cs_netfile_format_t format);

/* "auto" or a format's name; CS_ERR_USAGE listing them otherwise. */
int cs_netfile_parse_format(const char *name, cs_netfile_format_t *out, cs_error_t *err);

/* The format `format` means for a file named `name`: itself, or for AUTO
 * the one told from the name (so that a machine can say what a file was
 * read as, e.g. a SimGrid platform's own defaults). */
cs_netfile_format_t cs_netfile_resolve_format(const char *name, cs_netfile_format_t format);

/* Reads src (a path, or a request's inline file: core/source.h), named
 * src->name in messages; the format AUTO is told from that name.  dflt_bw
 * (bytes/s) and dflt_lat (s) are used where the file gives none.  Hosts
 * keep the file's order unless ranks are given. */
int cs_netfile_read(const cs_source_t *src, cs_netfile_format_t format, double dflt_bw,
                    double dflt_lat, cs_netdesc_t **out, cs_error_t *err);

/* Writes d as GraphML with the attributes above (what `collsim topo
 * --graphml` writes for every machine), so that reading it back gives the
 * same network. */
int cs_netfile_write_graphml(const cs_netdesc_t *d, FILE *f, cs_error_t *err);

#endif
