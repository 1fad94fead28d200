"""Training and evaluation; inference lives in edrew_scrapy.model, and imports nothing from here.

    train.py          read the data, split it, run the steps below, write model folders and cards
    pretrain.py       pre-train the ELMo biLM on reTPS sequences
    head_training.py  train the classifier head on the frozen biLM's outputs
    thresholds.py     validation metrics and the choice of a model's threshold
    support.py        logging, progress bars and learning curves
    evaluate.py       node P/R/F1 and page word-F1 of extractors on labelled pages
    baselines.py      the reTPS baselines the evaluation compares against
"""
