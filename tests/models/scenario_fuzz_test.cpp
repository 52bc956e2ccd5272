// Robustness: seeded random mutations of a valid scenario are either accepted or rejected with
// an InputError naming the file; nothing else escapes, and accepted scenarios estimate to a
// finite, positive iteration time.
#include <cmath>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "models/datasheet_profile.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/input_error.hpp"
#include "io/scenario_io.hpp"

namespace capsim {
namespace {

nlohmann::json random_value(std::mt19937_64& rng) {
  switch (rng() % 7) {
    case 0:
      return static_cast<std::int64_t>(rng() % 5) - 1;
    case 1:
      return static_cast<std::int64_t>(rng() % 100000);
    case 2:
      return 0.5;
    case 3:
      return "200Gbps";
    case 4:
      return nlohmann::json::array({1, 2});
    case 5:
      return nlohmann::json::object();
    default:
      return true;
  }
}

// Replaces, deletes or adds one key somewhere in the object tree.
void mutate(nlohmann::json& doc, std::mt19937_64& rng) {
  nlohmann::json* node = &doc;
  while (true) {
    std::vector<std::string> keys;
    for (const auto& item : node->items())
      keys.push_back(item.key());
    if (keys.empty())
      return;
    const std::string& key = keys[rng() % keys.size()];
    nlohmann::json& child = node->at(key);
    if (child.is_object() && rng() % 3 != 0) {
      node = &child;
      continue;
    }
    switch (rng() % 3) {
      case 0:
        child = random_value(rng);
        break;
      case 1:
        node->erase(key);
        break;
      default:
        (*node)["extra_" + std::to_string(rng() % 10)] = random_value(rng);
        break;
    }
    return;
  }
}

TEST(ScenarioFuzzTest, MutationsNeverEscapeAsAnythingButInputError) {
  std::ifstream in(std::string(CAPSIM_TEST_DATA_DIR) + "/scenarios/valid.json");
  const nlohmann::json valid = nlohmann::json::parse(in);
  std::mt19937_64 rng(301);
  int accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    nlohmann::json doc = valid;
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < mutations; ++k)
      mutate(doc, rng);
    try {
      io::JsonReader reader(doc, "fuzz.json");
      const Scenario s = io::read_scenario(reader, true);
      const HardwareProfile p = datasheet_profile(s.cluster.gpu, s.cluster);
      const double t = estimate::estimate_iteration(s, p).iteration_time_s;
      EXPECT_TRUE(std::isfinite(t) && t > 0.0) << doc.dump();
      ++accepted;
    } catch (const io::InputError& e) {
      EXPECT_EQ(e.file(), "fuzz.json");
      EXPECT_FALSE(e.pointer().empty()) << e.what();
    }
  }
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace capsim
