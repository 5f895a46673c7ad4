// A computation ending exactly at its walltime, on the real SimGrid 3.32: does Batsim's job actor
// (exec_init + start + wait_for(walltime)) see it complete or time out?  Both actions end in the
// same SimGrid step.  Prints "success": the execution answers the actor first.
//   g++ -O1 -std=c++17 walltime_tie.cpp -o walltime_tie -lsimgrid && ./walltime_tie START NOISE
// START: when the job starts; NOISE: how many sleeps of another actor cut the clock meanwhile.
#include <simgrid/s4u.hpp>
#include <simgrid/Exception.hpp>
#include <cstdio>
#include <cstdlib>
namespace sg4 = simgrid::s4u;
static double start = 0;
static int noise = 0;

static void job()
{
  if (start > 0) sg4::this_actor::sleep_for(start);
  std::vector<sg4::Host*> hosts{sg4::this_actor::get_host()};
  std::vector<double> flops{2e9}, bytes;           // 20 s at 100 Mf
  auto exec = sg4::this_actor::exec_init(hosts, flops, bytes);
  const char* result = "success";
  try { exec->start(); exec->wait_for(20); } catch (const simgrid::TimeoutException&) { result = "timeout"; }
  printf("start %.17g end %.17g %s\n", start, sg4::Engine::get_clock(), result);
}

static void other()
{
  for (int i = 0; i < noise; i++) sg4::this_actor::sleep_for(0.37 + i * 1e-3);
}

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);
  e.set_config("host/model:ptask_L07");
  auto* zone = sg4::create_full_zone("z");
  auto* host = zone->create_host("h0", "100.0Mf")->seal();
  zone->seal();
  start = argc > 1 ? atof(argv[1]) : 0;
  noise = argc > 2 ? atoi(argv[2]) : 0;
  sg4::Actor::create("job", host, job);
  sg4::Actor::create("other", host, other);
  e.run();
  return 0;
}
