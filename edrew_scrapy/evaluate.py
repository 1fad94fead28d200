"""Old import path of the evaluation metrics; see edrew_scrapy/training/evaluate.py."""
from .training.evaluate import (
    PageResult,
    all_nodes_extractor,
    evaluate_pages,
    format_table,
    node_counts,
    oracle_extractor,
    predicted_text,
    predictor_extractor,
    prf,
    readability_extractor,
    reference_text,
    scorer_extractor,
    summarize,
    trafilatura_extractor,
    word_f1,
    write_report,
)

__all__ = ["PageResult", "all_nodes_extractor", "evaluate_pages", "format_table", "node_counts", "oracle_extractor",
           "predicted_text", "predictor_extractor", "prf", "readability_extractor", "reference_text",
           "scorer_extractor", "summarize", "trafilatura_extractor", "word_f1", "write_report"]
