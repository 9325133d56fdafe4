"""Builds the embedder's ONNX graph of all-MiniLM-L6-v2 from the sentence-transformers float32 weights.

    python3 build-embedder-onnx.py <model.safetensors> <onnx folder> [--q8]

Writes `model.onnx` + `model.onnx_data` (float32, what the platform runs: activities/embedding/config.ts)
into the folder; with --q8 also `model_quantized.onnx` (8-bit, dynamically quantized with onnxruntime;
measured by `npm run bench -- embedder`, not used by the platform). Called by
scripts/fetch-embedder-model.sh, which checks the outputs' sha256.

Why build it: no package registry ships an fp32 ONNX export, and the exports that exist (onnx-community's
q4, an int8 one on PyPI) are plain operator graphs that onnxruntime runs slower. This one states BERT with
onnxruntime's fused CPU kernels (com.microsoft Attention, SkipLayerNormalization, BiasGelu): the same
arithmetic as the original in float32, and on a 2-core x86 machine 1.6x the int8 export's chunks/s
(docs/performance.md). Inputs and output are the Transformers.js feature-extraction contract:
input_ids, attention_mask, token_type_ids (int64, [batch, sequence]) -> last_hidden_state.

Deterministic: the same weights and pinned onnx version give the same bytes (only transposes and
concatenations of the original tensors; nothing is computed in floating point).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

HIDDEN, HEADS, LAYERS, EPSILON = 384, 12, 6, 1e-12


class Graph:
    def __init__(self):
        self.nodes, self.initializers = [], []

    def weight(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=array.dtype), name))
        return name

    def op(self, op_type, inputs, output, domain="", **attributes):
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=output, domain=domain, **attributes))
        return output


def build(weights):
    g = Graph()
    e = "embeddings."
    # Token + position + segment embeddings; positions are the first sequence_length rows of the table.
    g.weight("zero", np.array([0], np.int64))
    g.op("Shape", ["input_ids"], "sequence_length", start=1, end=2)
    words = g.op("Gather", [g.weight("word_embeddings", weights[e + "word_embeddings.weight"]), "input_ids"], "words")
    positions = g.op("Slice", [g.weight("position_embeddings", weights[e + "position_embeddings.weight"]), "zero", "sequence_length", "zero"], "positions")
    segments = g.op("Gather", [g.weight("token_type_embeddings", weights[e + "token_type_embeddings.weight"]), "token_type_ids"], "segments")
    summed = g.op("Add", [g.op("Add", [words, positions], "words_positions"), segments], "embedding_sum")
    x = g.op("LayerNormalization", [summed, g.weight("embeddings_ln_gamma", weights[e + "LayerNorm.weight"]), g.weight("embeddings_ln_beta", weights[e + "LayerNorm.bias"])], "embedded", axis=-1, epsilon=EPSILON)
    # Attention takes the raw 0/1 mask as int32 [batch, sequence]: padded keys get no attention.
    mask = g.op("Cast", ["attention_mask"], "mask_int32", to=TensorProto.INT32)

    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        a = p + "attention."
        # PyTorch Linear stores [out, in]; MatMul wants [in, out]. Q, K and V side by side for Attention.
        qkv_weight = np.concatenate([weights[a + f"self.{n}.weight"].T for n in ("query", "key", "value")], axis=1)
        qkv_bias = np.concatenate([weights[a + f"self.{n}.bias"] for n in ("query", "key", "value")])
        attended = g.op("Attention", [x, g.weight(f"l{i}_qkv_w", qkv_weight), g.weight(f"l{i}_qkv_b", qkv_bias), mask], f"l{i}_attention", domain="com.microsoft", num_heads=HEADS)
        projected = g.op("MatMul", [attended, g.weight(f"l{i}_ao_w", weights[a + "output.dense.weight"].T)], f"l{i}_attention_out")
        # SkipLayerNormalization(input, skip, gamma, beta, bias) = LayerNorm(input + bias + skip).
        x1 = g.op("SkipLayerNormalization", [projected, x, g.weight(f"l{i}_aln_g", weights[a + "output.LayerNorm.weight"]), g.weight(f"l{i}_aln_b", weights[a + "output.LayerNorm.bias"]), g.weight(f"l{i}_ao_b", weights[a + "output.dense.bias"])], f"l{i}_x1", domain="com.microsoft", epsilon=EPSILON)
        up = g.op("MatMul", [x1, g.weight(f"l{i}_in_w", weights[p + "intermediate.dense.weight"].T)], f"l{i}_in")
        activated = g.op("BiasGelu", [up, g.weight(f"l{i}_in_b", weights[p + "intermediate.dense.bias"])], f"l{i}_gelu", domain="com.microsoft")  # erf GELU, as BERT's
        down = g.op("MatMul", [activated, g.weight(f"l{i}_out_w", weights[p + "output.dense.weight"].T)], f"l{i}_out")
        output = "last_hidden_state" if i == LAYERS - 1 else f"l{i}_x"
        x = g.op("SkipLayerNormalization", [down, x1, g.weight(f"l{i}_oln_g", weights[p + "output.LayerNorm.weight"]), g.weight(f"l{i}_oln_b", weights[p + "output.LayerNorm.bias"]), g.weight(f"l{i}_out_b", weights[p + "output.dense.bias"])], output, domain="com.microsoft", epsilon=EPSILON)

    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch_size", "sequence_length"]) for name in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch_size", "sequence_length", HIDDEN])]
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", inputs, outputs, g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)], producer_name="agent-platform")
    model.ir_version = 8  # what the onnxruntime-node the platform ships with reads
    onnx.checker.check_model(model)
    return model


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    safetensors_path, folder = args
    model = build(load_file(safetensors_path))
    if "--q8" in sys.argv:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        # The quantizer reads a file with the weights inline (saved before the external-data save below
        # moves them out of `model`); per-channel int8 weights, activations quantized per call.
        inline = os.path.join(folder, "model_inline.onnx")
        onnx.save(model, inline)
        quantize_dynamic(inline, os.path.join(folder, "model_quantized.onnx"), weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul", "Attention"], extra_options={"DefaultTensorType": TensorProto.FLOAT})
        os.remove(inline)
    # External data, as Transformers.js expects for model.onnx (the model's config.json says so).
    onnx.save(model, os.path.join(folder, "model.onnx"), save_as_external_data=True, all_tensors_to_one_file=True, location="model.onnx_data", size_threshold=1024)

if __name__ == "__main__":
    main()
