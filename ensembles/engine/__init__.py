"""The numba tree engine: arrays in, arrays out. It knows nothing of scikit-learn."""
