#include "traces/timeline_csv.hpp"

#include <array>
#include <cstdio>

namespace capsim::traces {

void write_timeline_csv(std::ostream& out, const std::vector<Timeline>& timelines) {
  out << "series,time_s,nodes_booting,nodes_idle,nodes_busy,nodes_draining,nodes_failed,"
         "gpus_busy,jobs_running,jobs_queued\n";
  std::array<char, 32> time{};
  for (const auto& t : timelines) {
    for (const auto& s : t.samples) {
      std::snprintf(time.data(), time.size(), "%.0f", s.time_s);
      out << t.name << ',' << time.data() << ',' << s.nodes_booting << ',' << s.nodes_idle << ','
          << s.nodes_busy << ',' << s.nodes_draining << ',' << s.nodes_failed << ',' << s.gpus_busy
          << ',' << s.jobs_running << ',' << s.jobs_queued << '\n';
    }
  }
}

}  // namespace capsim::traces
