#include "io/training_stack_io.hpp"

namespace capsim::io {

namespace {

// The stack `name` (at `version`, empty for its default), or an InputError at `name_key` or
// `version_key` of `reader` that lists what capsim knows.
const TrainingStack& find_or_throw(const JsonReader& reader, const std::string& name_key,
                                   const std::string& name, const std::string& version_key,
                                   const std::string& version) {
  if (find_training_stack(name) == nullptr) {
    throw reader.error(name_key, "unknown training stack \"" + name + "\"; expected one of " +
                                     join_names(training_stack_names()));
  }
  const TrainingStack* stack = find_training_stack(name, version);
  if (stack == nullptr) {
    throw reader.error(version_key, "training stack \"" + name + "\" has no version \"" + version +
                                        "\"; expected one of " +
                                        join_names(training_stack_versions(name)));
  }
  return *stack;
}

}  // namespace

const TrainingStack* read_stack_name_and_version(JsonReader& reader) {
  if (!reader.has("name")) {
    if (reader.has("version")) {
      throw reader.error("version", "a stack version needs the stack's \"name\" (one of " +
                                        join_names(training_stack_names()) + ")");
    }
    return nullptr;
  }
  const std::string name = reader.required_string("name");
  // Versions are years ("2021"); a bare number (--set stack.version=2021) names the same.
  std::string version;
  if (reader.has("version")) {
    version = reader.json().at("version").is_number_integer()
                  ? std::to_string(reader.optional_int("version", 0, 0, 9999))
                  : reader.required_string("version");
    if (version.empty())
      throw reader.error("version", "expected a version, got \"\"");
  }
  return &find_or_throw(reader, "name", name, "version", version);
}

const TrainingStack& read_training_stack(JsonReader& reader, const std::string& key) {
  if (reader.json().at(key).is_string()) {
    const std::string name = reader.required_string(key);
    return find_or_throw(reader, key, name, key, "");
  }
  const std::string expected = "expected a stack name (one of " +
                               join_names(training_stack_names()) +
                               ") or an object {name, version}";
  if (!reader.json().at(key).is_object())
    throw reader.error(key, expected + ", got " + reader.describe(key));
  JsonReader stack = reader.object(key);
  if (!stack.has("name"))
    throw reader.error(key, expected + ", got an object without \"name\"");
  const TrainingStack* found = read_stack_name_and_version(stack);
  stack.finish();
  return *found;
}

}  // namespace capsim::io
