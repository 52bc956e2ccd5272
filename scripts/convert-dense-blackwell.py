#!/usr/bin/env python3
"""Converts the dense (Llama 3) Blackwell rows of data/validation/moe_dev_runs.json into
capsim.validation/v1 cases (scenarios/validation/dense-blackwell.json), and those of
data/validation/gb300_dense_runs.json into scenarios/validation/dense-gb300.json.

Iteration time = global batch x sequence length / (tokens/s/GPU x GPUs) where a row prints its
throughput; a row that prints a step time keeps it. SimuMax's B200 runs cut the model to the depth
they ran (num_layers_run). GB200 and GB300 rows run on NVL72 racks: their cases set the rack's
NVLink domain (cluster.nvlink_domain); GB300 trays have 800 Gb/s NICs (ConnectX-8), the others
400 Gb/s.

Each case is marked "fit" or "judged" by a rule fixed before any error was seen: the dense
Blackwell rows (B200 and GB200) sorted by id, every third one (the 1st, 4th, 7th, ...) fits the
Blackwell in-situ factor (capsim calibrate step --cases fit-, and per stack --cases fit-mbridge
and --cases fit-simumax), the others judge it. The GB300 rows, none of which are in
moe_dev_runs.json, all fit GB300's tensor speed (capsim calibrate step --tensor-speed); the
dev set's MoE runs on GB300 judge it. Each case names the training stack that ran it.

Usage: scripts/convert-dense-blackwell.py [RUNS.json] [OUT.json]
"""
import json
import sys

from published_runs import source_text, write_cases

GPUS = {"B200": "B200-SXM-180GB", "GB200": "GB200-NVL-186GB", "GB300": "GB300-NVL-288GB"}
PRECISIONS = {"BF16": "bf16", "FP8_CS": "fp8-cs", "FP8_MX": "mxfp8", "NVFP4": "nvfp4"}


def skip_reason(run):
    hw, lay = run["hardware"], run["layout"]
    if run.get("is_moe") or not run["model"].lower().startswith("llama"):
        return None  # not a dense Llama row: not this file's
    if hw["gpu"] not in GPUS:
        return None
    meas = run["measured"]
    if not (meas.get("tokens_per_sec_per_gpu") or meas.get("step_time_s")):
        return "no measured throughput or step time"
    if lay["precision"] not in PRECISIONS:
        return "precision %s has no capsim equivalent" % lay["precision"]
    return ""


def case_of(run):
    lay, hw, meas, arch = run["layout"], run["hardware"], run["measured"], run["arch"]
    layers = arch.get("num_layers_run") or arch["num_layers"]
    model = {"name": run["model"], "num_layers": layers, "hidden_size": arch["hidden_size"],
             "num_attention_heads": arch["num_attention_heads"],
             "num_kv_heads": arch["num_kv_heads"], "ffn_hidden_size": arch["ffn_hidden_size"],
             "ffn_activation": "swiglu", "seq_length": lay["seq_len"],
             "vocab_size": arch["vocab_size"]}
    gpus = hw["num_gpus"]
    tp, pp, cp = lay["tp"], lay["pp"], lay["cp"] or 1
    vp = lay["vp"] or 1
    mbridge = run["id"].startswith("mbridge")
    par = {"tensor": tp, "pipeline": pp, "data": gpus // (tp * pp * cp), "context": cp,
           "micro_batch_size": lay["mbs"], "global_batch_size": lay["gbs"],
           "virtual_pipeline_stages": vp,
           "schedule": "interleaved-1f1b" if vp > 1 else "1f1b",
           "recompute": "none", "sequence_parallel": tp > 1, "zero_stage": 1,
           "precision": PRECISIONS[lay["precision"]]}
    if (lay.get("fsdp") or 0) > 1:
        par["zero_stage"] = 3  # Megatron FSDP shards weights, gradients and optimizer states
    if mbridge and tp > 1:
        par["tp_comm_overlap"] = True  # Megatron-Bridge's Llama recipes turn it on for TP > 1
    # Megatron-Bridge's 25.09 release (v0.1.0rc3/rc4, scripts/performance/run_script.py) keeps
    # the fp32 gradient reduction its later performance configurations, and its stack, turn off.
    fp32_gradients = (mbridge and par["zero_stage"] < 3
                      and str(run["source"].get("version") or "").startswith("25.09"))
    if fp32_gradients:
        par["grad_reduce_precision"] = "fp32"
    per_node = hw["gpus_per_node"]
    cluster = {"gpu": GPUS[hw["gpu"]], "gpus_per_node": per_node, "num_nodes": gpus // per_node}
    if hw["gpu"].startswith("GB"):
        # A job takes whole trays of a rack: all its GPUs up to 64, else 64 per rack (16 of the
        # 18 trays), so that the domains divide a power-of-two job.
        cluster["nvlink_domain"] = min(64, gpus)
    if gpus > per_node:
        cluster["inter_node"] = {"fabric": "infiniband", "nics_per_node": per_node,
                                 "nic_bandwidth": "800Gbps" if hw["gpu"] == "GB300" else "400Gbps",
                                 "topology": "rail-optimized"}
    tokens = lay["gbs"] * lay["seq_len"]
    if meas.get("step_time_s"):
        time_s, how = meas["step_time_s"], "step time as published"
        tok = tokens / time_s / gpus
    else:
        tok, how = meas["tokens_per_sec_per_gpu"], "tokens/s/GPU as published"
        time_s = tokens / (tok * gpus)
    src = run["source"]
    source = source_text(src, how)
    if fp32_gradients:
        source += "; gradients reduced in fp32, the release's default"
    if arch.get("num_layers_run"):
        source += "; %d of the model's %d layers, as run" % (layers, arch["num_layers"])
    stack = "Megatron-Bridge" if mbridge else "SimuMax B200"
    group = "Dense %s %s (%s)" % (hw["gpu"], run["model"], stack)
    # The stack that ran it: Megatron-Bridge's performance recipes, or the Megatron-LM launch
    # scripts of SimuMax's B200 release (simu_tools/megatron_scripts), Megatron-Core underneath.
    scenario = {"name": run["id"], "stack": "megatron-bridge" if mbridge else "megatron-core",
                "model": model, "cluster": cluster, "parallelism": par}
    return {"id": run["id"], "group": group, "scenario": scenario,
            "measured": {"iteration_time_s": round(time_s, 4), "tokens_per_s_per_gpu": round(tok, 2),
                         "source": source.strip(), "confidence": "medium"}}


def main():
    args = sys.argv[1:]
    src = args[0] if args else "data/validation/moe_dev_runs.json"
    out = args[1] if len(args) > 1 else "scenarios/validation/dense-blackwell.json"
    runs = sorted(json.load(open(src))["runs"], key=lambda r: r["id"])
    gb300 = all(run["hardware"]["gpu"] == "GB300" for run in runs)
    cases = []
    # The third is taken over every dense Blackwell row, converted or not.
    dense = [run for run in runs if skip_reason(run) is not None]
    for i, run in enumerate(dense):
        reason = skip_reason(run)
        if reason:
            print("skipped %s: %s" % (run["id"], reason))
            continue
        try:
            case = case_of(run)
        except (KeyError, TypeError, ValueError) as error:
            print("skipped %s: its record does not give what a case needs (%s: %s)"
                  % (run["id"], type(error).__name__, error))
            continue
        if not gb300:
            case["id"] = "%s-%s" % ("fit" if i % 3 == 0 else "judged", case["id"])
        cases.append(case)
    if gb300:
        note = ("Generated by scripts/convert-dense-blackwell.py from %s (dense Llama rows on "
                "GB300). Every case fits GB300's tensor speed. Do not edit by hand." % src)
    else:
        note = ("Generated by scripts/convert-dense-blackwell.py from %s (dense Llama rows on "
                "Blackwell). Ids sorted; every third case (id prefix fit-) fits the Blackwell "
                "in-situ factor, the others (judged-) judge it. Do not edit by hand." % src)
    write_cases(out, note, cases)


if __name__ == "__main__":
    main()
