#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"
#include "models/shared_cluster.hpp"

#include "io/json_reader.hpp"

namespace capsim::io {

inline constexpr const char* kClusterSchema = "capsim.cluster/v1";

// Returns whether the parsed document `doc` declares itself a cluster file (a "schema" of
// "capsim.cluster/" and any version), so that `capsim simulate` can tell it from a scenario.
[[nodiscard]] bool is_cluster_document(const nlohmann::json& doc);

// Reads a `capsim.cluster/v1` file (docs/cluster.md): the fabric, each job's model and layout
// (inline, or from a scenario file named relative to the cluster file) and its placement, which
// is resolved here (place_jobs). Every problem of the file is reported at once in one InputError,
// each with its file and JSON pointer: key problems, nodes outside the fabric or used twice,
// layouts that do not fill their nodes or break a layout rule on the fabric, jobs that do not fit.
// The GPU the fabric names is looked up in `catalog`. The profile path is resolved against the
// cluster file's folder.
[[nodiscard]] SharedCluster load_shared_cluster(const std::string& path, Catalog& catalog);

// Reads a cluster document's root object; scenario files of jobs are found relative to
// `base_dir`. Throws InputError as load_shared_cluster does.
[[nodiscard]] SharedCluster read_shared_cluster(JsonReader& reader, const std::string& base_dir,
                                                Catalog& catalog);

}  // namespace capsim::io
