#include "io/layout_ranking.hpp"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/rank_correlation.hpp"

#include "io/scenario_io.hpp"

namespace capsim::io {
namespace {

double tokens_per_iteration(const Scenario& s) {
  return static_cast<double>(s.parallelism.global_batch_size) * s.model.seq_length;
}

}  // namespace

std::vector<LayoutRanking> rank_layouts(const std::vector<const ValidationCase*>& cases,
                                        const std::vector<double>& predicted_s,
                                        size_t min_layouts) {
  // The model and cluster sections as written decide the group; the parallelism the layout.
  std::vector<std::string> keys;
  std::map<std::string, LayoutRanking> groups;
  std::map<std::string, std::set<std::string>> layouts;
  for (size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json j = scenario_to_json(cases[i]->scenario);
    const std::string key = j.at("model").dump() + j.at("cluster").dump();
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) {
      keys.push_back(key);
      const Scenario& s = cases[i]->scenario;
      it->second.label =
          s.model.name + " on " + std::to_string(s.cluster.num_gpus()) + " x " + s.cluster.gpu.name;
    }
    it->second.cases.push_back(i);
    layouts[key].insert(j.at("parallelism").dump());
  }
  std::vector<LayoutRanking> out;
  for (const std::string& key : keys) {
    LayoutRanking g = groups.at(key);
    g.layouts = layouts.at(key).size();
    if (g.layouts < min_layouts)
      continue;
    std::vector<double> predicted;
    std::vector<double> measured;
    for (const size_t i : g.cases) {
      const double tokens = tokens_per_iteration(cases[i]->scenario);
      predicted.push_back(tokens / predicted_s[i]);
      measured.push_back(tokens / cases[i]->measured_iteration_time_s);
    }
    g.spearman = spearman_rank_correlation(predicted, measured);
    size_t pick = 0;
    size_t best = 0;
    for (size_t k = 1; k < g.cases.size(); ++k) {
      pick = predicted[k] > predicted[pick] ? k : pick;
      best = measured[k] > measured[best] ? k : best;
    }
    g.pick = g.cases[pick];
    g.best = g.cases[best];
    g.pick_cost_pct = 100.0 * (measured[best] / measured[pick] - 1.0);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace capsim::io
