// minibatsim: a study model of Batsim 4.2.1's actors (server, submitter, waiters, request-reply,
// job executors, switch actors, energy tracer) written from reading Batsim's sources, run on the
// real SimGrid 3.32 and replaying a golden case's recorded scheduler replies.  It prints Batsim's
// requests (now|events), to compare with the recording; MB_TRACE=1 also logs every isend, receive,
// mailbox check and energy row (--log=mb.thres:info), MB_NOENERGY=1 runs as Batsim without -E (no
// energy plugin, no energy reads).  Every message is a 1-byte put from its actor's host to the
// server's mailbox on the master host: SimGrid routes it over the platform's links.  See README.md.
#include <simgrid/s4u.hpp>
#include <simgrid/plugins/energy.h>
#include <simgrid/Exception.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <map>
#include <set>
#include <deque>
#include <algorithm>
#include <cmath>

namespace sg4 = simgrid::s4u;
XBT_LOG_NEW_DEFAULT_CATEGORY(mb, "mini batsim");

enum T { HELLO, SUBMITTED, BYE, COMPLETED, READY, WAITING_DONE, CML, PSTATE_MOD, SWITCHED, EXEC, REJECT };
struct Msg { T type; std::vector<std::string> jobs; double target = 0; int machine = -1; int pstate = -1;
             std::vector<int> ids; std::string label; std::string job; };

struct Job { std::string id; double subtime, walltime; int res; double cpu; bool delay; std::string state; };
struct Event { std::string kind; double t; std::string a, b; std::vector<int> ids; double target; };
struct Reply { double now; std::vector<Event> events; };

static std::vector<Job> jobs;
static std::map<std::string, Job*> job_by_id;
static std::deque<Reply> replies;
static std::vector<sg4::Host*> machines;      // by id
static sg4::Host* master;
static sg4::Mailbox* mbox;
static FILE* out;
static bool energy = getenv("MB_NOENERGY") == nullptr;
static int sleep_ps = -1, on_ps = -1, off_ps = -1;   // one sleep pstate (sleep_pstates), if any
static bool trace = getenv("MB_TRACE") != nullptr;

// Batsim's machine states (sleeping, switching on, switching off, idle, computing) and its rows
enum MS { SLEEPING, SW_ON, SW_OFF, IDLE, COMPUTING };
static std::vector<int> state;                // by machine id
static int counts[5];
static FILE* ms_out = nullptr;
static FILE* en_out = nullptr;
static long double last_date = 0, last_energy = 0;
static void set_state(int id, MS s) { counts[state[id]]--; counts[s]++; state[id] = s; }
static void ms_row()
{
  if (ms_out) fprintf(ms_out, "%g,%d,%d,%d,%d,%d\n", sg4::Engine::get_clock(), counts[SLEEPING], counts[SW_ON],
                      counts[SW_OFF], counts[IDLE], counts[COMPUTING]);
}

static void put(Msg* m) { if (trace) XBT_INFO("isend %.17g type=%d machine=%d", sg4::Engine::get_clock(), m->type, m->machine); mbox->put(m, 1); }

static double total_energy()
{
  double e = 0;
  for (auto* h : machines) e += sg_host_get_consumed_energy(h);
  return e;
}
static void energy_row(char kind)
{
  double date = sg4::Engine::get_clock();
  if (trace) XBT_INFO("energy row %c start", kind);
  long double e = 0, wattmin = 0;
  for (auto* h : machines) e += sg_host_get_consumed_energy(h);
  for (auto* h : machines) wattmin += sg_host_get_wattmin_at(h, h->get_pstate());
  if (trace) XBT_INFO("energy row %c done %.6Lf", kind, e);
  if (en_out) {
    long double dt = (long double)date - last_date;
    if (dt > 0) fprintf(en_out, "%f,%Lf,%c,%Lf,%f\n", date, e, kind, wattmin, (double)((e - last_energy) / dt));
    else fprintf(en_out, "%f,%Lf,%c,%Lf,NA\n", date, e, kind, wattmin);
  }
  last_date = date; last_energy = e;
}

// ---------------------------------------------------------------- actors
static void waiter(double target)
{
  double now = sg4::Engine::get_clock();
  if (now < target) sg4::this_actor::sleep_for(std::max(target - now, 1e-5));
  put(new Msg{WAITING_DONE});
}

static void switch_on(int id, int pstate)
{
  auto* h = machines[id];
  h->set_pstate(on_ps);
  sg4::this_actor::execute(1);
  if (trace) XBT_INFO("exec done");
  h->set_pstate(pstate);
  set_state(id, IDLE);
  Msg* m = new Msg{SWITCHED}; m->machine = id; m->pstate = pstate;
  put(m);
}
static void switch_off(int id, int pstate)
{
  auto* h = machines[id];
  h->set_pstate(off_ps);
  sg4::this_actor::execute(1);
  if (trace) XBT_INFO("exec done");
  h->set_pstate(pstate);
  set_state(id, SLEEPING);
  Msg* m = new Msg{SWITCHED}; m->machine = id; m->pstate = pstate;
  put(m);
}

static double energy_on(const std::vector<int>& ids)
{
  double e = 0;
  for (int i : ids) e += sg_host_get_consumed_energy(machines[i]);
  return e;
}

static void job_process(std::string job_id, std::vector<int> ids)
{
  Job* job = job_by_id[job_id];
  if (energy) { energy_on(ids); energy_row('s'); }
  for (int i : ids) set_state(i, COMPUTING);
  ms_row();
  std::string state = "COMPLETED_SUCCESSFULLY";
  if (job->delay) {      // Batsim's do_delay_task: the delay, or the walltime if it is not longer
    if (job->walltime < 0 || job->cpu < job->walltime) sg4::this_actor::sleep_for(job->cpu);
    else { sg4::this_actor::sleep_for(job->walltime); state = "COMPLETED_WALLTIME_REACHED"; }
  } else {
    std::vector<sg4::Host*> hosts;
    for (int i : ids) hosts.push_back(machines[i]);
    std::vector<double> flops(hosts.size(), job->cpu);
    std::vector<double> bytes;     // no communication: Batsim passes no byte matrix
    auto ptask = sg4::this_actor::exec_init(hosts, flops, bytes);
    if (job->walltime < 0) { ptask->start(); ptask->wait(); }
    else {
      try { ptask->start(); ptask->wait_for(job->walltime); }
      catch (const simgrid::TimeoutException&) { state = "COMPLETED_WALLTIME_REACHED"; }
    }
  }
  job->state = state;
  for (int i : ids) set_state(i, IDLE);
  ms_row();
  if (energy) { energy_on(ids); energy_row('e'); }
  Msg* m = new Msg{COMPLETED}; m->job = job_id;
  put(m);
}

static void submitter()
{
  put(new Msg{HELLO});
  double current = sg4::Engine::get_clock();
  std::vector<Job*> order;
  for (auto& j : jobs) order.push_back(&j);
  std::stable_sort(order.begin(), order.end(), [](Job* a, Job* b) { return a->subtime < b->subtime || (a->subtime == b->subtime && a->id < b->id); });
  std::vector<std::string> batch;
  for (Job* j : order) {
    if (j->subtime > current) {
      if (!batch.empty()) { Msg* m = new Msg{SUBMITTED}; m->jobs = batch; put(m); batch.clear(); }
      sg4::this_actor::sleep_for(j->subtime - current);
      current = sg4::Engine::get_clock();
    }
    batch.push_back(j->id);
    if (energy && j == order.front()) total_energy();   // Batsim's energy_first_job_submission
  }
  if (!batch.empty()) { Msg* m = new Msg{SUBMITTED}; m->jobs = batch; put(m); }
  put(new Msg{BYE});
}

static void at_time(double when, Msg* m)
{
  double now = sg4::Engine::get_clock();
  if (when > now) sg4::this_actor::sleep_for(when - now);
  put(m);
}

static void reqrep()
{
  xbt_assert(!replies.empty(), "no more replies");
  Reply r = replies.front();
  replies.pop_front();
  for (auto& e : r.events) {
    Msg* m = nullptr;
    if (e.kind == "CML") { m = new Msg{CML}; m->target = e.target; }
    else if (e.kind == "EXE") { m = new Msg{EXEC}; m->job = e.a; m->ids = e.ids; }
    else if (e.kind == "SRS") { m = new Msg{PSTATE_MOD}; m->pstate = std::stoi(e.a); m->ids = e.ids; m->label = e.b; }
    else if (e.kind == "REJ") { m = new Msg{REJECT}; m->job = e.a; }
    at_time(e.t, m);
  }
  at_time(r.now, new Msg{READY});
}

// ---------------------------------------------------------------- server
struct Switch { std::set<int> left; std::string label; int pstate; };
static std::map<int, std::vector<Switch*>> switches;

static void server()
{
  std::vector<std::string> events{"SIMULATION_BEGINS"};
  bool ready = false, end_sent = false, ack = false;
  int submitters = 0, submitters_done = 0, nb_sub = 0, nb_done = 0, running = 0, waiters = 0, switching = 0;
  auto send = [&]() {
    std::string s;
    for (size_t i = 0; i < events.size(); i++) s += (i ? ";" : "") + events[i];
    fprintf(out, "%.6f|%s\n", sg4::Engine::get_clock(), s.c_str());
    events.clear();
    sg4::Actor::create("Scheduler REQ-REP", master, reqrep);
    ready = false;
  };
  send();
  while (!ack) {
    Msg* m = mbox->get<Msg>();
    if (trace) XBT_INFO("RECV %.17g type=%d machine=%d", sg4::Engine::get_clock(), m->type, m->machine);
    switch (m->type) {
      case HELLO: submitters++; break;
      case SUBMITTED:
        for (auto& j : m->jobs) { events.push_back("JOB_SUBMITTED " + j); nb_sub++; }
        break;
      case BYE:
        submitters_done++;
        if (submitters_done == 1) events.push_back("NOTIFY no_more_static_job_to_submit");
        break;
      case COMPLETED:
        running--; nb_done++;
        events.push_back("JOB_COMPLETED " + m->job + " " + job_by_id[m->job]->state);
        break;
      case READY: ready = true; if (end_sent) ack = true; break;
      case WAITING_DONE: events.push_back("REQUESTED_CALL"); waiters--; break;
      case CML:
        sg4::Actor::create("waiter", master, waiter, m->target);
        waiters++;
        break;
      case PSTATE_MOD: {
        auto* s = new Switch{std::set<int>(m->ids.begin(), m->ids.end()), m->label, m->pstate};
        switches[m->pstate].push_back(s);
        if (energy) energy_row('p');
        for (int id : m->ids) {
          int cur = machines[id]->get_pstate();
          if (cur != sleep_ps && m->pstate == sleep_ps) {
            set_state(id, SW_OFF);
            sg4::Actor::create("switch OFF", machines[id], switch_off, id, m->pstate);
          } else {
            set_state(id, SW_ON);
            sg4::Actor::create("switch ON", machines[id], switch_on, id, m->pstate);
          }
          switching++;
        }
        ms_row();
        break;
      }
      case SWITCHED: {
        auto& lst = switches[m->pstate];
        for (auto it = lst.begin(); it != lst.end(); ++it) {
          Switch* s = *it;
          if (s->left.count(m->machine)) {
            s->left.erase(m->machine);
            if (s->left.empty()) {
              lst.erase(it);
              if (energy) energy_row('p');
              ms_row();
              events.push_back("RSC " + s->label + " " + std::to_string(s->pstate));
              delete s;
            }
            break;
          }
        }
        switching--;
        break;
      }
      case EXEC:
        running++;
        sg4::Actor::create("job", machines[m->ids[0]], job_process, m->job, m->ids);
        break;
      case REJECT: nb_done++; break;
    }
    delete m;
    if (trace) XBT_INFO("check ready=%d empty=%d", ready, mbox->empty());
    if (ready && !ack && mbox->empty()) {
      if (!events.empty()) send();
      else if (!end_sent && submitters_done == 1 && nb_done == nb_sub && running == 0 && switching == 0 && waiters == 0) {
        events.push_back("SIMULATION_ENDS");
        send();
        end_sent = true;
      }
    }
  }
}

static std::vector<std::string> split(const std::string& s)
{
  std::istringstream is(s); std::vector<std::string> v; std::string w;
  while (is >> w) v.push_back(w);
  return v;
}

int main(int argc, char* argv[])
{
  sg4::Engine e(&argc, argv);
  if (energy) sg_host_energy_plugin_init();     // Batsim -E
  e.set_config("host/model:ptask_L07");
  e.load_platform(argv[1]);
  out = stdout;
  { std::ifstream f("jobs.txt"); std::string line;
    while (std::getline(f, line)) { auto w = split(line);
      jobs.push_back(Job{w[0], std::stod(w[1]), std::stod(w[2]), std::stoi(w[3]), std::stod(w[4]),
                         w.size() > 5 && w[5] == "delay", ""}); } }
  for (auto& j : jobs) job_by_id[j.id] = &j;
  { std::ifstream f("replies.txt"); std::string line;
    while (std::getline(f, line)) { auto w = split(line);
      Reply r{std::stod(w[1]), {}}; int n = std::stoi(w[2]);
      for (int i = 0; i < n; i++) { std::getline(f, line); auto v = split(line); Event ev; ev.kind = v[0]; ev.t = std::stod(v[1]);
        if (ev.kind == "CML") ev.target = std::stod(v[2]);
        else if (ev.kind == "EXE" || ev.kind == "SRS") { ev.a = v[2]; ev.b = v[3]; for (size_t k = 4; k < v.size(); k++) ev.ids.push_back(std::stoi(v[k])); }
        else ev.a = v[2];
        r.events.push_back(ev); }
      replies.push_back(r); } }
  // Batsim's machines: every host but the master (role=master, else named master_host) and the
  // storage hosts (role=storage), in SimGrid's order (by name), ids 0..n-1
  std::vector<sg4::Host*> all = e.get_all_hosts();
  std::sort(all.begin(), all.end(), [](sg4::Host* a, sg4::Host* b) { return a->get_name() < b->get_name(); });
  for (auto* h : all) {
    const char* role = h->get_property("role");
    std::string r = role ? role : "";
    if (r == "master" || (r.empty() && master == nullptr && h->get_name() == "master_host")) master = h;
    else if (r != "storage") machines.push_back(h);
  }
  xbt_assert(master != nullptr, "no master host");
  if (const char* sp = machines[0]->get_property("sleep_pstates")) {
    int a, b, c; sscanf(sp, "%d:%d:%d", &a, &b, &c);
    sleep_ps = a; off_ps = b; on_ps = c; }
  state.assign(machines.size(), IDLE);
  counts[IDLE] = machines.size();
  if (getenv("MB_ROWS")) {     // Batsim's machine_states and consumed_energy rows, to these files
    ms_out = fopen("machine_states.csv", "w");
    en_out = fopen("consumed_energy.csv", "w");
  }
  mbox = sg4::Mailbox::by_name("server");
  sg4::Actor::create("workload_submitter_w0", master, submitter);
  sg4::Actor::create("server", master, server);
  e.run();
  return 0;
}
