"""Builds the embedder's ONNX graphs of all-MiniLM-L6-v2 from the sentence-transformers float32 weights.

    python3 build-embedder-onnx.py <model.safetensors> <onnx folder>

Writes into the folder:
- `model_quantized.onnx` (dtype q8, what the platform runs: activities/embedding/config.ts): 8-bit
  arithmetic with the original's retrieval, below;
- `model.onnx` + `model.onnx_data` (dtype fp32): the same function in float32, for the benchmarks.
Called by scripts/fetch-embedder-model.sh, which checks the outputs' sha256.

Why build them: no package registry ships an fp32 ONNX export, and the exports that exist (onnx-community's
q4, an int8 one on PyPI) are plain operator graphs that onnxruntime runs slower. These state BERT with
onnxruntime's fused CPU kernels (com.microsoft Attention or MultiHeadAttention, SkipLayerNormalization,
BiasGelu). Inputs and output are the Transformers.js feature-extraction contract: input_ids,
attention_mask, token_type_ids (int64, [batch, sequence]) -> last_hidden_state.

The 8-bit graph. onnxruntime's own dynamic quantization scales a MatMul's whole input by one number, and
this model's hidden state has a few channels (ACTIVATION_OUTLIERS) up to 15x the others in every layer,
so the others lost most of their precision (recall@5 against the original 0.85). Here:
- every MatMul's input is quantized per token (a row's own scale) and its weights per output column,
  both to uint8 around 128, computed by MatMulIntegerToFloat and scaled back per row;
- the outlier channels of the inputs to the Q/K/V and feed-forward projections bypass the 8 bits: their
  values are multiplied in float32 by their rows of the weights (removed from the 8-bit ones) and the
  product added back, so they neither lose precision nor set the row's scale;
- Q, K and V are three MatMuls of one quantized input, feeding MultiHeadAttention.
On 1,000-character chunks its vectors are within cosine 0.999 of the original's (recall@5 against it
0.956-0.979, about the int8 export's) at 2.2-2.5x the chunks/s of the q4 file and ~1.7x those of the
float32 graph (`npm run bench -- embedder`, docs/performance.md).

Deterministic: the same weights and pinned numpy/onnx give the same bytes (the float32 graph holds
transposes and concatenations of the original tensors; the 8-bit one adds float32 maxima, divisions and
round-half-even, which IEEE arithmetic gives the same on every machine). The outlier channels are data,
measured once (below), so the build needs no calibration texts and no onnxruntime.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

HIDDEN, HEADS, LAYERS, EPSILON = 384, 12, 6, 1e-12

# The outlier channels, measured by running the float32 graph over ~250 chunks and sentences of npm
# package READMEs: a channel is one when its largest magnitude is over 3x the median channel's. The
# hidden state (what the Q/K/V and feed-forward up-projections read) has the same ones in every layer,
# up to 15x (99) and 8x (223, 127), and its [CLS] row more of its own (246, 125, 94, 29, ... up to 20x
# that row's median; 99 there reaches 340x); the feed-forward down-projection's input (after GELU) has
# its own per layer, at most eight each (the largest 4-15x).
ACTIVATION_OUTLIERS = [29, 63, 81, 94, 99, 125, 127, 157, 223, 238, 246, 267, 280, 303, 319, 338, 347, 359]
FEED_FORWARD_OUTLIERS = [
    [329, 691, 829, 856, 1163, 1170, 1337, 1383],
    [251, 505, 607, 821],
    [218, 1004, 1265],
    [201, 358, 750, 759],
    [192, 637, 682, 716, 1031, 1097, 1321, 1357],
    [1302],
]
# Activations and weights are both uint8 around 128 (symmetric: -127..127 stored as 1..255). Weights
# stored as int8 would be faster nowhere and wrong on x86 CPUs without VNNI: onnxruntime multiplies
# uint8 by int8 there with VPMADDUBSW, which adds each two products into a saturating int16, and
# 2 x 255 x 127 does not fit; its uint8 x uint8 kernels widen to 16 bits first. So every CPU computes the
# same integers (on this VNNI machine both ran at the same speed).
STEPS, ZERO_POINT = 127, 128


class Graph:
    def __init__(self):
        self.nodes, self.initializers = [], []

    def weight(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=array.dtype), name))
        return name

    def op(self, op_type, inputs, output, domain="", **attributes):
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=output, domain=domain, **attributes))
        return output


class QuantizedInput:
    """A MatMul input quantized per token to uint8 around 128, shared by the MatMuls that read it."""

    def __init__(self, g, x, name, width, outliers=()):
        self.g, self.width = g, width
        self.outliers = np.array(outliers, np.int64)
        # Each row's scale: its largest magnitude over 127. Outlier channels may saturate: their 8-bit
        # weights are zero, and their float32 values are taken apart first.
        if len(self.outliers):
            kept = np.ones(width, np.float32)
            kept[self.outliers] = 0
            self.outlier_values = g.op("Reshape", [g.op("Gather", [x, g.weight(name + "_outlier_channels", self.outliers)], name + "_outliers", axis=2), g.weight(name + "_outlier_rows", np.array([-1, len(self.outliers)], np.int64))], name + "_outlier_matrix")
            scale_source = g.op("Mul", [x, g.weight(name + "_kept", kept)], name + "_kept_values")
        else:
            scale_source = x
        largest = g.op("ReduceMax", [g.op("Abs", [scale_source], name + "_magnitudes")], name + "_largest", axes=[-1], keepdims=0)
        scale = g.op("Div", [g.op("Max", [largest, g.weight(name + "_tiny", np.array(1e-8, np.float32))], name + "_largest_nonzero"), g.weight(name + "_steps", np.array(STEPS, np.float32))], name + "_scale")
        rows_scale = g.op("Reshape", [scale, g.weight(name + "_flat", np.array([-1], np.int64))], name + "_row_scales")
        # QuantizeLinear per row (axis 0 of the [tokens, width] matrix) wants one zero point per row.
        zero_points = g.op("Cast", [g.op("Add", [g.op("Mul", [rows_scale, g.weight(name + "_zero", np.array(0.0, np.float32))], name + "_zeros"), g.weight(name + "_zero_point_value", np.array(ZERO_POINT, np.float32))], name + "_zero_points_float")], name + "_zero_points", to=TensorProto.UINT8)
        matrix = g.op("Reshape", [x, g.weight(name + "_matrix_shape", np.array([-1, width], np.int64))], name + "_matrix")
        self.quantized = g.op("QuantizeLinear", [matrix, rows_scale, zero_points], name + "_quantized", axis=0)
        self.column_scale = g.op("Reshape", [scale, g.weight(name + "_column", np.array([-1, 1], np.int64))], name + "_column_scale")
        self.leading_shape = g.op("Shape", [x], name + "_leading_shape", start=0, end=2)

    def matmul(self, weights, name):
        """x @ weights ([width, out]) as float32 of x's [batch, sequence] shape."""
        g, out = self.g, weights.shape[1]
        weights = np.array(weights, np.float32)
        outlier_rows = weights[self.outliers, :]
        weights[self.outliers, :] = 0
        column_scales = np.maximum(np.abs(weights).max(axis=0), np.float32(1e-12)) / np.float32(STEPS)
        uint8 = (np.clip(np.round(weights / column_scales), -STEPS, STEPS) + ZERO_POINT).astype(np.uint8)
        zero_point = g.weight(name + "_zero_point", np.array(ZERO_POINT, np.uint8))
        y = g.op("MatMulIntegerToFloat", [self.quantized, g.weight(name + "_uint8", uint8), g.weight(name + "_one", np.array(1.0, np.float32)), g.weight(name + "_column_scales", column_scales.astype(np.float32)), zero_point, g.weight(name + "_weight_zero_points", np.full(out, ZERO_POINT, np.uint8))], name + "_integer_product", domain="com.microsoft")
        y = g.op("Mul", [y, self.column_scale], name + "_rescaled")
        if len(self.outliers):
            # Gemm's C input: the outliers' float32 product is added as it is written, not in a pass of its own.
            y = g.op("Gemm", [self.outlier_values, g.weight(name + "_outlier_weights", outlier_rows), y], name + "_with_outliers")
        return g.op("Reshape", [y, g.op("Concat", [self.leading_shape, g.weight(name + "_width", np.array([out], np.int64))], name + "_shape", axis=0)], name)


def build(weights, quantized=False):
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

    def quantized_linear(x, matrix, name, outliers=()):
        return QuantizedInput(g, x, name + "_input", matrix.shape[0], outliers).matmul(matrix, name)

    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        a = p + "attention."
        # PyTorch Linear stores [out, in]; MatMul wants [in, out]. Q, K and V side by side for Attention.
        qkv = [weights[a + f"self.{n}.weight"].T for n in ("query", "key", "value")]
        qkv_bias = np.concatenate([weights[a + f"self.{n}.bias"] for n in ("query", "key", "value")])
        if quantized:
            read = QuantizedInput(g, x, f"l{i}_qkv_input", HIDDEN, ACTIVATION_OUTLIERS)
            q, k, v = (read.matmul(matrix, f"l{i}_{n}") for matrix, n in zip(qkv, ("query", "key", "value")))
            attended = g.op("MultiHeadAttention", [q, k, v, g.weight(f"l{i}_qkv_b", qkv_bias), mask], f"l{i}_attention", domain="com.microsoft", num_heads=HEADS)
            projected = quantized_linear(attended, weights[a + "output.dense.weight"].T, f"l{i}_attention_out")
        else:
            attended = g.op("Attention", [x, g.weight(f"l{i}_qkv_w", np.concatenate(qkv, axis=1)), g.weight(f"l{i}_qkv_b", qkv_bias), mask], f"l{i}_attention", domain="com.microsoft", num_heads=HEADS)
            projected = g.op("MatMul", [attended, g.weight(f"l{i}_ao_w", weights[a + "output.dense.weight"].T)], f"l{i}_attention_out")
        # SkipLayerNormalization(input, skip, gamma, beta, bias) = LayerNorm(input + bias + skip).
        x1 = g.op("SkipLayerNormalization", [projected, x, g.weight(f"l{i}_aln_g", weights[a + "output.LayerNorm.weight"]), g.weight(f"l{i}_aln_b", weights[a + "output.LayerNorm.bias"]), g.weight(f"l{i}_ao_b", weights[a + "output.dense.bias"])], f"l{i}_x1", domain="com.microsoft", epsilon=EPSILON)
        if quantized:
            up = quantized_linear(x1, weights[p + "intermediate.dense.weight"].T, f"l{i}_in", ACTIVATION_OUTLIERS)
        else:
            up = g.op("MatMul", [x1, g.weight(f"l{i}_in_w", weights[p + "intermediate.dense.weight"].T)], f"l{i}_in")
        activated = g.op("BiasGelu", [up, g.weight(f"l{i}_in_b", weights[p + "intermediate.dense.bias"])], f"l{i}_gelu", domain="com.microsoft")  # erf GELU, as BERT's
        if quantized:
            down = quantized_linear(activated, weights[p + "output.dense.weight"].T, f"l{i}_out", FEED_FORWARD_OUTLIERS[i])
        else:
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
    weights = load_file(safetensors_path)
    # Inline (~60 MB, under protobuf's 2 GB): Transformers.js reads q8 as one file.
    onnx.save(build(weights, quantized=True), os.path.join(folder, "model_quantized.onnx"))
    # External data, as Transformers.js expects for model.onnx (the model's config.json says so). onnx
    # appends to a data file that is there already, so an earlier build's is removed first.
    data = os.path.join(folder, "model.onnx_data")
    if os.path.exists(data):
        os.remove(data)
    onnx.save(build(weights), os.path.join(folder, "model.onnx"), save_as_external_data=True, all_tensors_to_one_file=True, location="model.onnx_data", size_threshold=1024)


if __name__ == "__main__":
    main()
