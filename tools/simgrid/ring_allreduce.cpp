// Ring allreduce of N bytes on P hosts, SimGrid S4U (the peer side of tools/simgrid-check).
// 2(P-1) steps: reduce-scatter (step s: rank i sends piece (i-s-1) mod P, receives (i-s-2) mod P)
// then allgather (step s: sends piece (i-s) mod P, receives (i-s-1) mod P); piece j of the
// N-byte vector has N/P bytes, the first N%P pieces one byte more. Each step: isend right,
// irecv left, wait both. No compute (reduction cost 0).
// Sends are eager, as collsim's executor makes them (docs/engine.md, "Sends are eager"): each
// rank is its mailbox's permanent receiver (Mailbox::set_receiver), so a step's message starts
// flowing when its sender posts it, not when the receiver has finished its previous step (S4U's
// default rendezvous).  Ranks whose steps end at different times (a 2-hop and a 4-hop neighbour
// on a fat-tree) otherwise start their next messages later than collsim's.
// usage: ring_allreduce PLATFORM.xml P [BYTES] [--cfg=...]  (hosts h0..h(P-1))
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

static int P;
static long long NBYTES = 1048576;
static std::vector<long long> piece;

static int mod(int a, int m) { return ((a % m) + m) % m; }

static void rank_main(int i)
{
  sg4::Mailbox* right = sg4::Mailbox::by_name("mb" + std::to_string((i + 1) % P));
  sg4::Mailbox* me    = sg4::Mailbox::by_name("mb" + std::to_string(i));
  static char token;
  me->set_receiver(sg4::Actor::self());
  for (int phase = 0; phase < 2; phase++) {
    for (int s = 0; s < P - 1; s++) {
      int ps = phase == 0 ? mod(i - s - 1, P) : mod(i - s, P);
      sg4::CommPtr snd = right->put_async(&token, (uint64_t)piece[ps]);
      char* got = nullptr;
      sg4::CommPtr rcv = me->get_async<char>(&got);
      snd->wait();
      rcv->wait();
    }
  }
}

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);  // consumes --cfg=...
  if (argc < 3) {
    fprintf(stderr, "usage: %s PLATFORM.xml P [BYTES]\n", argv[0]);
    return 2;
  }
  e.load_platform(argv[1]);
  P = atoi(argv[2]);
  if (argc > 3)
    NBYTES = atoll(argv[3]);
  piece.resize(P);
  for (int j = 0; j < P; j++)
    piece[j] = NBYTES / P + (j < NBYTES % P ? 1 : 0);
  std::vector<sg4::Host*> hosts = e.get_all_hosts();
  if ((int)hosts.size() != P) {
    fprintf(stderr, "platform has %zu hosts, expected %d\n", hosts.size(), P);
    return 2;
  }
  for (int i = 0; i < P; i++) {
    sg4::Host* h = sg4::Host::by_name("h" + std::to_string(i));
    sg4::Actor::create("r" + std::to_string(i), h, rank_main, i);
  }
  e.run();
  printf("finish %.17g s\n", sg4::Engine::get_clock());
  return 0;
}
