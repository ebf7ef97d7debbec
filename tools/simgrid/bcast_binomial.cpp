// Binomial broadcast of N bytes from rank 0 on P hosts, SimGrid S4U (the peer side of tools/simgrid-check, collsim
// issue 18). Rank rel receives from rel - lowbit(rel), then sends to rel + mask for every mask
// below lowbit(rel) (the root: below 2^ceil(log2 P)), farthest child first, one send at a time
// (blocking put): collsim's broadcast/binomial under its one-send-at-a-time rule.
// Hosts are taken in the order the platform lists them (get_all_hosts sorted by name is NOT
// used: the order is given on the command line as a prefix + count).
// usage: bcast_binomial PLATFORM.xml PREFIX P [BYTES] [--cfg=...]
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace sg4 = simgrid::s4u;
static int P;
static long long NBYTES = 1048576;

static void rank_main(int rel)
{
  sg4::Mailbox* me = sg4::Mailbox::by_name("mb" + std::to_string(rel));
  int L = 0;
  while ((1 << L) < P)
    L++;
  int top = rel ? (rel & -rel) : (1 << L);
  static char token;
  if (rel) {
    char* got = me->get<char>();
    (void)got;
  }
  for (int mask = top >> 1; mask > 0; mask >>= 1) {
    if (rel + mask >= P)
      continue;
    sg4::Mailbox::by_name("mb" + std::to_string(rel + mask))->put(&token, (uint64_t)NBYTES);
  }
}

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);
  if (argc < 4) {
    fprintf(stderr, "usage: %s PLATFORM.xml PREFIX P [BYTES]\n", argv[0]);
    return 2;
  }
  e.load_platform(argv[1]);
  std::string prefix = argv[2];
  P = atoi(argv[3]);
  if (argc > 4)
    NBYTES = atoll(argv[4]);
  for (int i = 0; i < P; i++)
    sg4::Actor::create("r" + std::to_string(i), sg4::Host::by_name(prefix + std::to_string(i)),
                       rank_main, i);
  e.run();
  printf("finish %.17g s\n", sg4::Engine::get_clock());
  return 0;
}
