#include "sim/simulated_report.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/report_bytes.hpp"

namespace capsim::sim {

// Fields in a fixed order: the parent reads them back in the same order.
std::string encode_simulated(const SimulationResult& r) {
  const TimeBreakdown& b = r.breakdown;
  ReportWriter out;
  for (const double v : {r.iteration_time_s, b.compute_s, b.tp_comm_exposed_s, b.cp_comm_exposed_s,
                         b.ep_comm_exposed_s, b.pp_comm_exposed_s, b.dp_comm_exposed_s, b.bubble_s,
                         b.optimizer_s, b.other_s})
    out.put_double(v);
  out.put_int(b.stage);
  out.put_int(static_cast<std::int64_t>(b.stage_busy_s.size()));
  for (const double s : b.stage_busy_s)
    out.put_double(s);
  out.put_int(static_cast<std::int64_t>(r.notes.size()));
  for (const std::string& note : r.notes)
    out.put_string(note);
  return out.bytes();
}

namespace {

// Returns a count read from a report (the reads it counts throw when the report is shorter).
std::size_t get_count(ReportReader& in) {
  const std::int64_t n = in.get_int();
  if (n < 0)
    throw std::runtime_error("child report has a negative count");
  return static_cast<std::size_t>(n);
}

}  // namespace

// The parent's side of encode_simulated: the event engine's numbers and notes, the rest unset.
SimulationResult decode_simulated(const std::string& bytes) {
  ReportReader in(bytes);
  SimulationResult r;
  TimeBreakdown& b = r.breakdown;
  for (double* v : {&r.iteration_time_s, &b.compute_s, &b.tp_comm_exposed_s, &b.cp_comm_exposed_s,
                    &b.ep_comm_exposed_s, &b.pp_comm_exposed_s, &b.dp_comm_exposed_s, &b.bubble_s,
                    &b.optimizer_s, &b.other_s})
    *v = in.get_double();
  b.stage = static_cast<int>(in.get_int());
  for (std::size_t i = get_count(in); i > 0; --i)
    b.stage_busy_s.push_back(in.get_double());
  for (std::size_t i = get_count(in); i > 0; --i)
    r.notes.push_back(in.get_string());
  in.finish();
  return r;
}

}  // namespace capsim::sim
