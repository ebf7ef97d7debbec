#!/usr/bin/env python3
# tools/simgrid/dragonfly_routes.py - the evidence behind the "route" deviations of
# tools/simgrid-check (issue 31): writes a SimGrid platform, one Full zone, holding every host
# pair's route of a DRAGONFLY cluster with topo_parameters "G,g;C,c;R,r;N" (bw 12.5GBps, lat
# 1us), either as SimGrid 3.32's DragonflyZone::get_local_route lists its links ("simgrid":
# after a green hop it believes itself in chassis 0) or as the path the hops take ("path",
# what collsim routes).  SimGrid on the "simgrid" file gives its DRAGONFLY cluster's times;
# SimGrid on the "path" file gives collsim's when latencies do not matter.  Routers R_g_c_b get
# one-link routes first so that collsim, which infers the graph from the routes, reads it too.
# usage: dragonfly_routes.py "2,1;2,1;2,1;2" simgrid|path [SPLITDUPLEX|SHARED] > out.xml
# (with SHARED, drop the link_ctn direction attributes: sed 's/ direction="[A-Z]*"//g')
import sys
G, g, C, c, R, r, N = map(int, sys.argv[1].replace(';', ',').split(','))
mode = sys.argv[2]
pol = sys.argv[3] if len(sys.argv) > 3 else "SPLITDUPLEX"
bw, lat = 12.5e9, 1e-6
H = G * C * R * N
links = {}
def link(name, mult):
    links[name] = mult
    return name
def hop(a, b):  # routers a=(g,c,b) -> b: returns (link, direction)
    ga, ca, ba = a; gb, cb, bb = b
    if ga != gb:
        lo, hi = min(ga, gb), max(ga, gb)
        return link(f"blue_{lo}_{hi}", g), "UP" if ga < gb else "DOWN"
    if ca == cb:
        lo, hi = min(ba, bb), max(ba, bb)
        return link(f"green_{ga}_{ca}_{lo}_{hi}", r), "UP" if ba < bb else "DOWN"
    assert ba == bb, (a, b)
    lo, hi = min(ca, cb), max(ca, cb)
    return link(f"black_{ga}_{lo}_{hi}_{ba}", c), "UP" if ca < cb else "DOWN"
def coords(h):
    rr = h // N
    return (rr // (C * R), rr // R % C, rr % R)
def route(s, t):
    me, tg = coords(s), coords(t)
    out = [(link(f"local_{s}", 1), "UP")]
    cur = me
    if tg != me:
        if tg[0] != cur[0]:
            if cur[2] != tg[0]:
                nxt = (me[0], me[1], tg[0]); out.append(hop(cur, nxt)); cur = nxt
            if cur[1] != 0:
                nxt = (me[0], 0, tg[0]); out.append(hop(cur, nxt)); cur = nxt
            nxt = (tg[0], 0, me[0]); out.append(hop(cur, nxt)); cur = nxt
        if tg[2] != cur[2]:
            nxt = (tg[0], cur[1], tg[2]); out.append(hop(cur, nxt))
            cur = (tg[0], 0, tg[2]) if mode == "simgrid" else nxt  # SimGrid: chassis 0
        if tg[1] != cur[1]:
            # SimGrid charges currentRouter->black_links_[t.c] of the router it believes in
            out.append(hop(cur, (tg[0], tg[1], tg[2])))
    out.append((link(f"local_{t}", 1), "DOWN"))
    return out
print("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n  <zone id=\"w\" routing=\"Full\">")
for h in range(H):
    print(f'    <host id="h{h}" speed="1Gf"/>')
routes = {(s, t): route(s, t) for s in range(H) for t in range(H) if s != t}
for gg in range(G):
    for cc in range(C):
        for bb in range(R):
            print(f'    <router id="R_{gg}_{cc}_{bb}"/>')
for name, m in links.items():
    print(f'    <link id="{name}" bandwidth="{bw * m:.17g}Bps" latency="1us" sharing_policy="{pol}"/>')
for h in range(H):
    cc = coords(h)
    print(f'    <route src="h{h}" dst="R_{cc[0]}_{cc[1]}_{cc[2]}" symmetrical="NO"><link_ctn id="local_{h}" direction="UP"/></route>')
for a in [(x, y, z) for x in range(G) for y in range(C) for z in range(R)]:
    for b in [(x, y, z) for x in range(G) for y in range(C) for z in range(R)]:
        if a < b and ((a[0] == b[0] and sum(p != q for p, q in zip(a, b)) == 1) or (a[1] == 0 and b[1] == 0 and a[2] == b[0] and b[2] == a[0])):
            l, d = hop(a, b)
            if l in links:
                print(f'    <route src="R_{a[0]}_{a[1]}_{a[2]}" dst="R_{b[0]}_{b[1]}_{b[2]}" symmetrical="NO"><link_ctn id="{l}" direction="{d}"/></route>')
for (s, t), ls in routes.items():
    print(f'    <route src="h{s}" dst="h{t}" symmetrical="NO">' + "".join(f'<link_ctn id="{l}" direction="{d}"/>' for l, d in ls) + "</route>")
print("  </zone>\n</platform>")
