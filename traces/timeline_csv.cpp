#include "traces/timeline_csv.hpp"

#include "io/text_format.hpp"

namespace capsim::traces {

void write_timeline_csv(std::ostream& out, const std::vector<Timeline>& timelines) {
  out << "series,time_s,nodes_booting,nodes_idle,nodes_busy,nodes_draining,nodes_failed,"
         "gpus_busy,jobs_running,jobs_queued\n";
  for (const auto& t : timelines) {
    for (const auto& s : t.samples) {
      out << t.name << ',' << io::printf_string("%.0f", s.time_s) << ',' << s.nodes_booting << ','
          << s.nodes_idle << ',' << s.nodes_busy << ',' << s.nodes_draining << ',' << s.nodes_failed
          << ',' << s.gpus_busy << ',' << s.jobs_running << ',' << s.jobs_queued << '\n';
    }
  }
}

}  // namespace capsim::traces
