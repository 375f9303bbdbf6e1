"""Real Keras application models for tests and benchmarks (needs TensorFlow; imported lazily).

    keras_app_savedmodel("ResNet50", tmp_path / "resnet50")          -> SavedModel directory
    keras_app_frozen_graphdef("ResNet50", tmp_path / "resnet50.pb")  -> frozen GraphDef file

Models are built with `weights=None` (nothing is downloaded) and fixed seeds, at the smallest
input size each application accepts comfortably; the architecture (layers, ops) is the full
one whatever the input size. Building takes seconds to a minute each: keep such tests `slow`.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# name -> (keras.applications attribute, input shape HWC)
APPS: dict[str, tuple[str, tuple[int, int, int]]] = {
    "InceptionV3": ("InceptionV3", (75, 75, 3)),  # minimum size for InceptionV3
    "ResNet50": ("ResNet50", (64, 64, 3)),
    "MobileNetV2": ("MobileNetV2", (96, 96, 3)),
    "NASNetMobile": ("NASNetMobile", (96, 96, 3)),
    "DenseNet121": ("DenseNet121", (64, 64, 3)),
}
SEED = 0


def app_names() -> list[str]:
    return list(APPS)


def _resolve(name: str) -> tuple[str, tuple[int, int, int]]:
    for key, value in APPS.items():
        if key.lower() == name.lower():
            return value
    raise ValueError(f"unknown Keras application {name!r}; known: {', '.join(APPS)}")


def build_keras_app(name: str):
    """The Keras model (weights=None, fixed seed), and its input shape (H, W, C)."""
    import keras

    attr, shape = _resolve(name)
    keras.backend.clear_session()
    keras.utils.set_random_seed(SEED)
    model = getattr(keras.applications, attr)(weights=None, input_shape=shape)
    return model, shape


def keras_app_savedmodel(name: str, out_dir: str | os.PathLike, *, batch_size: int | None = None) -> Path:
    """Save the application as a TF2 SavedModel (with debug info) with a `serving_default`
    signature taking `input` [batch_size, H, W, C] float32 and returning `{"output": ...}`."""
    import tensorflow as tf

    model, shape = build_keras_app(name)
    out = Path(out_dir)

    @tf.function(
        input_signature=[tf.TensorSpec([batch_size, *shape], tf.float32, name="input")],
        autograph=False,
    )
    def serve(x):
        return {"output": model(x, training=False)}

    tf.saved_model.save(
        model,
        str(out),
        signatures={"serving_default": serve},
        options=tf.saved_model.SaveOptions(save_debug_info=True),
    )
    return out


def keras_app_frozen_graphdef(name: str, out_path: str | os.PathLike, *, batch_size: int = 1) -> Path:
    """Write the application's inference function, variables folded into Consts by
    `convert_variables_to_constants_v2`, as a binary GraphDef (input `input`, static shape)."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    model, shape = build_keras_app(name)
    def infer(x):
        return model(x, training=False)

    fn = tf.function(infer, autograph=False)
    concrete = fn.get_concrete_function(tf.TensorSpec([batch_size, *shape], tf.float32, name="input"))
    frozen = convert_variables_to_constants_v2(concrete)
    graph_def = frozen.graph.as_graph_def()
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(graph_def.SerializeToString(deterministic=True))
    return out
