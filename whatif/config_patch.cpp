#include "whatif/config_patch.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "io/json_reader.hpp"
#include "io/key_value_lines.hpp"
#include "io/yaml_document.hpp"
#include "whatif/policy.hpp"
#include "whatif/policy_source.hpp"

namespace capsim::whatif {
namespace {

// One replacement in a file's text.
struct Edit {
  std::size_t offset = 0;
  std::size_t length = 0;
  std::string text;
};

// `text` with `edits` (at distinct offsets) applied.
std::string apply(std::string text, std::vector<Edit> edits) {
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.offset > b.offset; });
  for (const auto& e : edits)
    text.replace(e.offset, e.length, e.text);
  return text;
}

// Where the YAML scalar starting at `at` ends: after a quoted scalar's closing quote, or at the
// end of a plain scalar (its line, a comment, or a flow collection's separator).
std::size_t scalar_end(const std::string& raw, std::size_t at) {
  const char quote = raw[at];
  if (quote == '"' || quote == '\'') {
    for (std::size_t i = at + 1; i < raw.size(); ++i) {
      if (quote == '"' && raw[i] == '\\') {
        ++i;
      } else if (raw[i] == quote) {
        if (quote == '\'' && i + 1 < raw.size() && raw[i + 1] == '\'') {
          ++i;  // '' is an escaped quote
          continue;
        }
        return i + 1;
      }
    }
    return raw.size();
  }
  std::size_t i = at;
  while (i < raw.size() && raw[i] != '\n' && raw[i] != '\r' && raw[i] != ',' && raw[i] != ']' &&
         raw[i] != '}' && !(raw[i] == '#' && i > at && (raw[i - 1] == ' ' || raw[i - 1] == '\t')))
    ++i;
  while (i > at && (raw[i - 1] == ' ' || raw[i - 1] == '\t'))
    --i;
  return i;
}

// A JSON scalar as YAML text that reads back as the same JSON: plain where YAML's core schema
// reads it so, else double-quoted (JSON's escapes are YAML's).
std::string yaml_scalar(const nlohmann::json& v) {
  if (!v.is_string())
    return v.dump();
  const std::string& s = v.get_ref<const std::string&>();
  const bool plain = !s.empty() && io::plain_scalar_is_string(s) &&
                     s.find_first_of(":#,[]{}&*!|>'\"%@`\\ \t") == std::string::npos &&
                     s.front() != '-' && s.front() != '?';
  return plain ? s : v.dump();
}

// Where a knob of each YAML format sits in the document that states it.
const std::map<std::string, std::string>& yaml_knob_pointers(ConfigFormat format) {
  static const std::map<ConfigFormat, std::map<std::string, std::string>> kPointers{
      {ConfigFormat::kKarpenter,
       {{"consolidation_policy", "/spec/disruption/consolidationPolicy"},
        {"consolidate_after", "/spec/disruption/consolidateAfter"},
        {"budget_nodes_percent", "/spec/disruption/budgets/0/nodes"},
        {"expire_after", "/spec/template/spec/expireAfter"}}},
      {ConfigFormat::kKubeRay,
       {{"upscaling_mode", "/spec/autoscalerOptions/upscalingMode"},
        {"idle_timeout", "/spec/autoscalerOptions/idleTimeoutSeconds"}}},
      {ConfigFormat::kRay,
       {{"upscaling_speed", "/upscaling_speed"}, {"idle_timeout", "/idle_timeout_minutes"}}},
  };
  static const std::map<std::string, std::string> kNone;
  const auto it = kPointers.find(format);
  return it == kPointers.end() ? kNone : it->second;
}

// Whether a document of `format` states the policy's knobs (Karpenter: every NodePool).
bool states_knobs(ConfigFormat format, const nlohmann::json& doc) {
  if (!doc.is_object())
    return false;
  const std::string kind = doc.value("kind", "");
  switch (format) {
    case ConfigFormat::kKarpenter:
      return kind == "NodePool";
    case ConfigFormat::kKubeRay:
      return kind == "RayCluster";
    default:
      return true;
  }
}

// The documents of a parsed YAML file with their pointer prefixes.
std::vector<std::pair<std::string, const nlohmann::json*>> documents(const nlohmann::json& json) {
  std::vector<std::pair<std::string, const nlohmann::json*>> out;
  if (!json.is_array()) {
    out.emplace_back("", &json);
    return out;
  }
  for (std::size_t i = 0; i < json.size(); ++i)
    out.emplace_back("/" + std::to_string(i), &json[i]);
  return out;
}

// The written document that corresponds to `doc` (the NodePool of its name; else the first
// that states knobs).
const nlohmann::json* counterpart(ConfigFormat format, const nlohmann::json& written,
                                  const nlohmann::json& doc) {
  for (const auto& [prefix, w] : documents(written)) {
    if (!states_knobs(format, *w))
      continue;
    if (format != ConfigFormat::kKarpenter)
      return w;
    const nlohmann::json name = doc.value("/metadata/name"_json_pointer, nlohmann::json());
    if (w->value("/metadata/name"_json_pointer, nlohmann::json()) == name)
      return w;
  }
  return nullptr;
}

// YAML formats: each changed knob's scalar replaced in every document that states it, by its
// value in `written` (the format's writer's documents for the wanted policy).
std::optional<std::vector<Edit>> yaml_edits(ConfigFormat format, const ConfigFile& file,
                                            const nlohmann::json& written,
                                            const std::vector<std::string>& changed) {
  const auto& pointers = yaml_knob_pointers(format);
  std::vector<Edit> edits;
  for (const auto& [prefix, doc] : documents(file.json)) {
    if (!states_knobs(format, *doc))
      continue;
    const nlohmann::json* w = counterpart(format, written, *doc);
    if (w == nullptr)
      return std::nullopt;
    for (const auto& knob : changed) {
      const auto p = pointers.find(knob);
      if (p == pointers.end())
        return std::nullopt;
      const nlohmann::json::json_pointer rel(p->second);
      const auto at = file.scalar_offsets.find(prefix + p->second);
      if (at == file.scalar_offsets.end() || at->second >= file.raw.size() || !w->contains(rel) ||
          w->at(rel).is_structured())
        return std::nullopt;
      const std::size_t end = scalar_end(file.raw, at->second);
      edits.push_back({at->second, end - at->second, yaml_scalar(w->at(rel))});
    }
  }
  return edits;
}

// The spans of the values of `key` (ending in '=') where it starts a word of `raw` (after the
// line's start, a blank, a quote, `=` or `,`) outside `#` comments; `fold`: case-insensitive.
std::vector<std::pair<std::size_t, std::size_t>> value_spans(const std::string& raw,
                                                             const std::string& key, bool fold) {
  const std::string hay = fold ? io::lower_ascii(raw) : raw;
  const std::string needle = fold ? io::lower_ascii(key) : key;
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) {
    const std::size_t line = hay.rfind('\n', at == 0 ? 0 : at - 1);
    const std::size_t line_start = line == std::string::npos || at == 0 ? 0 : line + 1;
    const std::string before = hay.substr(line_start, at - line_start);
    const std::size_t hash = before.find('#');
    if (hash != std::string::npos &&
        (hash == 0 || before[hash - 1] == ' ' || before[hash - 1] == '\t'))
      continue;  // in a comment
    const char prev = at == line_start ? ' ' : hay[at - 1];
    if (std::string(" \t\"'=,[").find(prev) == std::string::npos)
      continue;
    const std::size_t value = at + needle.size();
    const std::size_t end = hay.find_first_of(" \t\r\n#\"',]}", value);
    out.emplace_back(value, (end == std::string::npos ? hay.size() : end) - value);
  }
  return out;
}

// The `Key=Value` words of the writer's line format by key (lower-cased when `fold`, with
// SlurmctldParameters' comma-separated parameters each on their own): {key as written, value}.
std::map<std::string, std::pair<std::string, std::string>> written_values(const std::string& text,
                                                                          bool fold) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.front() == '#')
      continue;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq == std::string::npos)
        continue;
      const std::string key = w.substr(0, eq);
      const std::string value = w.substr(eq + 1);
      if (fold && io::lower_ascii(key) == "slurmctldparameters") {
        std::istringstream params(value);
        for (std::string p; std::getline(params, p, ',');) {
          const auto e = p.find('=');
          if (e != std::string::npos)
            out[io::lower_ascii(p.substr(0, e))] = {p.substr(0, e), p.substr(e + 1)};
        }
        continue;
      }
      out[fold ? io::lower_ascii(key) : key] = {key, value};
    }
  }
  return out;
}

// Line formats (cluster-autoscaler flags, also inside a Deployment's args, and slurm.conf): the
// value of each changed knob's flag or key replaced where the file states it; a flags file or
// slurm.conf that leaves a key out gets it as a line of its own (`appended`).
std::optional<std::vector<Edit>> line_edits(ConfigFormat format, const ConfigFile& file,
                                            const std::string& written,
                                            const std::vector<std::string>& changed,
                                            std::string& appended) {
  const bool slurm = format == ConfigFormat::kSlurm;
  const auto values = written_values(written, slurm);
  std::vector<Edit> edits;
  for (const auto& knob : changed) {
    // A flag is its knob with dashes (--scale-down-unneeded-time); a Slurm key is its knob
    // without underscores (SuspendTime), or the knob itself inside SlurmctldParameters
    // (power_save_interval).
    std::string key = knob;
    if (slurm && values.count(knob) == 0)
      key.erase(std::remove(key.begin(), key.end(), '_'), key.end());
    if (!slurm)
      key = "--" + key;
    std::replace(key.begin(), key.end(), '_', slurm ? '_' : '-');
    const auto value = values.find(key);
    if (value == values.end())
      return std::nullopt;
    const auto spans = value_spans(file.raw, key + "=", slurm);
    for (const auto& [offset, length] : spans)
      edits.push_back({offset, length, value->second.second});
    if (!spans.empty())
      continue;
    if (!file.json.is_null() || key == knob)
      return std::nullopt;  // a YAML manifest, or a SlurmctldParameters entry: no line of its own
    appended += value->second.first + "=" + value->second.second + "\n";
  }
  return edits;
}

// Joins YAML files into one stream: a `---` between two files unless the next starts with one.
std::string join_yaml(const std::vector<std::string>& texts) {
  std::string out;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::string t = texts[i];
    if (i > 0) {
      if (!out.empty() && out.back() != '\n')
        out += '\n';
      std::istringstream in(t);
      bool starts_document = false;
      for (std::string line; std::getline(in, line);) {
        if (line.empty() || line.front() == '#')
          continue;
        starts_document = line.rfind("---", 0) == 0;
        break;
      }
      if (!starts_document)
        out += "---\n";
    }
    out += t;
  }
  return out;
}

std::string knob_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : io::describe_json(v);
}

}  // namespace

std::optional<std::string> patched_config(const ImportedSource& source,
                                          const ImportedPolicy& wanted) {
  if (source.files.empty())
    return std::nullopt;
  const nlohmann::json as_read = complete_knobs(wanted.preset, source.knobs);
  const nlohmann::json knobs = complete_knobs(wanted.preset, wanted.knobs);
  std::vector<std::string> changed;
  std::string changes;
  for (const auto& [k, v] : knobs.items()) {
    if (as_read.contains(k) && as_read.at(k) == v)
      continue;
    changed.push_back(k);
    changes += std::string(changes.empty() ? "" : ", ") + k + " " +
               (as_read.contains(k) ? knob_text(as_read.at(k)) : "unset") + " -> " + knob_text(v);
  }
  const std::string written = write_config(wanted).second;
  const bool yaml_knobs = !yaml_knob_pointers(wanted.format).empty();
  const nlohmann::json written_yaml =
      yaml_knobs && !changed.empty() ? io::parse_yaml_text(written, "written") : nlohmann::json();
  const bool yaml = !source.files.front().json.is_null();
  std::vector<std::string> texts;
  std::string appended;
  for (const auto& f : source.files) {
    std::optional<std::vector<Edit>> edits;
    if (changed.empty())
      edits.emplace();
    else if (yaml_knobs)
      edits = yaml_edits(wanted.format, f, written_yaml, changed);
    else
      edits = line_edits(wanted.format, f, written, changed, appended);
    if (!edits)
      return std::nullopt;
    texts.push_back(apply(f.raw, *edits));
  }
  std::string names;
  for (const auto& f : source.files)
    names += (names.empty() ? "" : ", ") + std::filesystem::path(f.path).filename().string();
  std::string text = "# " + names +
                     " as read by capsim whatif, written back by --emit for policy \"" +
                     wanted.name + "\": " +
                     (changed.empty() ? "unchanged (the recommended run uses the knobs it states)"
                                      : "changed " + changes) +
                     "\n";
  text += yaml ? join_yaml(texts) : texts.front();
  if (!appended.empty()) {
    if (text.back() != '\n')
      text += '\n';
    text += appended;
  }
  // The text must read back as the policy wanted, or the writer's own file is used.
  const std::string name = yaml ? "emitted.yaml" : "emitted.conf";
  try {
    const ConfigReading back = read_config_text(wanted.format, text, name, source.catalog);
    if (back.policy.preset != wanted.preset ||
        complete_knobs(wanted.preset, back.policy.knobs) != knobs ||
        back.policy.groups != wanted.groups)
      return std::nullopt;
  } catch (const io::InputError&) {
    return std::nullopt;
  }
  return text;
}

}  // namespace capsim::whatif
