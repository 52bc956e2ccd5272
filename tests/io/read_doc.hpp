// A scenario object read as a scenario file named doc.json would be (schema required), against
// a catalog of the built-ins: lets a test edit a document and read it back.
#pragma once

#include <nlohmann/json.hpp>

#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"

namespace capsim::testing {

inline Scenario read_doc(const nlohmann::json& doc) {
  io::JsonReader r(doc, "doc.json");
  return io::read_scenario(r, true);
}

}  // namespace capsim::testing
