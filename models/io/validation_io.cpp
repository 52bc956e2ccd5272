#include "models/io/validation_io.hpp"

#include <set>

#include "models/io/json_reader.hpp"
#include "models/io/scenario_io.hpp"

namespace capsim {

std::vector<ValidationCase> load_validation_cases(const std::string& path) {
  const nlohmann::json doc = JsonReader::parse_file(path);
  JsonReader root(doc, path);
  root.expect_schema(kValidationSchema);
  (void)root.optional_string("note", "");
  const auto cases = root.array("cases", 1);
  root.finish();
  std::vector<ValidationCase> out;
  std::set<std::string> ids;
  for (size_t i = 0; i < cases.size(); ++i) {
    JsonReader r(cases[i], path, "/cases/" + std::to_string(i));
    ValidationCase vc;
    vc.pointer = r.pointer();
    vc.id = r.required_string("id");
    if (!ids.insert(vc.id).second)
      throw r.error("id", "duplicate case id \"" + vc.id + "\"");
    vc.group = r.required_string("group");
    {
      JsonReader sc = r.object("scenario");
      vc.scenario = read_scenario(sc, false);
      vc.scenario.profile_path =
          resolve_profile_path(vc.scenario.profile_path, path, sc.pointer_to("profile"));
    }
    JsonReader measured = r.object("measured");
    vc.measured_iteration_time_s = measured.required_number("iteration_time_s", 1e-9, 1e9);
    vc.measured_tokens_per_s_per_gpu =
        measured.optional_number("tokens_per_s_per_gpu", 0.0, 0.0, 1e12);
    vc.source = measured.optional_string("source", "");
    vc.confidence = measured.optional_enum("confidence", "high", {"high", "medium", "low"});
    measured.finish();
    r.finish();
    out.push_back(std::move(vc));
  }
  return out;
}

}  // namespace capsim
