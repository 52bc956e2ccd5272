#!/usr/bin/env python3
"""Converts the Hopper (H100, H800) MoE rows of data/validation/moe_dev_runs.json into
capsim.validation/v1 cases (scenarios/validation/moe-hopper.json), or with --blackwell its B200,
B300, GB200 and GB300 MoE rows (scenarios/validation/moe-blackwell.json): NVL72 trays of 4 GPUs
with the rack's NVLink domain (all their GPUs up to 64, else 64 per rack, as the dense GB200 rows),
one NIC per GPU (ConnectX-7 400 Gb/s on B200 and GB200, ConnectX-8 800 Gb/s on B300 and GB300);
each Blackwell case names the training stack that ran it.

Iteration time = global batch x sequence length / (tokens/s/GPU x GPUs). A row that prints only
model TFLOP/s gets its tokens/s from Megatron-LM's num_floating_point_operations (the formula
Megatron-Bridge's tables use; capsim's model_flop_per_token for MoE models); a row that prints a
step time keeps it. Rows capsim cannot express are skipped with the reason printed.

Usage: scripts/convert-moe-runs.py [--blackwell] [RUNS.json] [OUT.json]
"""
import json
import math
import re
import sys

from published_runs import source_text, write_cases

HOPPER = {"H100": "H100-SXM5-80GB", "H800": "H800-SXM5-80GB"}
BLACKWELL = {"B200": "B200-SXM-180GB", "B300": "B300-SXM-288GB", "GB200": "GB200-NVL-186GB",
             "GB300": "GB300-NVL-288GB"}
GPUS = BLACKWELL if "--blackwell" in sys.argv[1:] else HOPPER
PRECISIONS = {"BF16": "bf16", "FP8_CS": "fp8-cs", "FP8-blockwise": "fp8-blockwise",
              "FP8_MX": "mxfp8"}
DISPATCHERS = {None: "alltoall", "alltoall": "alltoall", "flex": "deepep"}
# The training stack of each source: Megatron-Bridge's performance recipes; Megatron-LM's,
# Megatron-MoE-ModelZoo's and SimuMax's Megatron-LM launch scripts; NVIDIA's DGX Cloud recipes
# on NeMo.
STACKS = {"NVIDIA-NeMo/Megatron-Bridge": "megatron-bridge", "NVIDIA/Megatron-LM": "megatron-core",
          "yanring/Megatron-MoE-ModelZoo": "megatron-core", "MooreThreads/SimuMax": "megatron-core",
          "NVIDIA/dgxc-benchmarking": "nemo"}

# Layout fields a row leaves unstated, taken from the benchmark script of the release that measured
# it (keyed by the row's source version and model). Applied only where the row's field is null.
RECIPES = {
    ("25.09 NeMo container", "DeepSeek-V3"): {
        "fields": {"token_dispatcher": "flex", "moe_a2a_overlap": True,
                   # pipeline layout "Et|(tt|)*30mL" over PP 8 x VP 4: the embedding and one layer,
                   # thirty chunks of two layers, then the MTP module and the loss.
                   "stage_layers": [7, 8, 8, 8, 8, 8, 8, 6]},
        "recompute_modules": ["mla_up_proj", "mlp"],
        "source": "NVIDIA-NeMo/Megatron-Bridge scripts/performance/run_script.py @ v0.1.0rc3 and "
                  "v0.1.0rc4 (H100: enable_deepep, A2A_1F1B overlap, layout Et|(tt|)*30mL, "
                  "recompute_modules mla_up_proj and mlp)",
    },
}


# Rows whose printed or curated layout the code of the release that measured them contradicts:
# the release's benchmark configuration replaces those fields (keyed by row id), and the case's
# source says so.
CORRECTIONS = {
    "mbridge-26.02.01-Qwen3-30B-A3B-H100-16-FP8_CS": {
        "fields": {"pp": 1, "vp": None, "ep": 16, "token_dispatcher": "flex",
                   "moe_a2a_overlap": False},
        "source": "the row prints the 26.02 layout; the 26.02.01 release (Megatron-Bridge v0.3.1) "
                  "ran scripts/performance/configs/qwen/qwen3_workload_base_configs.py "
                  "QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1: EP16, PP and VP at "
                  "WorkloadBaseConfig's defaults (1, none), HybridEP, no A2A overlap (commit "
                  "f29a269f8); the 26.04 tables print PP1 EP16 at 8,901-8,960 tokens/s/GPU",
    },
    "mbridge-26.02.01-Qwen3-235B-A22B-H100-256-FP8_CS": {
        "fields": {"token_dispatcher": "alltoall"},
        "source": "Megatron-Bridge v0.3.1 scripts/performance/configs/qwen/qwen3_llm_pretrain.py "
                  "sets moe_token_dispatcher_type = \"alltoall\" for H100 after the base "
                  "config's DeepEP backend",
    },
    "mbridge-25.11-GPT-OSS-120B-H100-64-BF16": {
        "fields": {"mbs": 1},
        "source": "Megatron-Bridge v0.2.0 scripts/performance/configs/gpt_oss/"
                  "workload_base_configs.py: H100 micro batch 1 (the row prints 4, the B200 and "
                  "GB200 configs' value)",
    },
    "dgxc-DeepSeek-V3-H100-512-BF16": {
        "fields": {"recompute": ["mla_up_proj"]},
        "source": "NVIDIA/dgxc-benchmarking v25.05.05 deepseek_v3/pretraining/launch.sh: "
                  "recompute_modules mla_up_proj",
    },
    **{run_id: {"fields": {"recompute": ["core_attn"]},
                "source": "NVIDIA/dgxc-benchmarking v25.05.05 deepseek_v3/pretraining/launch.sh: "
                          "recompute_modules core_attn on GB200"}
       for run_id in ("dgxc-DeepSeek-V3-GB200-256-BF16", "dgxc-DeepSeek-V3-GB200-512-BF16")},
}


# Rows that ran Transformer Engine's fused grouped MLP and fp8 attention without printing them:
# Megatron-Bridge v0.6.0 (the 26.08 container) src/megatron/bridge/perf_recipes/qwen/common.py
# _enable_hybridep_full_iteration_mxfp8, which its GB200 and GB300 MXFP8 Qwen3 recipes call, sets
# use_transformer_engine_op_fuser and mixed_precision.fp8_dot_product_attention, and the recipes
# NVTE_CUTEDSL_FUSED_GROUPED_MLP=1. The rows of the 26.06 and 26.06.01 containers print both
# (other_flags.cutedsl_fused_grouped_mlp, other_flags.fp8_dot_product_attention).
RELEASE_CODE_RUNS = {"mbridge-26.08-Qwen3-30B-A3B-GB200-8-FP8_MX",
                     "mbridge-26.08-Qwen3-235B-A22B-GB300-256-FP8_MX"}


def dgxc_deepseek_split(run, pp):
    """The layer split of NVIDIA's DGX Cloud DeepSeek-V3 runs of release v25.05, whatever the GPU:
    its NeMo (commit 7a8f1cc) scripts/performance/llm/pretrain_deepseek_v3.py puts 64 / PP - 1
    layers on the first stage, 64 / PP - 2 on the last and 64 / PP on each other one."""
    source = run["source"]
    if (source.get("repo") != "NVIDIA/dgxc-benchmarking" or run["model"] != "DeepSeek-V3"
            or not str(source.get("commit", "")).startswith("tag v25.05") or pp < 2 or 64 % pp):
        return None
    middle = 64 // pp
    return [middle - 1] + [middle] * (pp - 2) + [middle - 2]


# Megatron-Bridge's DeepSeek-V3 recipe (src/megatron/bridge/recipes/deepseek/deepseek_v3.py, from
# v0.1.0rc3, the 25.09 container, on) runs the precision-aware optimizer with bf16 Adam moments.
# Its performance configurations reduce the gradients in bf16 from v0.2.0, the 25.11 container,
# on (scripts/performance/configs/{deepseek,gpt_oss,qwen}/*_llm_pretrain.py: grad_reduce_in_fp32
# False; v0.6.0's perf_recipes the same), as the megatron-bridge stack does; the 25.09 ones
# (v0.1.0rc3/rc4, scripts/performance/run_script.py) keep the fp32 default.
FP32_GRADIENT_RELEASES = {"25.09"}


def recipe_optimizer(run):
    """The optimizer and gradient precision keys a run's recipe sets, with their source."""
    source = run["source"]
    if source.get("repo") != "NVIDIA-NeMo/Megatron-Bridge":
        return {}, ""
    fields, texts = {}, []
    if run["model"].lower().startswith("kimi"):
        # Kimi-K2's recipe trains with Muon, which Megatron-Bridge runs without the distributed
        # optimizer and with fp32 gradient reduction (src/megatron/bridge/recipes/kimi/h100/
        # kimi_k2.py, _apply_kimi_k2_optimizer "muon"); capsim costs Adam's step in its place.
        fields["zero_stage"] = 0
        fields["grad_reduce_precision"] = "fp32"
        return fields, ("the optimizer as the release's Kimi-K2 recipe runs Muon: no distributed "
                        "optimizer, gradients reduced in fp32 (src/megatron/bridge/recipes/kimi/"
                        "h100/kimi_k2.py, _apply_kimi_k2_optimizer); Muon's step costed as Adam's")
    if run["model"] == "DeepSeek-V3":
        fields["optimizer_state_precision"] = "bf16"
        texts.append("Adam's moments in bf16 (the release's src/megatron/bridge/recipes/deepseek/"
                     "deepseek_v3.py: use_precision_aware_optimizer, exp_avg_dtype and "
                     "exp_avg_sq_dtype bfloat16)")
    if (source.get("version") or "").split(" ")[0] in FP32_GRADIENT_RELEASES:
        fields["grad_reduce_precision"] = "fp32"
        texts.append("the gradients in fp32 (the release's scripts/performance/run_script.py "
                     "leaves grad_reduce_in_fp32 at its default)")
    else:
        fields["grad_reduce_precision"] = "bf16"
        texts.append("the gradients in bf16 (the release's scripts/performance/configs: "
                     "grad_reduce_in_fp32 False)")
    return fields, " and ".join(texts)


def before_memory_efficient_permutation(run):
    """Whether a run's Megatron-Core weighs the experts' outputs at the un-permutation: NVIDIA's
    DGX Cloud release v25.05 ran NeMo r2.3.0 (commit 7a8f1cc), whose requirements/manifest.json
    pins Megatron-LM 3cdfd613 of core_r0.12.0, before Megatron-Core 0.13's memory-efficient
    permutation (Megatron-LM commit 26596307)."""
    source = run["source"]
    return (source.get("repo") == "NVIDIA/dgxc-benchmarking"
            and str(source.get("commit", "")).startswith("tag v25.05"))


def recipe_of(run):
    if run["hardware"]["gpu"] not in HOPPER:
        return None  # the recipes below are the H100 ones
    version = (run["source"].get("version") or "")
    return RECIPES.get((version, run["model"]))


def flops_per_token(arch, seq, mtp):
    """Megatron-LM num_floating_point_operations / (batch x seq), causal attention."""
    h = arch["hidden_size"]
    heads = arch["num_attention_heads"]
    layers = arch["num_layers"] + mtp
    dense_first = arch.get("num_dense_leading_layers") or 0
    moe_layers = arch["num_layers"] - dense_first + mtp
    dense_layers = layers - moe_layers
    ffn = (arch.get("dense_ffn_hidden_size") or 0) * 1.5 * dense_layers
    ffn += (arch["moe_ffn_hidden_size"] * arch["top_k"]
            + (arch.get("shared_expert_ffn_hidden_size") or 0)) * 1.5 * moe_layers
    ratio = 0.5
    if arch.get("attention_type") == "MLA":
        qk = arch["qk_nope_head_dim"] + arch["qk_rope_head_dim"]
        q = arch["q_lora_rank"] * (h + heads * qk + 1)
        attn = 6 * layers * (q + arch["kv_lora_rank"] * (h + heads * (arch["qk_nope_head_dim"] + arch["v_head_dim"]) + 1)
                             + h * arch["qk_rope_head_dim"] + heads * arch["v_head_dim"] * h
                             + seq * heads * qk * ratio + seq * heads * arch["v_head_dim"] * ratio)
    else:
        q_ratio = arch["head_dim"] * heads / h
        attn = 12 * layers * h * h * ((1 + arch["num_kv_heads"] / heads + seq / h * ratio) * q_ratio)
    vocab = math.ceil(arch["vocab_size"] / 128) * 128
    return 12 * h * ffn + attn + 6 * mtp * (3 * h + 2 * h * h) + 6 * h * vocab * (mtp + 1)


def skip_reason(run):
    hw, lay, arch = run["hardware"], run["layout"], run["arch"]
    if hw["gpu"] not in GPUS or not run.get("is_moe"):
        return None  # another family's row, or a dense one: not this file's
    meas = run["measured"]
    if not (meas.get("tokens_per_sec_per_gpu") or meas.get("step_time_s") or meas.get("model_tflops_per_gpu")):
        return "no measured throughput or step time"
    if lay["precision"] not in PRECISIONS:
        return "precision %s has no capsim equivalent" % lay["precision"]
    if run.get("routing_forced_balanced") is False:
        return "routing not forced balanced and its load imbalance unpublished"
    if "FSDP" in json.dumps(lay.get("other_flags", {})):
        return "PyTorch FSDP2 with expert parallelism (capsim's ZeRO-3 does not shard experts over expert-DP)"
    if lay["token_dispatcher"] not in DISPATCHERS:
        return "token dispatcher %r" % lay["token_dispatcher"]
    return ""


# Group-limited routing of models whose dataset entry does not spell it out, from the recipe
# the runs used: Megatron-Bridge src/megatron/bridge/models/deepseek/deepseek_provider.py
# (DeepSeekV2Provider: moe_router_num_groups 8, moe_router_group_topk 3; tags v0.1.0rc3-v0.3.0),
# as DeepSeek-V2's config.json (n_group 8, topk_group 3).
ROUTER_GROUPS = {"DeepSeek-V2": (8, 3)}


def router_groups(run):
    """(groups, groups per token) of a run's router, or None without group-limited routing:
    the dataset's router text ("8 groups / top-4 groups"), else ROUTER_GROUPS."""
    found = re.search(r"(\d+) groups / top-(\d+) groups", run["arch"].get("router") or "")
    if found:
        return int(found.group(1)), int(found.group(2))
    return ROUTER_GROUPS.get(run["model"])


def model_of(run):
    arch = run["arch"]
    mtp = run["layout"].get("mtp_layers_used")
    mtp = arch.get("mtp_layers", 0) if mtp is None else mtp
    model = {
        "name": run["model"],
        "num_layers": run.get("num_layers_run") or arch.get("num_layers_run") or arch["num_layers"],
        "hidden_size": arch["hidden_size"],
        "num_attention_heads": arch["num_attention_heads"],
        "num_kv_heads": arch["num_kv_heads"],
        "ffn_hidden_size": arch.get("dense_ffn_hidden_size") or arch["moe_ffn_hidden_size"],
        "ffn_activation": "swiglu",
        "seq_length": run["layout"]["seq_len"],
        "vocab_size": arch["vocab_size"],
    }
    if arch.get("head_dim") and arch["head_dim"] * arch["num_attention_heads"] != arch["hidden_size"]:
        model["head_dim"] = arch["head_dim"]
    if arch.get("attention_type") == "MLA":
        model["mla"] = {"q_lora_rank": arch["q_lora_rank"], "kv_lora_rank": arch["kv_lora_rank"],
                        "qk_head_dim": arch["qk_nope_head_dim"],
                        "qk_pos_emb_head_dim": arch["qk_rope_head_dim"],
                        "v_head_dim": arch["v_head_dim"]}
    moe = {"num_experts": arch["num_experts"], "top_k": arch["top_k"],
           "ffn_hidden_size": arch["moe_ffn_hidden_size"],
           "first_dense_layers": arch.get("num_dense_leading_layers") or 0,
           "load_imbalance": 1.0}
    if arch.get("shared_expert_ffn_hidden_size"):
        moe["shared_expert_ffn_hidden_size"] = arch["shared_expert_ffn_hidden_size"]
    if "sigmoid" in (arch.get("router") or ""):
        moe["router_score"] = "sigmoid"
    groups = router_groups(run)
    if groups:
        moe["router_groups"], moe["router_group_top_k"] = groups
    flags = run["layout"].get("other_flags") or {}
    factor = flags.get("moe_expert_rank_capacity_factor")
    if factor:
        moe["rank_capacity_factor"] = factor
    if flags.get("cutedsl_fused_grouped_mlp") or run["id"] in RELEASE_CODE_RUNS:
        moe["fused_grouped_mlp"] = True
    model["moe"] = moe
    if mtp:
        model["mtp_layers"] = mtp
    if "sliding-window (128)" in (arch.get("attention_type") or ""):
        model["window_attention"] = {"size": 128, "every": 2}
    if arch.get("family") == "gpt_oss":
        # Megatron-Bridge's GPTOSSProvider (src/megatron/bridge/models/gpt_oss/gpt_oss_provider.py,
        # v0.2.0-v0.3.1): attention sinks, which FlashAttention lacks, so Transformer Engine runs
        # cuDNN's fused attention; YaRN rotary embeddings, which Megatron-Core runs unfused;
        # biased linears (add_bias_linear); the experts' activation clamped at 7.0
        # (activation_func_clamp_value).
        model["attention"] = "cudnn"
        model["rope_fusion"] = False
        moe["linear_bias"] = True
        moe["activation_clamp"] = 7.0
    return model, mtp


def recompute_of(lay, recipe):
    """capsim's recompute and recompute_modules for a row: a list of Megatron-Core modules is
    selective recompute of those; "selective" without its modules takes the recipe's, else
    Megatron-Core's default (core_attn)."""
    value = lay.get("recompute")
    if isinstance(value, list):
        return "selective", value
    if str(value or "").startswith("selective"):
        return "selective", (recipe or {}).get("recompute_modules")
    return "none", None


def expand_layout(text):
    """Megatron-Core's --pipeline-model-parallel-layout ("E", "t", "m", "L", "|", with "x*N" and
    "(...)*N" repetition) in its plain form, as io/megatron_import.cpp expands it."""
    def expand(i):
        out = ""
        while i < len(text) and text[i] != ")":
            if text[i] == "(":
                piece, i = expand(i + 1)
                if i >= len(text) or text[i] != ")":
                    raise ValueError("unbalanced parenthesis in layout %r" % text)
                i += 1
            elif text[i] in "EtmL|":
                piece, i = text[i], i + 1
            elif text[i] == " ":
                i += 1
                continue
            else:
                raise ValueError("unexpected %r in layout %r" % (text[i], text))
            found = re.match(r"\*(\d+)", text[i:])
            if found:
                piece *= int(found.group(1))
                i += found.end()
            out += piece
        return out, i
    plain, end = expand(0)
    if end != len(text):
        raise ValueError("unbalanced parenthesis in layout %r" % text)
    return plain


def layout_stage_layers(layout, pp, vp):
    """Each pipeline rank's transformer layers under a published layout: virtual stage j of rank
    i is chunk j x pp + i (Megatron-Core's interleaved assignment); None when the layout has not
    pp x vp chunks."""
    chunks = expand_layout(layout).split("|")
    if len(chunks) != pp * vp:
        return None
    split = [0] * pp
    for c, chunk in enumerate(chunks):
        split[c % pp] += chunk.count("t")
    return split


def stage_layers(layers, pp, vp):
    """An even split, the remainder taken from the last stage (its head is the heaviest part)."""
    per = math.ceil(layers / pp)
    split = [per] * pp
    split[-1] = layers - per * (pp - 1)
    return split if split[-1] > 0 else None


def cluster_of(hw):
    gpus, per_node = hw["num_gpus"], hw["gpus_per_node"]
    if hw["gpu"] in HOPPER:
        nics, nic = 8, "400Gbps"
    else:
        nics, nic = per_node, "800Gbps" if hw["gpu"] in ("B300", "GB300") else "400Gbps"
    cluster = {"gpu": GPUS[hw["gpu"]], "gpus_per_node": per_node, "num_nodes": gpus // per_node,
               "inter_node": {"fabric": "infiniband", "nics_per_node": nics, "nic_bandwidth": nic,
                              "topology": "rail-optimized"}}
    if hw["gpu"].startswith("GB"):
        cluster["nvlink_domain"] = min(64, gpus)
    return cluster


def case_of(run):
    lay, hw, meas = dict(run["layout"]), run["hardware"], run["measured"]
    recipe = recipe_of(run)
    if recipe:
        for key, value in recipe["fields"].items():
            if lay.get(key) is None:
                lay[key] = value
    correction = CORRECTIONS.get(run["id"])
    if correction:
        lay.update(correction["fields"])
    model, mtp = model_of(run)
    gpus = hw["num_gpus"]
    tp, pp, cp = lay["tp"], lay["pp"], lay["cp"] or 1
    vp = lay["vp"] or 1
    par = {
        "tensor": tp, "pipeline": pp, "data": gpus // (tp * pp * cp), "context": cp,
        "micro_batch_size": lay["mbs"], "global_batch_size": lay["gbs"],
        "virtual_pipeline_stages": vp,
        "schedule": "interleaved-1f1b" if vp > 1 else "1f1b",
        "recompute": recompute_of(lay, recipe)[0],
        "sequence_parallel": tp > 1, "zero_stage": 1,
        "precision": PRECISIONS[lay["precision"]],
        "expert": lay["ep"], "expert_tensor": lay["etp"] or 1,
        "token_dispatcher": DISPATCHERS[lay["token_dispatcher"]],
        "moe_a2a_overlap": bool(lay.get("moe_a2a_overlap")),
    }
    flags = lay.get("other_flags") or {}
    if flags.get("fp8_dot_product_attention") or run["id"] in RELEASE_CODE_RUNS:
        par["fp8_attention"] = True
    modules = recompute_of(lay, recipe)[1]
    if modules and modules != ["core_attn"]:
        par["recompute_modules"] = modules
    if before_memory_efficient_permutation(run):
        par["memory_efficient_permutation"] = False
    optimizer, optimizer_source = recipe_optimizer(run)
    par.update(optimizer)
    layout_split = None
    if not lay.get("stage_layers") and lay.get("pp_layout"):
        layout_split = layout_stage_layers(lay["pp_layout"], pp, vp)
        if layout_split is None or sum(layout_split) != model["num_layers"]:
            return None, "pipeline layout %r does not place %d layers on %d x %d chunks" % (
                lay["pp_layout"], model["num_layers"], pp, vp)
        lay["stage_layers"] = layout_split
    dgxc_split = None if lay.get("stage_layers") else dgxc_deepseek_split(run, pp)
    if dgxc_split:
        lay["stage_layers"] = dgxc_split
    if lay.get("stage_layers"):
        par["stage_layers"] = lay["stage_layers"]
    elif model["num_layers"] % (pp * vp):
        split = stage_layers(model["num_layers"], pp, vp)
        if split is None or any(n < vp for n in split):
            return None, "%d layers do not split over %d x %d chunks" % (model["num_layers"], pp, vp)
        par["stage_layers"] = split
    seq = lay["seq_len"]
    tokens = lay["gbs"] * seq
    if meas.get("step_time_s"):
        time_s = meas["step_time_s"]
        tok = tokens / time_s / gpus
        how = "step time as published"
    else:
        tok = meas.get("tokens_per_sec_per_gpu")
        how = "tokens/s/GPU as published"
        if not tok:
            tok = meas["model_tflops_per_gpu"] * 1e12 / flops_per_token(run["arch"], seq, mtp)
            how = "tokens/s/GPU from the published model TFLOP/s (Megatron-LM FLOPs formula)"
        time_s = tokens / (tok * gpus)
    src = run["source"]
    source = source_text(src, how)
    if recipe:
        source += "; unstated layout fields from " + recipe["source"]
    if correction:
        source += "; layout from the release's code: " + correction["source"]
    if layout_split:
        source += "; layers split as the run's pipeline layout %s places them" % lay["pp_layout"]
    if dgxc_split:
        source += ("; layers split as the release's NeMo (commit 7a8f1cc) "
                   "scripts/performance/llm/pretrain_deepseek_v3.py does: 64 / PP - 1 on the "
                   "first stage, 64 / PP - 2 on the last")
    if optimizer_source:
        source += "; " + optimizer_source
    if run["id"] in RELEASE_CODE_RUNS:
        source += ("; the experts as Transformer Engine's fused grouped MLP and the attention in "
                   "fp8 (the release's src/megatron/bridge/perf_recipes/qwen/common.py "
                   "_enable_hybridep_full_iteration_mxfp8: use_transformer_engine_op_fuser, "
                   "fp8_dot_product_attention; NVTE_CUTEDSL_FUSED_GROUPED_MLP=1)")
    if par.get("memory_efficient_permutation") is False:
        source += ("; the experts' outputs weighed at the un-permutation: the release's NeMo "
                   "(commit 7a8f1cc) pins Megatron-LM core_r0.12.0 (commit 3cdfd613)")
    scenario = {"name": run["id"], "model": model, "cluster": cluster_of(hw), "parallelism": par}
    if hw["gpu"] in BLACKWELL:
        # The stack that ran it, whose Blackwell in-situ factor the case then takes.
        scenario = {"name": run["id"], "stack": STACKS[src["repo"]], **scenario}
    family = "Hopper" if hw["gpu"] in HOPPER else hw["gpu"]
    return {"id": run["id"], "group": "MoE %s (%s)" % (family, run["model"]), "scenario": scenario,
            "measured": {"iteration_time_s": round(time_s, 4), "tokens_per_s_per_gpu": round(tok, 2),
                         "source": source.strip(), "confidence": "medium"}}, ""


def main():
    args = [a for a in sys.argv[1:] if a != "--blackwell"]
    blackwell = GPUS is BLACKWELL
    src = args[0] if args else "data/validation/moe_dev_runs.json"
    out = args[1] if len(args) > 1 else "scenarios/validation/moe-%s.json" % (
        "blackwell" if blackwell else "hopper")
    runs = json.load(open(src))["runs"]
    cases = []
    for run in runs:
        reason = skip_reason(run)
        if reason is None:
            continue
        if not reason:
            try:
                case, reason = case_of(run)
            except (KeyError, TypeError, ValueError) as error:
                # A record of an architecture capsim does not express (a hybrid Mamba stack,
                # sparse attention) lacks or mistypes the fields a case needs: skipped, named.
                case, reason = None, "its record does not give what a case needs (%s: %s)" % (
                    type(error).__name__, error)
            if case:
                cases.append(case)
                continue
        print("skipped %s: %s" % (run["id"], reason))
    write_cases(out, "Generated by scripts/convert-moe-runs.py%s from "
                   "data/validation/moe_dev_runs.json (%s MoE rows). Do not edit by hand."
                % (" --blackwell" if blackwell else "", "Blackwell" if blackwell else "Hopper"),
                cases)


if __name__ == "__main__":
    main()
