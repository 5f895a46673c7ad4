// With SimGrid's energy plugin (Batsim -E), does a 1-byte message from a compute host to the master
// host update the sender host's energy when it arrives?  On SimGrid 3.32's ptask_L07 model a message
// is an action on both hosts, and the plugin updates the hosts of every action that ends:
//   g++ -O1 -std=c++17 message_energy.cpp -o message_energy -lsimgrid
//   ./message_energy ../../tests/data/network/cluster16.xml --log=root.thres:critical \
//       --log=host_energy.thres:debug "--log=root.fmt:%m%n" 2>&1 | grep "update_energy of host3"
// shows host3 updated at 1 (its actor's sleep ends) and at 1.0016 (its message arrives).
#include <simgrid/s4u.hpp>
#include <simgrid/plugins/energy.h>
#include <cstdio>
namespace sg4 = simgrid::s4u;

static void sender()
{
  sg4::this_actor::sleep_for(1);
  static int payload;
  sg4::Mailbox::by_name("server")->put(&payload, 1);
  printf("put done %.17g\n", sg4::Engine::get_clock());
}

static void receiver()
{
  sg4::Mailbox::by_name("server")->get<int>();
  printf("got %.17g\n", sg4::Engine::get_clock());
}

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);
  sg_host_energy_plugin_init();
  e.set_config("host/model:ptask_L07");
  e.load_platform(argv[1]);
  sg4::Actor::create("sender", e.host_by_name("host3"), sender);
  sg4::Actor::create("receiver", e.host_by_name("master_host0"), receiver);
  e.run();
  return 0;
}
