"""Statistics over scores: AUROC with bootstrap intervals, TPR at low FPR, tests, the blind baseline, ensembles."""
