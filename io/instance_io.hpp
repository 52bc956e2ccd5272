#pragma once

#include <string>

#include "models/catalog.hpp"

#include "io/json_reader.hpp"

namespace capsim::io {

// Checks that every GPU of a node gets the same share of its NICs (1, 2 or 4 NICs per GPU, or
// one per 2 GPUs): the simulator's symmetric platform needs it, and every real node has it.
// Throws an InputError at `inter`'s "nics_per_node" otherwise.
void check_nics_serve_gpus(const JsonReader& inter, int gpus_per_node, int nics_per_node);

// Reads the hardware of an instance type the catalog lacks from `item` ("gpu": a name `catalog`
// knows or a GPU definition, "gpus_per_node", "inter_node": {fabric, nics_per_node,
// nic_bandwidth}) and adds it to `catalog` under `name` (Catalog::define_instance). Its prices
// are the caller's to read. Errors are InputErrors naming the file and JSON pointer.
void read_instance_definition(JsonReader& item, const std::string& name, Catalog& catalog);

}  // namespace capsim::io
