"""Per-model analysis context: the model, the target, and each analysis computed once."""

from __future__ import annotations

from functools import cached_property

from .model import Model
from .settings import Settings


class Context:
    def __init__(self, model: Model, settings: Settings):
        self.model = model
        self.graph = model.graph
        self.settings = settings
        self.devices = settings.devices
        self.allow_soft_placement = settings.allow_soft_placement

    @cached_property
    def placement(self):
        from .analyses.placer import place
        return place(self.graph, self.devices, allow_soft_placement=self.allow_soft_placement)
