"""Scoring shared by the trainers and the evaluations: routing decisions, their metrics against the
oracle, the gap to the best random mix of single models (`vs_mix`, the headline), the paired bootstrap,
and the built-in baselines.

It imports neither `local` nor `evaluate`, so both (and `anypool`, `evaluate_anypool`) build on it.
"""
