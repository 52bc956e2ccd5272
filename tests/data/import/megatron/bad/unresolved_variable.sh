#!/bin/bash
# TP comes from the environment, which the file does not set.
torchrun --nproc_per_node 8 pretrain_gpt.py \
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 \
    --seq-length 4096 --vocab-size 32000 --bf16 \
    --tensor-model-parallel-size $TP \
    --micro-batch-size 1 --global-batch-size 64
