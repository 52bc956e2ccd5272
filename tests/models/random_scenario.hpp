#pragma once

// Random valid scenarios for property tests: the same sequence on every platform, each passing
// every rule of the scenario reader.

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/catalog.hpp"
#include "models/scenario.hpp"

#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"

namespace capsim::test {

// splitmix64: the same sequence on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31U);
  }
  template <typename T>
  T pick(const std::vector<T>& values) {
    return values[next() % values.size()];
  }
  bool coin() { return (next() & 1U) != 0; }

 private:
  std::uint64_t state_;
};

inline ModelSpec random_model(Rng& rng) {
  ModelSpec m;
  m.name = "sweep";
  m.num_layers = rng.pick(std::vector<int>{8, 12, 16, 24, 32});
  m.hidden_size = rng.pick(std::vector<int>{1024, 2048, 4096});
  m.num_attention_heads = m.hidden_size / 128;
  m.num_kv_heads = rng.coin() ? m.num_attention_heads : m.num_attention_heads / 4;
  m.ffn_activation = rng.coin() ? FfnActivation::kGelu : FfnActivation::kSwiglu;
  m.ffn_hidden_size = m.ffn_activation == FfnActivation::kGelu ? 4 * m.hidden_size
                                                               : 8 * m.hidden_size / 3 / 64 * 64;
  m.seq_length = rng.pick(std::vector<int>{1024, 2048, 8192});
  m.vocab_size = rng.pick(std::vector<int>{32000, 51200});
  return m;
}

inline ClusterSpec random_cluster(Rng& rng) {
  ClusterSpec c;
  c.gpu = *builtin_catalog().find_gpu(
      rng.pick(std::vector<std::string>{"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB"}));
  c.gpus_per_node = 8;
  c.num_nodes = rng.pick(std::vector<int>{1, 2, 4, 8});
  c.intra_node_bandwidth_bytes_per_s = c.gpu.name[0] == 'H' ? 450e9 : 300e9;
  c.has_inter_node = c.num_nodes > 1;
  if (c.has_inter_node) {
    c.inter_node_fabric =
        rng.pick(std::vector<Fabric>{Fabric::kInfiniband, Fabric::kRoce, Fabric::kEfa});
    c.nics_per_node = c.inter_node_fabric == Fabric::kEfa && c.gpu.name[0] == 'A' ? 4 : 8;
    c.nic_bandwidth_bytes_per_s = c.gpu.name[0] == 'H' ? 50e9 : 25e9;
    c.topology = rng.pick(std::vector<Topology>{Topology::kRailOptimized, Topology::kFatTree,
                                                Topology::kOversubscribed});
    if (c.topology == Topology::kOversubscribed) {
      c.oversubscription = 2.0;
      c.nodes_per_leaf = 2;
    }
  }
  return c;
}

inline Parallelism random_layout(Rng& rng, const ClusterSpec& cluster) {
  Parallelism p;
  p.tensor = rng.pick(std::vector<int>{1, 2, 4, 8});
  p.context = rng.pick(std::vector<int>{1, 1, 2});
  p.pipeline = rng.pick(std::vector<int>{1, 2, 4});
  p.data = std::max(1, cluster.num_gpus() / (p.tensor * p.context * p.pipeline));
  p.micro_batch_size = rng.pick(std::vector<int>{1, 2});
  p.global_batch_size =
      p.micro_batch_size * p.data * p.pipeline * rng.pick(std::vector<int>{1, 2, 4});
  p.schedule = rng.pick(std::vector<Schedule>{Schedule::kOneFOneB, Schedule::kGpipe,
                                              Schedule::kInterleaved, Schedule::kZeroBubble});
  if (p.pipeline == 1)
    p.schedule = Schedule::kOneFOneB;
  if (p.schedule == Schedule::kInterleaved)
    p.virtual_pipeline_stages = 2;
  p.recompute =
      rng.pick(std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull});
  p.sequence_parallel = p.tensor > 1 && rng.coin();
  p.tp_comm_overlap = p.sequence_parallel && rng.coin();
  p.zero_stage = rng.pick(std::vector<int>{0, 1, 2, 3});
  p.overlap_grad_reduce = p.zero_stage == 3 || rng.pick(std::vector<bool>{true, true, false});
  p.precision = cluster.gpu.name[0] == 'H' && rng.coin() ? Precision::kFp8 : Precision::kBf16;
  return p;
}

// `s` written as a scenario file and read back, or the reader's error: every rule of the
// scenario reader, not only the layout rules (e.g. overlap_grad_reduce applies to ZeRO 0-2 only).
inline Scenario read_back(const Scenario& s) {
  const nlohmann::json doc = io::scenario_to_json(s);
  io::JsonReader reader(doc, "sweep.json");
  return io::read_scenario(reader, true);
}

inline bool is_valid_input(const Scenario& s) {
  try {
    (void)read_back(s);
    return true;
  } catch (const io::InputError&) {
    return false;
  }
}

// A random scenario that passes every rule of the scenario reader.
inline Scenario random_scenario(Rng& rng) {
  std::string last_error;
  for (int attempt = 0; attempt < 10000; ++attempt) {
    Scenario s;
    s.name = "sweep";
    s.model = random_model(rng);
    s.cluster = random_cluster(rng);
    s.parallelism = random_layout(rng, s.cluster);
    try {
      return read_back(s);
    } catch (const io::InputError& e) {
      last_error = e.what();
    }
  }
  throw std::logic_error("random_scenario: no valid scenario in 10,000 draws; last: " + last_error);
}

}  // namespace capsim::test
