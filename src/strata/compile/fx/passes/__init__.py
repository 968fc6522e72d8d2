"""Graph passes over strata.fx graphs."""
