#include "io/result_io.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "models/byte_units.hpp"

#include "io/rounding.hpp"
#include "io/text_format.hpp"

namespace capsim::io {
namespace {

std::string line(const char* label, const std::string& value) {
  return printf_string("  %-28s %s\n", label, value.c_str());
}

std::string seconds_with_share(double part_s, double total_s) {
  return printf_string("%10.4f s  %5.1f%%", part_s, total_s > 0 ? 100.0 * part_s / total_s : 0.0);
}

// Each stage's busy time, or for long pipelines the lightest and the busiest: how evenly the
// layers are split.
std::string stage_busy_times(const std::vector<double>& busy_s, int busiest) {
  constexpr size_t kListed = 8;
  if (busy_s.size() <= kListed) {
    std::string out;
    for (const double s : busy_s)
      out += (out.empty() ? "" : " / ") + printf_string("%.4g", s);
    return out + " s";
  }
  // The first of the lightest, up to rounding (the event engine's sums differ in the last bits).
  const double least_s = *std::min_element(busy_s.begin(), busy_s.end());
  const auto lightest = std::find_if(busy_s.begin(), busy_s.end(),
                                     [&](double s) { return s <= least_s * (1.0 + 1e-9); });
  return printf_string("%.4g s (stage %td) to %.4g s (stage %d)", *lightest,
                       lightest - busy_s.begin(), busy_s[static_cast<size_t>(busiest)], busiest);
}

}  // namespace

nlohmann::json result_to_json(const SimulationResult& r) {
  using nlohmann::json;
  const auto g = [](double v) { return round_significant(v); };
  const auto& b = r.breakdown;
  json stage_busy = json::array();
  for (const double s : b.stage_busy_s)
    stage_busy.push_back(g(s));
  json stages = json::array();
  for (const auto& s : r.memory.stages) {
    stages.push_back({{"stage", s.stage},
                      {"total_gib", g(s.total_bytes() / kGiB)},
                      {"weights_gib", g(s.weights_bytes / kGiB)},
                      {"gradients_gib", g(s.gradients_bytes / kGiB)},
                      {"optimizer_gib", g(s.optimizer_bytes / kGiB)},
                      {"activations_gib", g(s.activations_bytes / kGiB)},
                      {"embedding_logits_gib", g(s.embedding_logits_bytes / kGiB)},
                      {"communication_gib", g(s.communication_bytes / kGiB)},
                      {"reserve_gib", g(s.reserve_bytes / kGiB)},
                      {"micro_batches_in_flight", s.micro_batches_in_flight}});
  }
  json result{{"engine", r.engine},
              {"scenario", r.scenario_name},
              {"profile", r.profile_name},
              {"software_efficiency", g(r.software_efficiency)},
              {"num_gpus", r.num_gpus},
              {"micro_batches", r.micro_batches},
              {"iteration_time_s", g(r.iteration_time_s)},
              {"tokens_per_s", g(r.tokens_per_s)},
              {"tokens_per_s_per_gpu", g(r.tokens_per_s_per_gpu)},
              {"model_tflops_per_gpu", g(r.model_tflops_per_gpu)},
              {"mfu", g(r.mfu)},
              {"hfu", g(r.hfu)},
              {"memory",
               {{"peak_gib_per_gpu", g(r.memory.peak_bytes / kGiB)},
                {"capacity_gib", g(r.memory.capacity_bytes / kGiB)},
                {"fits", r.memory.fits},
                {"worst_stage", r.memory.worst_stage},
                {"stages", stages}}},
              {"breakdown",
               {{"compute_s", g(b.compute_s)},
                {"tp_comm_exposed_s", g(b.tp_comm_exposed_s)},
                {"cp_comm_exposed_s", g(b.cp_comm_exposed_s)},
                {"pp_comm_exposed_s", g(b.pp_comm_exposed_s)},
                {"dp_comm_exposed_s", g(b.dp_comm_exposed_s)},
                {"bubble_s", g(b.bubble_s)},
                {"optimizer_s", g(b.optimizer_s)},
                {"other_s", g(b.other_s)},
                {"stage", b.stage},
                {"stage_busy_s", stage_busy}}},
              {"notes", r.notes}};
  // Only MoE models exchange tokens between expert-parallel ranks.
  if (b.ep_comm_exposed_s > 0.0)
    result["breakdown"]["ep_comm_exposed_s"] = g(b.ep_comm_exposed_s);
  return result;
}

std::string result_table(const SimulationResult& r) {
  std::string out;
  out += "capsim simulate: " + r.scenario_name + " (" + r.engine + " engine, profile " +
         r.profile_name + ", kernels at " + printf_string("%.3g", r.software_efficiency) +
         " of benchmark speed)\n";
  out += line("GPUs / micro-batches",
              std::to_string(r.num_gpus) + " / " + std::to_string(r.micro_batches));
  out += line("iteration time", printf_string("%.4f s", r.iteration_time_s));
  out += line("tokens/s (per GPU)", printf_string("%.6g", r.tokens_per_s) + " (" +
                                        printf_string("%.6g", r.tokens_per_s_per_gpu) + ")");
  out += line("model TFLOP/s per GPU", printf_string("%.1f", r.model_tflops_per_gpu));
  out += line("MFU / HFU", printf_string("%.1f%%", 100.0 * r.mfu) + " / " +
                               printf_string("%.1f%%", 100.0 * r.hfu));
  out +=
      line("memory peak per GPU", printf_string("%.1f GiB", r.memory.peak_bytes / kGiB) + " of " +
                                      printf_string("%.0f GiB", r.memory.capacity_bytes / kGiB) +
                                      " (stage " + std::to_string(r.memory.worst_stage) + ")" +
                                      (r.memory.fits ? ", fits" : ", DOES NOT FIT"));
  const auto& b = r.breakdown;
  const double t = r.iteration_time_s;
  out += "  breakdown of the iteration (stage " + std::to_string(b.stage) + ", the busiest):\n";
  out += line("  compute", seconds_with_share(b.compute_s, t));
  out += line("  TP communication (exposed)", seconds_with_share(b.tp_comm_exposed_s, t));
  out += line("  CP communication (exposed)", seconds_with_share(b.cp_comm_exposed_s, t));
  if (b.ep_comm_exposed_s > 0.0)
    out += line("  EP communication (exposed)", seconds_with_share(b.ep_comm_exposed_s, t));
  out += line("  PP communication (exposed)", seconds_with_share(b.pp_comm_exposed_s, t));
  out += line("  DP communication (exposed)", seconds_with_share(b.dp_comm_exposed_s, t));
  out += line("  pipeline bubble", seconds_with_share(b.bubble_s, t));
  out += line("  optimizer step", seconds_with_share(b.optimizer_s, t));
  if (b.other_s > 0.0)
    out += line("  framework overhead", seconds_with_share(b.other_s, t));
  if (b.stage_busy_s.size() > 1)
    out += line("busy time per stage", stage_busy_times(b.stage_busy_s, b.stage));
  for (const auto& note : r.notes)
    out += "  note: " + note + "\n";
  return out;
}

}  // namespace capsim::io
