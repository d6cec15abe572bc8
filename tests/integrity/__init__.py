"""The adversarial grading-integrity suite: one cheating (or broken) submission per attack, graded in one batch."""
