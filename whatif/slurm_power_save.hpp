#pragma once

#include <string>

#include "models/catalog.hpp"

#include "whatif/imported_policy.hpp"

namespace capsim::whatif {

// Reads Slurm power saving from a slurm.conf (io/key_value_lines.hpp; keys case-insensitive as
// in slurmctld) into the `slurm-power-save` preset: SuspendTime (INFINITE or -1: 365d),
// SuspendTimeout, ResumeTimeout, ResumeRate and SlurmctldParameters' power_save_interval become
// knobs; each PartitionName line is a node group of its NodeName nodes (hostlists expanded,
// NodeName=DEFAULT and PartitionName=DEFAULT applied), whose GPUs come from Gres=gpu:N, whose
// instance from a Feature naming a `catalog` instance (else the what-if pool of the partition's
// name), whose min_nodes are its nodes in SuspendExcNodes (all of them with SuspendExcParts),
// ordered by the lowest node Weight first as Slurm allocates. Mapping table: docs/whatif.md.
// Throws InputError naming the file and line.
[[nodiscard]] ConfigReading read_slurm_conf(const ConfigFile& file, const Catalog& catalog);

// Writes `policy` as slurm.conf power-saving, node and partition lines that read_slurm_conf
// reads back to `policy`.
[[nodiscard]] std::string write_slurm_conf(const ImportedPolicy& policy);

// Expands a Slurm hostlist ("gpu-[001-004,7]", "a,b[1-2]") into host names, in order. Throws
// InputError (at `file`, `where`) for a malformed list, more than 100,000 hosts or a host name
// longer than 255 characters.
[[nodiscard]] std::vector<std::string> expand_hostlist(const std::string& list,
                                                       const std::string& file,
                                                       const std::string& where);

}  // namespace capsim::whatif
