#include "io/validation_io.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"

#include "io/json_reader.hpp"
#include "io/profile_reference.hpp"
#include "io/scenario_io.hpp"

namespace capsim::io {

namespace {

ValidationCase read_case(JsonReader& r, const std::string& path, Catalog& catalog) {
  ValidationCase vc;
  vc.pointer = r.pointer();
  vc.id = r.required_string("id");
  vc.group = r.required_string("group");
  {
    JsonReader sc = r.object("scenario");
    vc.scenario = read_scenario(sc, false, catalog);
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
  return vc;
}

// The case `c` with the overrides applied to its scenario (unchanged when it has none, or no
// scenario object for them to change: reading it then says what is wrong).
nlohmann::json with_overrides(const nlohmann::json& c,
                              const std::vector<ScenarioOverride>& overrides,
                              const std::string& path, const std::string& pointer) {
  if (overrides.empty() || !c.is_object() || !c.contains("scenario") || !c["scenario"].is_object())
    return c;
  nlohmann::json out = c;
  apply_overrides(out["scenario"], overrides, path, pointer + "/scenario");
  return out;
}

}  // namespace

bool id_has_prefix(const std::string& id, const std::vector<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&id](const std::string& prefix) { return id.rfind(prefix, 0) == 0; });
}

ValidationFile load_validation_file(const std::string& path,
                                    const std::vector<ScenarioOverride>& overrides) {
  return read_validation_file(JsonReader::parse_file(path), path, overrides);
}

ValidationFile read_validation_file(const nlohmann::json& doc, const std::string& path,
                                    const std::vector<ScenarioOverride>& overrides) {
  const auto cases = JsonReader::read_document(doc, path, [](JsonReader& root) {
    root.expect_schema(kValidationSchema);
    (void)root.optional_string("note", "");
    auto items = root.array("cases", 1);
    root.finish();
    return items;
  });
  ValidationFile out;
  std::set<std::string> ids;
  Catalog catalog;  // a GPU one case defines, the later ones may name
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string pointer = "/cases/" + std::to_string(i);
    std::string id;
    if (cases[i].is_object() && cases[i].contains("id") && cases[i]["id"].is_string())
      id = cases[i]["id"].get<std::string>();
    try {
      const nlohmann::json c = with_overrides(cases[i], overrides, path, pointer);
      ValidationCase vc = JsonReader::read_document(
          c, path,
          [&](JsonReader& r) {
            ValidationCase read = read_case(r, path, catalog);
            if (!ids.insert(read.id).second)
              throw r.error("id", "duplicate case id \"" + read.id + "\"");
            return read;
          },
          pointer);
      out.cases.push_back(std::move(vc));
    } catch (const InputError& e) {
      out.rejected.push_back({id, pointer, e});
    }
  }
  return out;
}

std::vector<ValidationCase> load_validation_cases(const std::string& path) {
  ValidationFile file = load_validation_file(path);
  if (!file.rejected.empty())
    throw file.rejected.front().error;
  return std::move(file.cases);
}

}  // namespace capsim::io
