"""PL001 unreadable-model: reported by the loader (see rules/PL001-unreadable-model.md)."""

from ..diagnostics import Severity
from .base import LoaderRule


class UnreadableModel(LoaderRule):
    code = "PL001"
    name = "unreadable-model"
    severity = Severity.ERROR
    summary = "The file cannot be read as a GraphDef, MetaGraphDef or SavedModel."

    @staticmethod
    def unparsable(error) -> str:
        """The message for a binary file no kind of model parses (``error``: protobuf's
        first complaint, if any): the loader's, and a large GraphDef's whose chunk of
        nodes protobuf refuses (``loaders.chunked``)."""
        detail = f" ({error})" if error else ""
        return ("not a GraphDef, MetaGraphDef or SavedModel: the file is corrupt, truncated, "
                f"or another format{detail}")


RULE = UnreadableModel
