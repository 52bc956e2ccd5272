#!/usr/bin/env python3
"""Writes dev.json with the training stack each group's source names
(scenarios/validation/dev-stacks.json), so that one `capsim validate` scores every group, and
ranks the layouts of a model and cluster, with what its stack does by itself.

The stacks, by case id prefix (docs/validation.md, "The training stack of each group"):
Megatron-LM of 2021 for Narayanan et al.'s PTD-P rows, DeepSpeed's 2021 ZeRO-3 for their ZeRO-3
rows, llm-foundry for the MosaicML tables and NeMo 1 with Apex's distributed Adam for the DGX
Cloud recipes (dgxc-benchmarking v25.03 runs NeMo's megatron_gpt_pretraining.py with
NeMo-Framework-Launcher configurations). Where a source's recipe sets a kernel its stack's
preset does not, the case gets that key too: the DGX Cloud Llama 3.1 configurations set
cross_entropy_loss_fusion, which the NeMo 1 preset (the launcher's configurations before
mid-2024) leaves off. Nothing else of a case changes; the file is a what-if of dev.json, not
what validation scores.

Usage: scripts/name-dev-stacks.py [DEV.json] [OUT.json]
"""
import json
import sys

STACKS = [
    ("narayanan21-t2-zero3", {"name": "deepspeed", "version": "2021"}),
    ("narayanan21", {"name": "megatron-core", "version": "2021"}),
    ("mpt", {"name": "llm-foundry", "version": "2023"}),
    ("dgxc", {"name": "nemo", "version": "2023"}),
]

# Model keys a source's recipe sets beyond its stack's preset, by case id prefix:
# dgxc-benchmarking v25.03 llama3.1/llama3.1_{8b,70b}.yaml, cross_entropy_loss_fusion: true.
RECIPE_MODEL_KEYS = [("dgxc", {"cross_entropy": "fused"})]


def stack_of(case_id):
    for prefix, stack in STACKS:
        if case_id.startswith(prefix):
            return stack
    sys.exit(f"name-dev-stacks: no stack for case {case_id}")


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else "data/validation/dev.json"
    out = sys.argv[2] if len(sys.argv) > 2 else "scenarios/validation/dev-stacks.json"
    with open(source) as f:
        dev = json.load(f)
    for case in dev["cases"]:
        case["scenario"]["stack"] = stack_of(case["id"])
        for prefix, keys in RECIPE_MODEL_KEYS:
            if case["id"].startswith(prefix):
                case["scenario"]["model"].update(keys)
    dev["note"] = (
        "What-if: the cases of data/validation/dev.json, each with the training stack its "
        "source names (scripts/name-dev-stacks.py). Not scored; see docs/validation.md.")
    with open(out, "w") as f:
        json.dump(dev, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
