"""shardc's passes: verification, propagation, manual-computation checks, analyses, export."""
