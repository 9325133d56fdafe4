# Sourced by scripts/fetch-embedder-model.sh and scripts/fetch-embedder-bench-weights.sh: the pinned
# Python packages scripts/build-embedder-onnx.py runs with. The graph's bytes depend on them (its sha256
# is checked in fetch-embedder-model.sh), so both builds use exactly these.
embedder_build_requirements=(numpy==2.4.6 onnx==1.23.2 protobuf==7.36.2 safetensors==0.8.0)
